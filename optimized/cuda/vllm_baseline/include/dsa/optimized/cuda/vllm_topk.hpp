// vLLM's decode top-k built from vLLM's source (vllm_baseline/README.md), a
// baseline of the speed table and the fuzzer; only in builds with
// DSA_VLLM_BASELINE.
#pragma once

#include <cstdint>
#include <memory>

#include "dsa/indexer_ops.hpp"

namespace dsa::cuda {

// vLLM's host function on device pointers: logits [rows][columns] row-major,
// seq_lens [rows / next_n] (1-D) or [rows] (2-D), indices [rows][k].
void vllm_top_k_per_row_decode(const float* logits, int64_t rows, int64_t columns, int64_t next_n,
                               const int32_t* seq_lens, bool seq_lens_2d, int32_t* indices, int64_t k, void* stream);

// vLLM's persistent_topk op (vllm_persistent_topk.cu), its dispatch included: persistent_topk_kernel
// for at most 32 rows, FilteredTopK for more. lengths [rows] (every row starts at column 0),
// max_seq_len their maximum (vLLM's argument: it tells the launch whether a row takes the
// multi-block radix path, rows over 32768 columns), indices [rows][k], a workspace of
// vllm_persistent_topk_workspace_bytes() device bytes. It takes the k of vllm_persistent_topk_takes
// (512, 1024, 2048) and throws std::invalid_argument for another.
bool vllm_persistent_topk_takes(int64_t k);
int64_t vllm_persistent_topk_workspace_bytes();
void vllm_persistent_topk(const float* logits, int64_t rows, int64_t columns, const int32_t* lengths,
                          int64_t max_seq_len, int32_t* indices, int64_t k, void* workspace, void* stream);

// The same behind IndexerOps: the topk op on decode rows (every row starting at column 0).
std::unique_ptr<IndexerOps> make_vllm_topk_ops();

}  // namespace dsa::cuda
