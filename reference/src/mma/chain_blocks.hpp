// The bulk chain kernels (internal): one query head against a block of kBlock
// tokens at a time, every step vectorised across the tokens.
//
// In a chain that starts from zero every value is an integer multiple of 2^-20:
// the products are (e4m3 and e4m3fnuz values are multiples of 2^-10), and every
// truncation, floor or rounding of the models either keeps a value exact or
// moves it to a coarser grid. So the whole chain runs on int64 in units of
// 2^-20 (|value| < 2^45), and truncating a term toward zero to a multiple of
// 2^q is one AND with a per-token mask: no variable shifts, no floating point.
// Results below 2^-126 cannot occur (the smallest nonzero value is 2^-20), so
// the rounding to fp32 precision is a rounding of the integer to p bits.
//
// These are the SIMD building blocks of the datapaths (datapaths/); the scalar
// ones (kernels.hpp) implement the general case (any C); tests check that both
// give the same bits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "operands.hpp"
#include "simd8.hpp"

namespace dsa::mma::detail {

inline constexpr int kBlock = 8;  // tokens per block: 8 int64 lanes (one zmm, four xmm)

// Operands of one block in lane order: [k][token] for K, [k] for the query head.
struct BlockOperands {
  const uint64_t* q_mag;
  const uint64_t* q_neg;
  const int16_t* q_exp;
  const uint64_t* k_mag;   // [k * kBlock + t]
  const uint64_t* k_sign;  // [k][2][kBlock]: K's sign masks, then their complements
  const int16_t* k_exp;
  // Bounds per group of 16 lanes, for the fast path: the largest alignment
  // exponent and the fewest trailing zero bits of a nonzero magnitude (units
  // 2^-10; 64 for none), of the query head and of the whole K block.
  const int16_t* q_max_exp;
  const int16_t* q_min_tz;
  const int16_t* k_max_exp;
  const int16_t* k_min_tz;
};

inline constexpr int kBoundGroup = 16;

// Largest product exponent per token over N lanes starting at k0 (int16).
template <int N>
DSA_LANES_INLINE I64x8 max_exponents(const BlockOperands& o, int k0) {
  const int16_t* qe = o.q_exp + k0;
  const int16_t* ke = o.k_exp + k0 * kBlock;
  alignas(16) int16_t x[kBlock];
#if defined(__SSE2__)
  static_assert(kBlock == 8, "one xmm of int16 per k");
  __m128i m = _mm_set1_epi16(int16_t(2 * kNoTermExponent));
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k)
    m = _mm_max_epi16(
        m, _mm_add_epi16(_mm_set1_epi16(qe[k]), _mm_loadu_si128(reinterpret_cast<const __m128i*>(ke + k * kBlock))));
  _mm_store_si128(reinterpret_cast<__m128i*>(x), m);
#else
  for (int t = 0; t < kBlock; ++t) x[t] = int16_t(2 * kNoTermExponent);
  for (int k = 0; k < N; ++k)
    for (int t = 0; t < kBlock; ++t) {
      const int16_t e = int16_t(qe[k] + ke[k * kBlock + t]);
      x[t] = e > x[t] ? e : x[t];
    }
#endif
  return I64x8::from_int16(x);
}

// sum + the products over N lanes from k0, each truncated toward zero by
// clearing `low` (sign-magnitude: the magnitude is cut), in units of 2^-20.
template <int N, bool kMasked = true>
DSA_LANES_INLINE I64x8 masked_products(const BlockOperands& o, int k0, I64x8 low, I64x8 sum) {
  const uint64_t* qm = o.q_mag + k0;
  const uint64_t* qn = o.q_neg + k0;
  const uint64_t* km = o.k_mag + k0 * kBlock;
  const uint64_t* ks = o.k_sign + k0 * 2 * kBlock;
  const ProductLanes l = to_product_lanes(low);
  ProductLanes s = to_product_lanes(sum);
#pragma GCC unroll 8
  for (int k = 0; k < N; ++k) {
    ProductLanes p = mul_low32(ProductLanes::broadcast(qm[k]), ProductLanes::load(km + k * kBlock));
    if constexpr (kMasked) p = andnot(l, p);
    // The product's sign: K's, or its complement where q is negative.
    const ProductLanes n = ProductLanes::load(ks + k * 2 * kBlock + (qn[k] & kBlock));
    s = s + ((p ^ n) - n);
  }
  return from_product_lanes(s);
}

DSA_LANES_INLINE I64x8 all_ones() { return I64x8::broadcast(-1); }

// 2^s - 1 per lane, s = q + 20: the bits (in units of 2^-20) that truncating to
// the grid 2^q clears; 0 when the grid is finer than the units (a shift by 64
// or more gives 0). s stays below 64 in every chain from zero.
DSA_LANES_INLINE I64x8 low_bits(I64x8 q) { return shr(all_ones(), I64x8::broadcast(64 - kProductShift) - q); }

DSA_LANES_INLINE I64x8 truncate_toward_zero(I64x8 v, I64x8 low) {
  const I64x8 sg = sign_mask(v);
  return (andnot(low, abs(v)) ^ sg) - sg;
}

// floor(log2|v|) per lane (units 2^-20); -21 for 0, below every product's
// exponent, so that a zero C never sets a maximum.
DSA_LANES_INLINE I64x8 exponents(I64x8 v) { return I64x8::broadcast(63 - kProductShift) - leading_zeros(abs(v)); }

// v rounded to P significant bits, toward zero or to nearest even. Every value
// is below 2^46, so with AVX-512DQ this is one IEEE conversion to fp32 with
// the rounding mode embedded (toward zero then cutting the significand to P
// bits is toward zero to P bits) and the exact conversion back.
template <int P, bool kNearest>
DSA_LANES_INLINE I64x8 round_bits(I64x8 v) {
#if defined(DSA_MMA_LANES_AVX512) && defined(__AVX512DQ__)
  static_assert(P <= 24 && (!kNearest || P == 24));
  __m256 f = kNearest ? _mm512_cvt_roundepi64_ps(v.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
                      : _mm512_cvt_roundepi64_ps(v.v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  if constexpr (P < 24) f = _mm256_and_ps(f, _mm256_castsi256_ps(_mm256_set1_epi32(int32_t(~0u << (24 - P)))));
  return {_mm512_cvttps_epi64(f)};
#else
  const I64x8 sg = sign_mask(v), mag = abs(v), zero = I64x8::broadcast(0), one = I64x8::broadcast(1);
  const I64x8 drop = max(I64x8::broadcast(64 - P) - leading_zeros(mag), zero);
  const I64x8 unit = shl(one, drop);
  I64x8 r = andnot(unit - one, mag);
  if constexpr (kNearest) {
    const I64x8 rest = mag & (unit - one), half = shl(one, max(drop - one, zero)) & greater(drop, zero);
    const I64x8 tie = (greater(half, rest) ^ all_ones()) & nonzero(rest) & nonzero(mag & unit);
    r = r + ((greater(rest, half) | tie) & unit);
  }
  return (r ^ sg) - sg;
#endif
}

// The running values of a block's chains, in units of 2^-20.
struct BlockChain {
  I64x8 acc = I64x8::broadcast(0);
  bool has_c = false;  // false before the first instruction (scale-d = 0)
};

// Whether the bounds show that the grid 2^(X - F) of a fused sum is no coarser
// than the lowest bit of any product and of C: then no bit can be lost, and
// the result is the exact sum, with no maximum to find and nothing to mask.
template <int N, int F>
DSA_LANES_INLINE bool no_bit_lost(const BlockOperands& o, int k0, I64x8 c) {
  int bound = -(1 << 14), tz = 64;
  for (int g = k0 / kBoundGroup; g < (k0 + N) / kBoundGroup; ++g) {
    bound = std::max(bound, o.q_max_exp[g] + o.k_max_exp[g]);
    tz = std::min(tz, o.q_min_tz[g] + o.k_min_tz[g]);
  }
  const uint64_t c_bits = reduce_or(abs(c));  // its top bit is the largest C's, its lowest set bit the lowest
  if (c_bits) bound = std::max(bound, 63 - __builtin_clzll(c_bits) - kProductShift);
  const int s = bound - F + kProductShift;  // grid in units of 2^-20
  return s <= tz && (c_bits == 0 || s <= __builtin_ctzll(c_bits));
}

// One fused sum of N products and the running value, F fraction bits below the
// largest exponent, every term truncated toward zero, rounded toward zero to P bits.
template <int N, int F, int P, bool kFastPath = true>
DSA_LANES_INLINE I64x8 fused_truncated(const BlockOperands& o, int k0, I64x8 c) {
  if constexpr (kFastPath)
    if (no_bit_lost<N, F>(o, k0, c)) return round_bits<P, false>(masked_products<N, false>(o, k0, c, c));
  const I64x8 x = max(max_exponents<N>(o, k0), exponents(c));
  const I64x8 low = low_bits(x - I64x8::broadcast(F));
  return round_bits<P, false>(masked_products<N>(o, k0, low, truncate_toward_zero(c, low)));
}

}  // namespace dsa::mma::detail
