// The first pass of the selection kernels that count a row's coarse digit
// (radix_keys.hpp) one key at a time into a shared-memory histogram: RowTopK
// and ShortRowTopK.
//
// Every key costs one plain atomic and no branch. A key of an end bin (digit
// 0: -inf and every value below the clamp; the last digit: NaN, +inf and every
// value above it) is counted in its thread's registers and added once per warp
// by flush(), so rows dominated by -inf or NaN do not serialise on one
// counter; its atomic (and that of a key of no entry) goes to its lane's own
// slot past the histogram, which nothing reads. Sharing one bin's counter
// between peers of a warp (a ballot and a shuffle a key) cost 28 instructions
// a key against this one's 14 (ncu of the short-row kernel, SELECT_RESULTS.md
// run 34); a bin shared by a whole warp (a row of one finite value) is left to
// the hardware's serialisation of the atomics.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/radix_keys.hpp"
#include "dsa/common/select/block_scan.hpp"

namespace dsa::common::select {

template <class Arch>
struct CoarseHistogram {
  // The histogram's shared-memory slots: the bins, then a slot per lane that nothing reads.
  static constexpr int kSlots = kCoarseBins + Arch::kLanes;

  int32_t low = 0, high = 0;  // this thread's keys of the two end bins

  DSA_HD void count(const Arch& a, int32_t* hist, uint32_t key) {
    const bool in = key != kNoEntryKey;
    const uint32_t d = coarse_digit(key);
    low += in && d == 0u;
    high += d == uint32_t(kCoarseBins - 1);  // kNoEntryKey's digit is 0
    const bool counted = in && d - 1u < uint32_t(kCoarseBins - 2);
    a.atomic_add_shared(&hist[counted ? int(d) : kCoarseBins + a.thread() % Arch::kLanes], 1);
  }
  // Adds the end bins' counts once per warp; every thread of the block calls it (the shuffles).
  DSA_HD void flush(const Arch& a, int32_t* hist) const {
    warp_add(a, &hist[0], low);
    warp_add(a, &hist[kCoarseBins - 1], high);
  }
  // Adds v of every lane of the warp to *p, once.
  DSA_HD static void warp_add(const Arch& a, int32_t* p, int32_t v) {
    const int32_t sum = warp_inclusive_scan(a, v);  // the last lane's is the warp's
    if (a.thread() % Arch::kLanes == Arch::kLanes - 1 && sum != 0) a.atomic_add_shared(p, sum);
  }
};

}  // namespace dsa::common::select
