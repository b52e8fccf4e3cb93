// The top k of one row by one block of 256 threads (4 waves of 64): a radix
// select over the shared order keys (optimized/common: the SPEC 6 order, key 0
// for "no entry") in 4 passes of 8 bits, histograms in LDS, the threshold bin
// by the shared find_threshold, finds the
// k-th key T; keys above T are written in any order, then the ties at T in
// column order until k are filled (the same set on every run: no atomic
// decides which tie wins). Fewer than k present columns: all of them, then -1.
// Every entry of [0, k) is written.
//
// KeyAt(j) gives column j's key (common::kNoEntryKey for a column that is not there),
// PositionAt(j) the index written for it.
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>

#include "../common/wave.hpp"
#include "dsa/common/radix_keys.hpp"
#include "dsa/common/threshold.hpp"

namespace dsa::gfx942 {

using common::kNoEntryKey;
using common::order_key;

inline constexpr int kSelectThreads = 256;

struct BlockTopkShared {
  uint32_t histogram[256];
  uint32_t wave_counts[kSelectThreads / 64];
  uint32_t prefix;
  uint32_t remaining;
  uint32_t above;  // slots taken by keys above T
  uint32_t present;
};

// Block-wide exclusive prefix of `flag` over threads in thread order; returns
// the thread's rank and writes the block's total. Two barriers.
__device__ inline uint32_t block_rank(bool flag, uint32_t& total, BlockTopkShared& sh) {
  const int lane = lane_id();
  const int wave = threadIdx.x / 64;
  const uint64_t ballot = __ballot(flag);
  const uint32_t in_wave = __popcll(ballot & ((uint64_t(1) << lane) - 1));
  if (lane == 0) sh.wave_counts[wave] = __popcll(ballot);
  __syncthreads();
  uint32_t before = 0;
  total = 0;
  for (int w = 0; w < kSelectThreads / 64; ++w) {
    if (w < wave) before += sh.wave_counts[w];
    total += sh.wave_counts[w];
  }
  __syncthreads();
  return before + in_wave;
}

template <typename KeyAt, typename PositionAt>
__device__ void block_topk(int32_t columns, int32_t k, KeyAt key_at, PositionAt position_at, int32_t* out,
                           BlockTopkShared& sh) {
  const int tid = threadIdx.x;
  // Present columns; when there are at most k, all of them in column order.
  uint32_t present = 0;
  for (int32_t j = tid; j < columns; j += kSelectThreads) present += key_at(j) != kNoEntryKey;
  if (tid == 0) sh.present = 0;
  __syncthreads();
  atomicAdd(&sh.present, present);
  __syncthreads();
  if (sh.present <= uint32_t(k)) {
    uint32_t written = 0;
    for (int32_t base = 0; base < columns; base += kSelectThreads) {
      const int32_t j = base + tid;
      const bool here = j < columns && key_at(j) != kNoEntryKey;
      uint32_t total;
      const uint32_t rank = block_rank(here, total, sh);
      if (here) out[written + rank] = position_at(j);
      written += total;
    }
    for (int32_t i = int32_t(sh.present) + tid; i < k; i += kSelectThreads) out[i] = -1;
    return;
  }

  // Radix select of the k-th largest key, 8 bits per pass from the top.
  if (tid == 0) {
    sh.prefix = 0;
    sh.remaining = uint32_t(k);
  }
  uint32_t mask = 0;
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int b = tid; b < 256; b += kSelectThreads) sh.histogram[b] = 0;
    __syncthreads();
    const uint32_t prefix = sh.prefix;
    for (int32_t j = tid; j < columns; j += kSelectThreads) {
      const uint32_t key = key_at(j);
      if ((key & mask) == prefix) atomicAdd(&sh.histogram[(key >> shift) & 255u], 1u);
    }
    __syncthreads();
    if (tid == 0) {
      const common::Threshold t = common::find_threshold(sh.histogram, 256, sh.remaining);
      sh.remaining -= uint32_t(t.above);  // keys of the threshold bin still to take
      sh.prefix = prefix | (uint32_t(t.bin) << shift);
    }
    mask |= 255u << shift;
    __syncthreads();
  }
  const uint32_t threshold = sh.prefix;
  const uint32_t ties = sh.remaining;  // ties at the threshold to take, lowest columns first
  if (tid == 0) sh.above = 0;
  __syncthreads();
  for (int32_t j = tid; j < columns; j += kSelectThreads) {
    if (key_at(j) > threshold) out[atomicAdd(&sh.above, 1u)] = position_at(j);
  }
  uint32_t taken = 0;
  const uint32_t first_tie_slot = uint32_t(k) - ties;
  for (int32_t base = 0; base < columns && taken < ties; base += kSelectThreads) {
    const int32_t j = base + tid;
    const bool tie = j < columns && key_at(j) == threshold;
    uint32_t total;
    const uint32_t rank = block_rank(tie, total, sh);
    if (tie && taken + rank < ties) out[first_tie_slot + taken + rank] = position_at(j);
    taken += total;
  }
}

}  // namespace dsa::gfx942
