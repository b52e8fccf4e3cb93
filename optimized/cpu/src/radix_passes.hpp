// Building blocks of the radix passes shared by the top-k twins: histograms
// and the scratch of a fresh SM. Internal to optimized/cpu; the threshold bin
// and the keys are the kernels' own (optimized/common).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "dsa/common/threshold.hpp"

namespace dsa::optimized::detail {

// Whatever a fresh SM's memory holds at `slot`: arbitrary words (a splitmix64
// finalizer over a per-kernel affine map of the slot), so slots a defective
// kernel never writes hold garbage, not zeros.
inline int32_t uninitialized_word(uint64_t slot, uint64_t multiplier, uint64_t offset) {
  uint64_t z = slot * multiplier + offset;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return int32_t(uint32_t(z ^ (z >> 31)));
}

// Adds the digits of entries [0, n) to hist. Four interleaved sub-histograms
// keep runs of equal digits (tied or clustered rows) from serializing on one
// counter.
template <int Bins, class Digit>
void add_histogram(int64_t n, Digit digit, std::array<int32_t, Bins>& hist) {
  alignas(64) std::array<std::array<int32_t, Bins>, 4> sub{};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    ++sub[0][digit(i)];
    ++sub[1][digit(i + 1)];
    ++sub[2][digit(i + 2)];
    ++sub[3][digit(i + 3)];
  }
  for (; i < n; ++i) ++sub[0][digit(i)];
  for (int b = 0; b < Bins; ++b) hist[size_t(b)] += sub[0][size_t(b)] + sub[1][size_t(b)] + sub[2][size_t(b)] + sub[3][size_t(b)];
}

// A radix pass's filter, after its threshold bin `cut_bin` is found: an entry of a digit above the bin is
// output (at output[found++], in scan order), one in the bin stays a candidate with its key (in scan order),
// the rest drop out.
template <class Digit>
void keep_threshold_bin(std::vector<int32_t>& candidates, std::vector<uint32_t>& keys, Digit digit, int cut_bin,
                        std::vector<int32_t>& output, int& found) {
  int32_t* cand = candidates.data();
  uint32_t* key = keys.data();
  const int64_t n = int64_t(candidates.size());
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int d = int(digit(key[i]));
    if (d > cut_bin) output[size_t(found++)] = cand[i];
    cand[kept] = cand[i];
    key[kept] = key[i];
    kept += d == cut_bin;
  }
  candidates.resize(size_t(kept));
  keys.resize(size_t(kept));
}

using common::find_threshold;
using common::Threshold;

}  // namespace dsa::optimized::detail
