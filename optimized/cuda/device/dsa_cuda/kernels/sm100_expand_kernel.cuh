// The candidate expansion of the SM100 sparse backend (reference expand_candidate_blocks): one
// block per row sorts the row's valid candidate blocks in shared memory (a bitonic network over
// kExpandMaxSlots keys: small code, no per-size instantiation), keeps the first of each run of
// equal blocks, ranks them by a block-wide count, and writes each kept block's sparse blocks at
// rank * ratio. Only the largest kept block can reach past the row (ids are sorted), so every
// other block contributes all `ratio` of its sparse blocks.
#pragma once

#include <cstdint>

namespace dsa::cuda::kernels {

inline constexpr int kExpandThreads = 512;
inline constexpr int kExpandKeys = 4096;  // = kExpandMaxSlots
inline constexpr int32_t kNoBlock = 0x7fffffff;

struct ExpandParams {
  const int32_t* candidates = nullptr;  // [rows][slots]
  const int32_t* row_ks = nullptr;
  const int32_t* row_ke = nullptr;
  int32_t* sparse_ids = nullptr;  // [rows][slots * ratio]
  int32_t* end = nullptr;         // [rows]
  int32_t slots = 0, ratio = 1, sbk = 8;
};

__device__ inline int32_t block_exclusive_count(bool flag, int32_t* warp_totals, int32_t& total) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const uint32_t ballot = __ballot_sync(0xffffffffu, flag);
  const int32_t before_in_warp = __popc(ballot & ((1u << lane) - 1u));
  if (lane == 0) warp_totals[warp] = __popc(ballot);
  __syncthreads();
  int32_t before = 0, sum = 0;
  for (int w = 0; w < kExpandThreads / 32; ++w) {
    const int32_t t = warp_totals[w];
    before += w < warp ? t : 0;
    sum += t;
  }
  __syncthreads();  // warp_totals is reused by the next call
  total = sum;
  return before + before_in_warp;
}

__global__ void __launch_bounds__(kExpandThreads) sm100_expand_candidates(ExpandParams p) {
  __shared__ int32_t keys[kExpandKeys];
  __shared__ int32_t warp_totals[kExpandThreads / 32];
  __shared__ int32_t last_block;
  const int64_t row = blockIdx.x;
  const int32_t ks = p.row_ks[row], ke = p.row_ke[row];
  const int32_t entries = ke > ks ? ke - ks : 0;
  const int32_t max_sparse = (entries + p.sbk - 1) / p.sbk;  // sparse blocks below the row end
  const int32_t base = ks / p.sbk;
  const int32_t num_sparse = p.slots * p.ratio;
  // A power of two at least `slots` (the bitonic network's size).
  int32_t n = 1;
  while (n < p.slots) n *= 2;

  const int32_t* cand = p.candidates + row * p.slots;
  for (int32_t i = threadIdx.x; i < n; i += kExpandThreads) {
    const int32_t b = i < p.slots ? cand[i] : -1;
    // Valid when its first sparse block starts below the row end (int64: b * ratio may be large).
    keys[i] = b >= 0 && int64_t(b) * p.ratio < max_sparse ? b : kNoBlock;
  }
  __syncthreads();
  for (int32_t size = 2; size <= n; size *= 2) {
    for (int32_t stride = size / 2; stride > 0; stride /= 2) {
      for (int32_t i = threadIdx.x; i < n / 2; i += kExpandThreads) {
        const int32_t lo = 2 * i - (i & (stride - 1)), hi = lo + stride;
        const bool ascending = (lo & size) == 0;
        const int32_t a = keys[lo], b = keys[hi];
        if ((a > b) == ascending) keys[lo] = b, keys[hi] = a;
      }
      __syncthreads();
    }
  }

  // Kept blocks: the first of each run, in rounds of kExpandThreads keys.
  int32_t* ids = p.sparse_ids + row * num_sparse;
  int32_t kept_before = 0;
  if (threadIdx.x == 0) last_block = -1;
  for (int32_t first = 0; first < n; first += kExpandThreads) {
    const int32_t i = first + threadIdx.x;
    const int32_t key = i < n ? keys[i] : kNoBlock;
    const bool kept = key != kNoBlock && (i == 0 || keys[i - 1] != key);
    int32_t round_total = 0;
    const int32_t rank = kept_before + block_exclusive_count(kept, warp_totals, round_total);
    if (kept) {
      for (int32_t o = 0; o < p.ratio; ++o) {
        const int32_t sparse = key * p.ratio + o;
        if (sparse < max_sparse) ids[rank * p.ratio + o] = base + sparse;
      }
    }
    // The largest valid block: the last valid key of the sorted row.
    if (key != kNoBlock && (i + 1 == n || keys[i + 1] == kNoBlock)) last_block = key;
    kept_before += round_total;
  }
  __syncthreads();
  const int32_t kept = kept_before;
  int32_t valid = 0, fill = 0, last_sparse = -1;
  if (kept > 0) {
    const int32_t past_last = last_block * p.ratio + p.ratio;
    last_sparse = (past_last < max_sparse ? past_last : max_sparse) - 1;
    valid = (kept - 1) * p.ratio + (last_sparse - last_block * p.ratio + 1);
    const int32_t tail = ke - (last_sparse * p.sbk + ks);
    fill = tail < 1 ? 1 : tail > p.sbk ? p.sbk : tail;
  }
  // DeepGEMM's padding convention: the unused slots repeat the last valid id (base when none).
  const int32_t pad = base + (kept > 0 ? last_sparse : 0);
  for (int32_t j = valid + threadIdx.x; j < num_sparse; j += kExpandThreads) ids[j] = pad;
  if (threadIdx.x == 0) p.end[row] = kept > 0 ? (valid - 1) * p.sbk + fill : 0;
}

}  // namespace dsa::cuda::kernels
