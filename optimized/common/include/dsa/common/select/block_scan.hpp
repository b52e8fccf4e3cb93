// A block-wide exclusive scan written against the vendor layer (arch/): the
// prefix of the per-thread counts that the selection kernels' emitting steps
// and threshold searches share; and the warp's reservation of list slots that
// their listing passes share.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

namespace dsa::common::select {

// Exclusive prefix of v in thread order over a block of kThreads; total gets
// the sum. Uses warp_totals (kThreads / lanes words of shared memory): two
// calls need a barrier between them (every caller has one).
template <class Arch, int kThreads>
DSA_HD uint32_t block_exclusive_scan(const Arch& a, uint32_t* warp_totals, uint32_t v, uint32_t& total) {
  constexpr int kLanes = Arch::kLanes, kWarps = kThreads / kLanes;
  static_assert(kWarps <= kLanes, "one warp scans the warp totals");
  const int lane = a.thread() % kLanes, warp = a.thread() / kLanes;
  uint32_t incl = v;
  DSA_UNROLL
  for (int d = 1; d < kLanes; d *= 2) {
    const uint32_t y = a.shfl_up(incl, d);
    if (lane >= d) incl += y;
  }
  if (lane == kLanes - 1) warp_totals[warp] = incl;
  a.sync();
  if (warp == 0) {
    uint32_t w = lane < kWarps ? warp_totals[lane] : 0;
    DSA_UNROLL
    for (int d = 1; d < kLanes; d *= 2) {
      const uint32_t y = a.shfl_up(w, d);
      if (lane >= d) w += y;
    }
    if (lane < kWarps) warp_totals[lane] = w;
  }
  a.sync();
  total = warp_totals[kWarps - 1];
  return (warp > 0 ? warp_totals[warp - 1] : 0) + incl - v;
}

// This thread's first of its n slots among those its warp reserves at once:
// the warp's last lane calls reserve(the warp's total), which returns the
// first of that many slots (an atomic on a shared counter), and the lanes'
// slots follow in lane order. One atomic a warp: a ballot and an atomic a key
// cost more than a listing pass's other work. Every lane of the warp calls it
// (the shuffles).
template <class Arch, class Reserve>
DSA_HD int warp_reserve(const Arch& a, int n, Reserve&& reserve) {
  const int lane = a.thread() % Arch::kLanes;
  int incl = n;  // an inclusive scan over the warp
  DSA_UNROLL
  for (int d = 1; d < Arch::kLanes; d *= 2) {
    const int y = a.shfl_up(incl, d);
    if (lane >= d) incl += y;
  }
  int first = 0;
  if (lane == Arch::kLanes - 1 && incl > 0) first = reserve(incl);
  return a.shfl(first, Arch::kLanes - 1) + incl - n;
}

}  // namespace dsa::common::select
