// The kernel arguments of the gfx942 launches: plain structs shared by the
// host launchers (optimized/hip/src) and the kernels (optimized/hip/kernels),
// passed by value as each kernel's one argument. Pointers are device pointers.
#pragma once

#include <cstdint>

#include "dsa/common/select/topk_tree.hpp"
#include "dsa/common/select/tree_plan.hpp"

namespace dsa::gfx942 {

// Decode rows r = b * next_n + j over a preshuffle cache (D = 128, e4m3fnuz).
struct DecodeRows {
  const uint8_t* q = nullptr;             // [B][next_n][H][128] fp8
  const float* weights = nullptr;         // [B * next_n][H]
  const int32_t* seq_lens = nullptr;      // [B] (1-D) or [B][next_n] (2-D)
  const int32_t* block_table = nullptr;   // [B][max_pages]
  const uint8_t* kv_cache = nullptr;      // [num_pages][page_size * 132]
  int64_t num_pages = 0;
  int32_t batch = 0;
  int32_t next_n = 0;
  int32_t max_pages = 0;
  int32_t page_size = 0;
  int32_t seq_lens_2d = 0;
};

struct PagedLogitsParams {
  DecodeRows rows;
  float* logits = nullptr;  // [B * next_n][logits_stride]
  int64_t logits_stride = 0;
  int64_t width = 0;        // columns the kernel may write (max_model_len)
  int32_t tiles_per_block = 0;
};

struct CandidateLogitsTopkParams {
  DecodeRows rows;
  const int32_t* candidate_blocks = nullptr;  // [B * next_n][slots], -1 empty
  int32_t slots = 0;
  int32_t candidate_block_size = 0;           // S, a divisor of 16
  float* compact = nullptr;                   // [B * next_n][slots * S]
  int32_t* topk = nullptr;                    // [B * next_n][topk_stride], k written per row
  int64_t topk_stride = 0;
  int32_t k = 0;
  int32_t tiles_per_block = 0;                // 16-column tiles of a compact row per block
  uint32_t* row_done = nullptr;               // [B * next_n] zeroed counters (the last block selects)
  common::select::TreePlan plan;              // the selection of a compact row (kFusedSelectCapacity a leaf)
  uint64_t* slots_workspace = nullptr;        // its node slots [B * next_n][plan.nodes_per_row][k]
  uint32_t* counters = nullptr;               // its arrivals [B * next_n][plan.nodes_per_row], zero
};

}  // namespace dsa::gfx942

namespace dsa::gfx942 {

// The selection launches run the shared TreeTopK of optimized/common/select
// (device/select/tree.hpp); these are its kernel arguments and block shape.
inline constexpr int kSelectThreads = 512;  // 8 waves
inline constexpr int kSelectItems = 16;     // keys a thread holds
inline constexpr int kSelectCapacity = kSelectThreads * kSelectItems;
// The fused launch selects inside its 4-wave logits blocks (one block per row).
inline constexpr int kFusedSelectCapacity = 256 * kSelectItems;
// The padding and mask kernels.
inline constexpr int kRowThreads = 256;
// The mask's candidate bitmap: dynamic LDS, at most a workgroup's 64 KiB.
inline constexpr int kMaskBitmapBytes = 64 * 1024;

template <class Source>
struct TreeParams {
  Source src;
  common::select::TreePlan plan;
  common::select::TreeOutput out;
};

// Rows of dense decode logits [rows][logits_stride] with their lengths as
// vLLM's decode metadata gives them: L_r for the top-k, E_r for the candidate
// ops (SPEC 7: with 1-D lengths every row of a request sees the request's
// full length). Lengths past `width` are clamped to it (common::RowSpan).
struct LogitsRows {
  const float* logits = nullptr;
  int64_t logits_stride = 0;
  int64_t width = 0;                  // columns of a row the launch may read
  const int32_t* seq_lens = nullptr;  // [B] (1-D) or [B][next_n] (2-D)
  int32_t rows = 0;
  int32_t next_n = 0;
  int32_t seq_lens_2d = 0;
};

}  // namespace dsa::gfx942
