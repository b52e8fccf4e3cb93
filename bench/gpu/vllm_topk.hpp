// vLLM's decode top-k (vllm_topk.cu), on device pointers: logits [rows][columns]
// row-major, seq_lens [rows / next_n] (1-D) or [rows] (2-D), indices [rows][k].
#pragma once

#include <cstdint>

namespace dsa::bench {

void vllm_top_k_per_row_decode(const float* logits, int64_t rows, int64_t columns, int64_t next_n,
                               const int32_t* seq_lens, bool seq_lens_2d, int32_t* indices, int64_t k,
                               void* stream);

}  // namespace dsa::bench
