// The radix plan of a top-k over 32-bit keys: which bits each pass
// histograms, and the cut the passes narrow down.
//
// A pass takes `bits` bits of the key from `shift` up (its digit) and counts
// the entries whose higher bits match the cut so far. The threshold bin of a
// pass (threshold.hpp) extends the cut by one digit; after the last pass the
// cut is one exact key.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

namespace dsa::common {

struct RadixPass {
  int shift = 0;
  int bits = 0;
  DSA_HD constexpr int bins() const { return 1 << bits; }
  DSA_HD constexpr uint32_t digit(uint32_t key) const { return (key >> shift) & uint32_t(bins() - 1); }
  // This pass's bits in place.
  DSA_HD constexpr uint32_t mask() const { return uint32_t(bins() - 1) << shift; }
};

struct RadixPlan {
  int passes = 0;
  RadixPass pass[4] = {};
  DSA_HD constexpr int max_bins() const {
    int m = 0;
    for (int p = 0; p < passes; ++p) m = pass[p].bins() > m ? pass[p].bins() : m;
    return m;
  }
};

// Functions, not variables: device code may call them (a constexpr variable
// of class type is not visible to it).
// vLLM top_k_per_row's fp32 steps (11, 11 and 10 bits); our kernels use the
// same plan: 2048 bins fit shared memory twice over, and three passes fix the key.
DSA_HD constexpr RadixPlan plan_11_11_10() { return {3, {{21, 11}, {10, 11}, {0, 10}, {}}}; }
// vLLM persistent_topk's radix passes: four of 8 bits.
DSA_HD constexpr RadixPlan plan_8x4() { return {4, {{24, 8}, {16, 8}, {8, 8}, {0, 8}}}; }

// The key bits fixed so far: `prefix` under `mask` (high bits). A key
// matches when its masked bits equal the prefix; it lies above the cut when
// they are larger (every such key beats every matching one).
struct RadixCut {
  uint32_t prefix = 0;
  uint32_t mask = 0;
  DSA_HD constexpr bool matches(uint32_t key) const { return (key & mask) == prefix; }
  DSA_HD constexpr bool above(uint32_t key) const { return (key & mask) > prefix; }
  DSA_HD constexpr RadixCut refined(const RadixPass& p, uint32_t bin) const {
    return {prefix | (bin << p.shift), mask | p.mask()};
  }
};

}  // namespace dsa::common
