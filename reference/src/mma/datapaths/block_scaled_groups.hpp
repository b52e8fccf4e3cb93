// The block-scaled fp4 datapath (internal; NUMERICS "B200", kind::mxf4). Its
// lanes (operands.hpp, decode_mxfp4_lanes) hold |e2m1| in units of 1/2, the
// sign mask, and as exponent the unbiased ue8m0 scale of the lane's block of 32.
// Scalar only: the bulk path runs it pair by pair (trait.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "../kernels.hpp"
#include "../rounding.hpp"

namespace dsa::mma::detail {

// kLanes products in groups of kGroup consecutive k (a group never straddles
// a block of 32, so its two scales are one pair). Each group's products are
// summed exactly and make one term whose alignment exponent is the sum of the
// two scale exponents. A group of all-zero products is no term; a group whose
// products cancel to zero keeps its exponent in the maximum. C is a term at its
// own exponent. Every term is truncated toward zero to F fraction bits below the
// largest exponent; the exact sum is rounded toward zero to fp32, and a result
// beyond fp32's range is +-inf (not the largest finite value).
template <int kLanes, int kGroup, int F>
struct BlockScaledGroups {
  static_assert(kLanes % kGroup == 0 && 32 % kGroup == 0, "groups tile the instruction and the scale blocks");
  static constexpr int kGroups = kLanes / kGroup;

  static float step(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
    if (use_c && !std::isfinite(c)) return c;
    int64_t sums[kGroups];  // units of 1/4
    int exps[kGroups];
    int x = kNoTermBelow - 1;
    for (int g = 0; g < kGroups; ++g) {
      const int begin = offset + g * kGroup;
      uint64_t s = 0, any = 0;  // two's complement; any: a nonzero product
      for (int k = begin; k < begin + kGroup; ++k) {
        // |e2m1| <= 12 halves: a 32 x 32 -> 64-bit multiply (pmuludq), as the fp8 kernels do.
        const uint64_t p = uint64_t(uint32_t(a.mag[k])) * uint32_t(b.mag[k]), n = a.neg[k] ^ b.neg[k];
        s += (p ^ n) - n;
        any |= p;
      }
      sums[g] = int64_t(s);
      exps[g] = a.exp[begin] + b.exp[begin];
      if (any && exps[g] > x) x = exps[g];
    }
    const bool c_term = use_c && c != 0.0f;
    Fp32Parts cp;
    if (c_term) {
      cp = split_fp32(c);
      x = cp.align > x ? cp.align : x;
    }
    if (x < kNoTermBelow) return 0.0f;
    const int q = x - F;
    int64_t sum = 0;
    for (int g = 0; g < kGroups; ++g) {
      const uint64_t mag = uint64_t(sums[g] < 0 ? -sums[g] : sums[g]);
      sum += apply_sign(units_toward_zero(mag, exps[g] - 2, q), sums[g] < 0);
    }
    if (c_term) sum += truncated_term(cp, q);
    return round_scaled(sum, q, Rounding::toward_zero, 24, OverflowTo::infinity);
  }
};

}  // namespace dsa::mma::detail
