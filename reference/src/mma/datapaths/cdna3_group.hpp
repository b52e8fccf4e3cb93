// The CDNA3 fp8 datapath (internal; NUMERICS "MI300"): groups of 16
// consecutive k, each rounded to fp32 and fed to the next as its C. Scalar form
// (any C) and SIMD form (chains from zero) of one group, which must give the same bits.
#pragma once

#include <algorithm>
#include <cmath>

#include "../chain_blocks.hpp"
#include "../kernels.hpp"
#include "../rounding.hpp"

namespace dsa::mma::detail {

// One group of 16 products, lanes 0-7 the even k and 8-15 the odd k. Inside
// it: each half summed with kHalfBits fraction bits below its own maximum,
// truncating toward zero (C not included); the smaller half rounded toward -inf
// to kHalfBits below the larger exponent; the product sum rounded toward -inf to
// kSumBits below max(its exponent, C's); C rounded toward -inf to kCBits below
// that maximum, or dropped more than kCKeptBinades binades below it; exact add;
// round to nearest even.
template <int kHalfBits, int kSumBits, int kCBits, int kCKeptBinades>
struct Cdna3Group16 {
  static constexpr int kLanes = 16;

  static float step(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
    if (use_c && !std::isfinite(c)) return c;
    const int xe = max_product_exponent<8>(a.exp + offset, b.exp + offset);
    const int xo = max_product_exponent<8>(a.exp + offset + 8, b.exp + offset + 8);
    const bool even = xe >= kNoTermBelow, odd = xo >= kNoTermBelow;
    const bool c_term = use_c && c != 0.0f;
    if (!even && !odd) return c_term ? c : 0.0f;  // C alone: already on its 24-bit grid
    const int64_t se = even ? truncated_product_sum<8>(a, b, offset, xe - kHalfBits) : 0;
    const int64_t so = odd ? truncated_product_sum<8>(a, b, offset + 8, xo - kHalfBits) : 0;
    const int m = !even ? xo : !odd ? xe : (xe > xo ? xe : xo);
    const int64_t s = (even ? units_toward_neg_inf(se, xe - kHalfBits, m - kHalfBits) : 0) +
                      (odd ? units_toward_neg_inf(so, xo - kHalfBits, m - kHalfBits) : 0);
    Fp32Parts cp;
    int e = m;
    if (c_term) {
      cp = split_fp32(c);
      e = cp.align > e ? cp.align : e;
    }
    int64_t sum = units_toward_neg_inf(s, m - kHalfBits, e - kSumBits);
    if (c_term && cp.align >= e - kCKeptBinades) {
      const int64_t cs = cp.neg ? -int64_t(cp.sig) : int64_t(cp.sig);
      sum += units_toward_neg_inf(cs, cp.exp, e - kCBits) << (kSumBits - kCBits);
    }
    return round_scaled_fast(sum, e - kSumBits, Rounding::nearest_even);
  }

  // Whether the bounds show that every truncation and floor of the group is a
  // no-op and that C is kept: the halves' grids 2^(M - kHalfBits) and the
  // product sum's 2^(E - kSumBits) lie below every product's lowest bit, and C's
  // grid 2^(E - kCBits) below its lowest bit (so C lies within kCBits binades: kept).
  DSA_LANES_INLINE static bool no_bit_lost(const BlockOperands& o, int k0, I64x8 cv) {
    static_assert(kCBits <= kCKeptBinades, "a C on its grid must be a kept C");
    const int g = k0 / kBoundGroup;
    const int m = o.q_max_exp[g] + o.k_max_exp[g], tz = o.q_min_tz[g] + o.k_min_tz[g];
    if (m + kProductShift - kHalfBits > tz) return false;
    const uint64_t c_bits = reduce_or(abs(cv));
    if (c_bits == 0) return true;  // without C, E = M: 2^(M - kSumBits) is finer still
    const int e = std::max(m, 63 - __builtin_clzll(c_bits) - kProductShift);
    return e + kProductShift - kSumBits <= tz && e + kProductShift - kCBits <= __builtin_ctzll(c_bits);
  }

  DSA_LANES_INLINE static void block_step(const BlockOperands& o, int k0, BlockChain& c) {
    static_assert(kCBits == 24, "C and the result are fp32 values (round_bits<24>)");
    if (no_bit_lost(o, k0, c.acc)) {  // the exact sum, rounded to nearest
      c.acc = round_bits<24, true>(masked_products<16, false>(o, k0, c.acc, c.acc));
      c.has_c = true;
      return;
    }
    const I64x8 zero = I64x8::broadcast(0);
    const I64x8 xe = max_exponents<8>(o, k0), xo = max_exponents<8>(o, k0 + 8);
    const I64x8 se = masked_products<8>(o, k0, low_bits(xe - I64x8::broadcast(kHalfBits)), zero);
    const I64x8 so = masked_products<8>(o, k0 + 8, low_bits(xo - I64x8::broadcast(kHalfBits)), zero);
    // Both halves floored to kHalfBits below the larger maximum (a no-op on the larger).
    const I64x8 m = max(xe, xo), fm = low_bits(m - I64x8::broadcast(kHalfBits));
    const I64x8 s = andnot(fm, se) + andnot(fm, so);
    const I64x8 cv = c.acc, xc = exponents(cv), e = max(m, xc);
    // The product sum floored to kSumBits below max(M, x(C)); C to kCBits,
    // dropped more than kCKeptBinades below (a zero C adds nothing either way).
    const I64x8 keep_c = greater(xc, e - I64x8::broadcast(kCKeptBinades + 1));
    const I64x8 sum = andnot(low_bits(e - I64x8::broadcast(kSumBits)), s) +
                      (andnot(low_bits(e - I64x8::broadcast(kCBits)), cv) & keep_c);
    c.acc = round_bits<24, true>(sum);
    c.has_c = true;
  }
};

// kGroups groups in sequence: the first accumulates C, each later one the result before it.
template <class Group, int kGroups>
struct GroupsInSequence {
  static float step(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
    float acc = Group::step(a, b, offset, c, use_c);
    for (int g = 1; g < kGroups; ++g) acc = Group::step(a, b, offset + g * Group::kLanes, acc, true);
    return acc;
  }
  DSA_LANES_INLINE static void block_step(const BlockOperands& o, int k0, BlockChain& c) {
#pragma GCC unroll 4
    for (int g = 0; g < kGroups; ++g) Group::block_step(o, k0 + g * Group::kLanes, c);
  }
};

}  // namespace dsa::mma::detail
