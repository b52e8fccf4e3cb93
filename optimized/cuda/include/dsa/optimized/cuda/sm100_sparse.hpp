// The SM100 sparse backend (SPEC 7 "the SM100 sparse form"; the seed sparse_indexer_backend_sm100)
// on device pointers: the candidate expansion into sparse block ids and `end`, the bf16 sparse
// MXFP4 (or e4m3) logits on block-scaled tcgen05, and the top-k over each row's [0, end) remapped
// to positions, on the shared selection kernel (docs/cuda_sm100.md).
//
// SparseBackend is the seed's metadata builder: it checks every requirement of the sparse kernels
// once, when it is made (the engine start), and allocates the per-row scratch once; each step then
// expands into that scratch, every consumer layer of the step reads it, and nothing is allocated
// or re-checked per step. The expansion is plain CUDA (built for sm_90a and sm_100a, run on the
// H200); the logits kernel is sm_100a only and has never run (no B200 here).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "dsa/kcache.hpp"

namespace dsa::cuda {

// The sizes one expansion or top-k launch takes.
struct SparseRows {
  int64_t rows = 0;
  int32_t slots = 0;           // candidate blocks per row
  int32_t block_size = 0;      // S, the candidate block size
  int32_t sparse_block_kv = 0;  // SBK: 16 or 8, dividing S
  int32_t num_sparse() const { return slots * (block_size / sparse_block_kv); }
  int64_t width() const { return int64_t(num_sparse()) * sparse_block_kv; }
};

// The most candidate blocks per row the expansion sorts in one block.
inline constexpr int32_t kExpandMaxSlots = 4096;

// Candidate blocks [rows][slots] (-1 empty) and row bounds [ks, ke) into sorted unique sparse
// block ids [rows][num_sparse] (shifted by ks / SBK, unused slots repeating the last valid id) and
// end [rows] (valid sparse columns): reference expand_candidate_blocks, bit for bit. Refuses
// (Unsupported) slots beyond kExpandMaxSlots and an SBK that does not divide S.
void launch_expand_candidates(const SparseRows& shape, const int32_t* candidates, const int32_t* row_ks,
                              const int32_t* row_ke, int32_t* sparse_ids, int32_t* end, void* stream);

// The top k (k <= 4096) of each row's sparse columns [0, end[r]) of bf16 logits [rows][width]
// (DeepSelect's order: larger first; ties to the lower column; NaN above +inf), remapped to
// positions relative to ks: column j * SBK + o -> (id_j - ks / SBK) * SBK + o; -1 after the
// chosen. `workspace` is sparse_topk_workspace_bytes(...) bytes, zero before the first launch
// (every launch leaves it zero).
size_t sparse_topk_workspace_bytes(const SparseRows& shape, int32_t k);
void launch_sparse_topk(const SparseRows& shape, int32_t k, const uint16_t* logits_bf16, const int32_t* sparse_ids,
                        const int32_t* end, const int32_t* row_ks, void* workspace, int32_t* topk, void* stream);

// A decode step of the sparse logits: one query per row (vLLM's varlen layout), an MXFP4 cache
// (per page block_size * D / 2 bytes of e2m1, then one int32 of D / 32 ue8m0 bytes per token) or an
// e4m3fn block-flat cache (fp32 scale per token); bf16 weights.
struct SparseLogitsStep {
  int64_t rows = 0;
  int32_t next_n = 1;  // rows per request: row r reads block_table row r / next_n
  int32_t heads = 0, head_dim = 0;
  ElementFormat element = ElementFormat::mxfp4;
  const uint8_t* q = nullptr;         // [rows, H, D / 2] e2m1 pairs, or [rows, H, D] e4m3fn
  const uint8_t* q_scales = nullptr;  // [rows, H] words of D / 32 ue8m0 bytes, unused bytes 0 (MXFP4 only)
  const uint16_t* weights = nullptr;  // [rows, H] bf16
  const int32_t* block_table = nullptr;  // [rows / next_n, max_pages]
  int32_t max_pages = 0;
  const uint8_t* cache = nullptr;
  int32_t num_pages = 0, block_size = 0;
};

// bf16 logits [rows][width]: column j * SBK + o = the logit of entry id_j * SBK + o
// (deepgemm_sm100_bf16), for columns below end[r]; the rest is left as it is. sm_100a only:
// Unsupported on any other device.
void launch_sm100_sparse_logits(const SparseLogitsStep& step, const SparseRows& shape, const int32_t* sparse_ids,
                                const int32_t* end, uint16_t* logits, void* stream);

// What the backend is made for: the model (candidate blocks, top-k), the indexer cache and the
// most rows of a step.
struct SparseBackendConfig {
  int32_t candidate_block_size = 0;   // 0 = not a two-level (candidate block) model
  int32_t candidate_topk_blocks = 0;
  int32_t topk_tokens = 0;
  ElementFormat cache_element = ElementFormat::mxfp4;
  int32_t page_size = 0;  // indexer cache page (entries)
  int32_t heads = 0, head_dim = 0;
  int64_t max_rows = 0;
  // The sparse logits run only on SM100. false makes a backend of the plain CUDA part only (what
  // runs on an H200); the logits then refuse.
  bool sparse_logits = true;
};

// The layout the checks derive, before any device work.
struct SparseLayout {
  int32_t sparse_block_kv = 0;
  int32_t num_sparse_blocks = 0;  // per row
  int64_t num_sparse_columns = 0;
};

// Every requirement of the seed's builder on the configuration, in its order: a candidate model,
// the MXFP4 cache, H and D, pages a multiple of SBK, DeepSelect's layout (k in [1, 4096], rows at
// least k sparse columns wide). Throws InvalidInput naming the setting. The constructor of
// SparseBackend calls it, then checks the device (Unsupported: an SM100 GPU for the logits).
SparseLayout check_sparse_backend(const SparseBackendConfig& config);

class SparseBackend {
public:
  explicit SparseBackend(const SparseBackendConfig& config);  // checks, then allocates the scratch once
  ~SparseBackend();
  SparseBackend(const SparseBackend&) = delete;
  SparseBackend& operator=(const SparseBackend&) = delete;

  const SparseLayout& layout() const;
  // One step of `rows` rows (<= max_rows): candidates [rows][candidate_topk_blocks] and row bounds
  // into the scratch (the first consumer layer of the step).
  void expand(int64_t rows, const int32_t* candidates, const int32_t* row_ks, const int32_t* row_ke, void* stream);
  // Every consumer layer: its logits [rows][num_sparse_columns] and its top-k [rows][topk_tokens],
  // both from the step's scratch.
  void logits(const SparseLogitsStep& step, uint16_t* out, void* stream) const;
  void topk(int64_t rows, const uint16_t* logits, const int32_t* row_ks, int32_t* out, void* stream);
  const int32_t* sparse_ids() const;  // [max_rows][num_sparse_blocks]
  const int32_t* end() const;         // [max_rows]

private:
  SparseRows step_shape(int64_t rows) const;
  struct Scratch;
  SparseBackendConfig config_;
  SparseLayout layout_;
  std::unique_ptr<Scratch> scratch_;
  int64_t step_rows_ = -1;  // rows of the step expanded last
};

}  // namespace dsa::cuda
