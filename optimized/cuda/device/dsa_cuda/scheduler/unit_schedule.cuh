// The split of a launch's work over the persistent blocks: units (64 entries each) are numbered
// through all segments (unit_prefix, built by schedule_units), and block i takes the contiguous
// range [i * total / grid, (i + 1) * total / grid). A long row is therefore spread over as many
// SMs as its share of the work asks for, and many short rows share one block.
#pragma once

#include <cstdint>

#include "dsa_cuda/kernels/logits_params.cuh"

namespace dsa::cuda::scheduler {

using kernels::LogitsMode;
using kernels::LogitsParams;

// Units of segment s and, for prefill, its first 64-entry tile (first_tile, 0 otherwise).
template <LogitsMode kMode>
__device__ __forceinline__ int32_t segment_units(const LogitsParams& p, int32_t s, int32_t& first_tile) {
  if constexpr (kMode == LogitsMode::paged) {
    int32_t widest = 0;
    for (int32_t j = 0; j < p.next_n; ++j) widest = max(widest, kernels::visible_len(p, s, j));
    return (widest + 63) / 64;
  } else if constexpr (kMode == LogitsMode::compact) {
    const int32_t len = kernels::visible_len(p, s / p.next_n, s % p.next_n);
    return len > 0 ? (p.slots * p.block + 63) / 64 : 0;
  } else {
    int64_t lo = INT64_MAX, hi = 0;
    const int32_t r0 = s * p.group_rows, r1 = min(p.query_rows, r0 + p.group_rows);
    for (int32_t r = r0; r < r1; ++r)
      if (p.ke[r] > p.ks[r]) {
        lo = min(lo, int64_t(p.ks[r]));
        hi = max(hi, int64_t(p.ke[r]));
      }
    if (hi <= lo) {
      first_tile = 0;
      return 0;
    }
    first_tile = int32_t(lo / 64);
    return int32_t((hi + 63) / 64 - lo / 64);
  }
}

// One block of 1024 threads: unit_prefix[s] = units of segments before s (exclusive scan).
template <LogitsMode kMode>
__global__ void __launch_bounds__(1024) schedule_units(LogitsParams p, int32_t* unit_prefix, int32_t* first_tile) {
  __shared__ int32_t warp_sums[32];
  const int32_t n = p.num_segments, t = int32_t(threadIdx.x);
  const int32_t chunk = (n + 1023) / 1024, begin = min(n, t * chunk), end = min(n, begin + chunk);
  int32_t local = 0;
  for (int32_t s = begin; s < end; ++s) {
    int32_t tile = 0;
    local += segment_units<kMode>(p, s, tile);
    if (first_tile) first_tile[s] = tile;
  }
  // Inclusive scan over the block: within warps, then over the warp totals.
  int32_t x = local;
  const int32_t lane = t % 32, warp = t / 32;
#pragma unroll
  for (int32_t d = 1; d < 32; d <<= 1) {
    const int32_t y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d) x += y;
  }
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    int32_t w = warp_sums[lane];
#pragma unroll
    for (int32_t d = 1; d < 32; d <<= 1) {
      const int32_t y = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w += y;
    }
    warp_sums[lane] = w;
  }
  __syncthreads();
  int32_t running = x - local + (warp > 0 ? warp_sums[warp - 1] : 0);
  for (int32_t s = begin; s < end; ++s) {
    unit_prefix[s] = running;
    int32_t tile = 0;
    running += segment_units<kMode>(p, s, tile);
  }
  if (t == 1023) unit_prefix[n] = running;
}

// The walk over this block's units, segment by segment, that every role of a block repeats.
struct SegmentWalk {
  const int32_t* prefix;
  int32_t num_segments;
  int32_t begin, end;  // this block's global unit range
  int32_t segment;     // current segment
  int32_t ordinal;     // segments visited by this block so far (selects the Q buffer and its phase)

  __device__ __forceinline__ SegmentWalk(const LogitsParams& p) : prefix(p.unit_prefix), num_segments(p.num_segments) {
    const int64_t total = prefix[num_segments];
    begin = int32_t(total * blockIdx.x / gridDim.x);
    end = int32_t(total * (blockIdx.x + 1) / gridDim.x);
    // The segment holding unit `begin`: the last s with prefix[s] <= begin.
    int32_t lo = 0, hi = num_segments;  // prefix[lo] <= begin < prefix[hi] when begin < total
    while (hi - lo > 1) {
      const int32_t mid = (lo + hi) / 2;
      if (prefix[mid] <= begin) lo = mid; else hi = mid;
    }
    segment = lo;
    while (segment < num_segments && prefix[segment + 1] <= begin) ++segment;  // skip empty segments
    ordinal = 0;
  }
  __device__ __forceinline__ bool done(int32_t unit) const { return unit >= end; }
  // Units [first, last) of the current segment inside this block's range (global numbering).
  __device__ __forceinline__ int32_t first(int32_t unit) const { return unit; }
  __device__ __forceinline__ int32_t last() const { return min(end, prefix[segment + 1]); }
  __device__ __forceinline__ void next() {
    const int32_t at = prefix[segment + 1];
    ++segment;
    while (segment < num_segments && prefix[segment + 1] <= at) ++segment;
    ++ordinal;
  }
};

// The segment of a lane's units, which it visits in increasing order: a cursor that only moves
// forward, from the segment of the block's first unit (SegmentWalk), so that finding a unit's segment
// costs a load only where the unit starts a new segment (a binary search per unit is a chain of
// log2(segments) dependent loads on the loader's path).
struct UnitCursor {
  const int32_t* prefix;
  int32_t segment;  // prefix[segment] = first <= u < end for the last unit u located
  int32_t first, end;

  __device__ __forceinline__ UnitCursor(const LogitsParams& p, int32_t start_segment)
      : prefix(p.unit_prefix), segment(start_segment), first(prefix[start_segment]), end(prefix[start_segment + 1]) {}
  // Moves to the segment holding unit u (u below the last segment's end, and not below the last u).
  __device__ __forceinline__ void seek(int32_t u) {
    while (u >= end) {
      ++segment;
      first = end;
      end = prefix[segment + 1];
    }
  }
};

}  // namespace dsa::cuda::scheduler
