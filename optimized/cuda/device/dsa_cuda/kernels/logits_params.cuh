// The parameters of the SM90 logits kernels (host and device), passed by value as a
// __grid_constant__ so that the tensor maps stay in parameter space for the copy engine.
//
// Work is cut into units of 64 K entries (one wgmma M tile) inside segments: a segment shares
// one group of query rows (their Q and weights are loaded once per segment).
//   paged:   segment = request b (its next_n rows); unit k = page k of the request
//   compact: segment = row r (one query row); unit k = candidate slots [k * 64/S, (k+1) * 64/S)
//   prefill: segment = a group of query rows; unit k = entries [64 (first_tile + k), +64)
#pragma once

#include <cuda.h>
#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/row_span.hpp"

namespace dsa::cuda::kernels {

enum class LogitsMode : int32_t { paged = 0, compact = 1, prefill = 2 };

struct LogitsParams {
  CUtensorMap q_map;  // 2-D (D, rows * H) fp8, box (D, group_rows * H), swizzled rows of D bytes
  CUtensorMap w_map;  // 2-D (H, rows) fp32, box (H, group_rows)
  CUtensorMap k_map;  // paged/compact: 3-D (D, 64, pages) box (D, block, 1); prefill: 2-D (D, N) box (D, 64)
  CUtensorMap s_map;  // prefill: 2-D (N, 1) fp32 box (64, 1) (paged/compact copy a page's scales in bulk from `cache`)

  int32_t num_segments = 0;
  int32_t group_rows = 1;           // G: query rows per segment
  int32_t block = 64;               // entries loaded per copy: 64 (paged, prefill) or the candidate block S
  int32_t stages = 2;               // shared-memory ring depth
  const int32_t* unit_prefix = nullptr;  // [num_segments + 1], made by the schedule kernel
  const int32_t* first_tile = nullptr;   // prefill: [num_segments], the segment's first 64-entry tile

  // Decode lengths (SPEC 4, 5): row j of request b.
  const int32_t* seq_lens = nullptr;     // [B] or [B, next_n]
  const int32_t* decode_lens = nullptr;  // [B] or null (no padded rows)
  int32_t batch = 0, next_n = 1, compress_ratio = 1;
  int32_t seq_lens_2d = 0, vllm_padded = 0;
  const int32_t* block_table = nullptr;  // [B, max_pages]
  int32_t max_pages = 0;
  const uint8_t* cache = nullptr;  // block-flat pages of 64 entries: 64 * D codes, then 64 fp32 scales
  int64_t page_bytes = 0;

  const int32_t* candidates = nullptr;  // compact: [rows, slots] block ids, -1 empty
  int32_t slots = 0;

  const int32_t* ks = nullptr;  // prefill: [rows]
  const int32_t* ke = nullptr;
  int32_t query_rows = 0;  // prefill: S

  float* out = nullptr;  // [rows][out_stride]
  int64_t out_stride = 0;

  // compact with kRankRows (candidate_logits_top_k in one launch): the block that completes a row's
  // units ranks the row (epilogue/rank_compact_rows.cuh). row_done[r] counts the units done;
  // sm90_compact_schedule zeroes it and the ranking block sets it back to zero, so every launch finds
  // it zero.
  int32_t top_k = 0;
  int32_t* top_k_out = nullptr;  // [rows][top_k]
  int32_t* row_done = nullptr;   // [rows]
  common::RowSpan top_k_span;    // the entries ranked: positions below L_r and top_k_span.length(r)
};

// Unit i of a block is loaded by loader warp i % M and computed by math warpgroup i % M (M = 3 or 4
// math warpgroups, a kernel's choice: logits_threads): M pipelines that run at their own pace. The
// ring's length is a multiple of M, so that unit i's stage i % S is only ever used by pipeline i % M:
// a loader then waits on the release of a stage it filled itself one round earlier. (With 25 stages
// and M = 3 a stage passed from pipeline to pipeline, a pipeline whose loader stalled could fall two
// rounds behind the others, the waiting loader saw the parity of a phase two rounds old, took it as
// released and overwrote a stage still in use: at next_n = 1 on the large shapes of the H200
// benchmark the launch then failed, "unspecified launch failure".)
inline constexpr int kMaxMathWarpgroups = 4;
DSA_HD constexpr int logits_threads(int math_warpgroups) { return 128 * (math_warpgroups + 1); }
// With four math warpgroups (640 threads) a block starts with 96 registers per thread (65536 / 640 in
// steps of 8), and setmaxnreg moves registers from the loader warpgroup to the math warpgroups only
// within that allocation: what a warpgroup frees goes to its block's pool, and a math warpgroup's
// increase waits until the pool holds it, forever if it never does (the first H200 run of this
// kernel, with 112 and 56, hung). DeepGEMM's split: 4 * 128 * 104 + 128 * 64 = 640 * 96.
inline constexpr int kWideLaunchRegisters = 96, kWideMathRegisters = 104, kWideLoaderRegisters = 64;
static_assert(4 * 128 * kWideMathRegisters + 128 * kWideLoaderRegisters <= logits_threads(4) * kWideLaunchRegisters,
              "the math warpgroups' increase must fit in what the loaders free");
// The accurate variant's row pairs (three math warpgroups, 512 threads of 128 registers at launch): a
// promoted chain of N = 2H holds its sum and one step buffer, 2 x H registers (128 at H 64), beside the
// loop's own, more than the launch gives a thread. ptxas allocates the math warps' code within what
// setmaxnreg gives them: at 152 the H 64, D 128 kernel spilled 1540 bytes, at 160 nothing, and the
// loaders' code fits in 32 (-Xptxas -v, CUDA 13).
inline constexpr int kPairLaunchRegisters = 128, kPairMathRegisters = 160, kPairLoaderRegisters = 32;
static_assert(3 * 128 * kPairMathRegisters + 128 * kPairLoaderRegisters <= logits_threads(3) * kPairLaunchRegisters,
              "the math warpgroups' increase must fit in what the loaders free");
// The registers a kernel's thread starts with and what setmaxnreg gives a math and a loader warp (math 0:
// no setmaxnreg, the launch's throughout).
struct RegisterSplit {
  int launch, math, loader;
};
DSA_HD constexpr RegisterSplit register_split(int math_warpgroups, bool accurate_row_pairs) {
  return math_warpgroups == 4 ? RegisterSplit{kWideLaunchRegisters, kWideMathRegisters, kWideLoaderRegisters}
         : accurate_row_pairs ? RegisterSplit{kPairLaunchRegisters, kPairMathRegisters, kPairLoaderRegisters}
                              : RegisterSplit{0, 0, 0};
}
inline constexpr int kUnit = 64;            // entries per unit (the wgmma M)
inline constexpr int kMaxBlocksPerUnit = 8;  // candidate blocks of 8 entries or more
inline constexpr int kMaxRows = 8;           // query rows per segment (next_n * H <= 256, prefill groups)
inline constexpr int kMaxRankedRows = 64;    // rows one block of a kRankRows launch may complete

// Shared-memory layout of one block, the same on host (sizing) and device (carving).
struct LogitsSmem {
  uint32_t q_bytes, w_bytes, tile_bytes, stages;
  uint32_t tile_offset, w_offset, scale_offset, meta_offset, bounds_offset, ranked_offset, barrier_offset, total;

  DSA_HD uint32_t q_offset(uint32_t slot) const { return slot * q_bytes; }
  DSA_HD uint32_t w_offset_of(uint32_t slot) const { return w_offset + slot * w_bytes; }
  DSA_HD LogitsSmem(int heads, int head_dim, int group_rows, int num_stages) {
    q_bytes = uint32_t(group_rows * heads * head_dim);
    w_bytes = (uint32_t(group_rows * heads * 4) + 127u) & ~127u;
    tile_bytes = uint32_t(kUnit * head_dim);
    stages = uint32_t(num_stages);
    uint32_t at = 2 * q_bytes;                    // Q buffers 0 and 1 first
    tile_offset = at, at += stages * tile_bytes;  // every tile 1024-aligned: q_bytes and tile_bytes are
    w_offset = at, at += 2 * w_bytes;             // multiples of 1024
    scale_offset = at, at += stages * kUnit * 4;
    meta_offset = at, at += stages * kMaxBlocksPerUnit * 4;
    bounds_offset = at, at += kMaxMathWarpgroups * 2 * 2 * kMaxRows * 4;  // per math warpgroup, 2 buffers of [lo, hi)
    // kRankRows: the count, then the rows completed here (16-byte multiple: the barriers stay 8-aligned).
    ranked_offset = at, at += ((kMaxRankedRows + 1) * 4 + 15u) & ~15u;
    barrier_offset = at, at += (4 + 2 * stages) * 8;
    total = at + 1024;  // slack for aligning the base to 1024
  }
};

// The ring's length for a launch with `pipelines` math warpgroups: the most stages, a multiple of
// `pipelines` (one pipeline per stage, above), at most 32 and at least 3 * pipelines (a math
// warpgroup's step of 2 * pipelines units must advance the ring by less than its length), that fit
// in `smem_limit` bytes beside the two Q buffers; 0 when none fits.
DSA_HD inline int32_t ring_length(int heads, int head_dim, int group_rows, uint32_t smem_limit, int pipelines) {
  for (int32_t s = 32 - 32 % pipelines; s >= 3 * pipelines; s -= pipelines)
    if (LogitsSmem(heads, head_dim, group_rows, s).total <= smem_limit) return s;
  return 0;
}

// L_r of SPEC 4/5 for row j of request b (reference/src/problem.cpp's visible_len).
DSA_HD inline int32_t visible_len(const LogitsParams& p, int32_t b, int32_t j) {
  int64_t tokens;
  const bool padded = p.decode_lens != nullptr && j >= p.decode_lens[b];
  if (p.seq_lens_2d) return padded ? 0 : p.seq_lens[int64_t(b) * p.next_n + j];
  const int64_t len = p.seq_lens[b];
  if (p.decode_lens == nullptr) {
    tokens = len - p.next_n + j + 1;
  } else if (padded) {
    tokens = 0;
  } else if (!p.vllm_padded) {
    tokens = len - p.decode_lens[b] + j + 1;
  } else {
    tokens = len - p.next_n + 1 + j;
  }
  return tokens > 0 ? int32_t(tokens / p.compress_ratio) : 0;
}

}  // namespace dsa::cuda::kernels
