// A block-wide exclusive scan written against the vendor layer (arch/): the
// prefix of the per-thread counts that the selection kernels' emitting steps
// and threshold searches share; the warp's inclusive scan under it (also the
// end bins' per-warp add, coarse_histogram.hpp); and the warp's reservation of
// list slots that their listing passes share.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

namespace dsa::common::select {

// Inclusive prefix of v over the lanes of a warp (lane i gets lanes 0..i's
// sum); every lane of the warp calls it (the shuffles).
template <class Arch, class T>
DSA_HD T warp_inclusive_scan(const Arch& a, T v) {
  const int lane = a.thread() % Arch::kLanes;
  DSA_UNROLL
  for (int d = 1; d < Arch::kLanes; d *= 2) {
    const T y = a.shfl_up(v, d);
    if (lane >= d) v += y;
  }
  return v;
}

// Exclusive prefix of v in thread order over a block of kThreads; total gets
// the sum. One barrier: every warp scans the warp totals itself (a load and a
// warp scan each), where one warp scanning them for the others cost a second
// barrier and its wait. Uses warp_totals (kThreads / lanes words of shared
// memory), read after the barrier: two calls need a barrier between them
// (every caller has one). T is a count, or two counts packed in the halves of
// a wider one (one scan for both).
template <class Arch, int kThreads, class T>
DSA_HD T block_exclusive_scan(const Arch& a, T* warp_totals, T v, T& total) {
  constexpr int kLanes = Arch::kLanes, kWarps = kThreads / kLanes;
  static_assert(kWarps <= kLanes, "a warp scans the warp totals");
  const int lane = a.thread() % kLanes, warp = a.thread() / kLanes;
  const T incl = warp_inclusive_scan(a, v);
  if (lane == kLanes - 1) warp_totals[warp] = incl;
  a.sync();
  const T totals = warp_inclusive_scan(a, lane < kWarps ? warp_totals[lane] : T(0));
  total = a.shfl(totals, kWarps - 1);
  const T before = a.shfl(totals, warp > 0 ? warp - 1 : 0);
  return (warp > 0 ? before : T(0)) + incl - v;
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
  const int incl = warp_inclusive_scan(a, n);
  int first = 0;
  if (lane == Arch::kLanes - 1 && incl > 0) first = reserve(incl);
  return a.shfl(first, Arch::kLanes - 1) + incl - n;
}

}  // namespace dsa::common::select
