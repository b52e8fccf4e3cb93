// The scalar building blocks of the models' datapaths (internal; datapaths/).
//
// Operands arrive decoded (operands.hpp) and permuted into the model's lane
// order, so that every set the datapath sums apart is a contiguous run of
// lanes: align-truncate-sum is then a fixed-length loop of integer adds that
// the compiler vectorises. The scalar API, the dump checker and the bulk path
// of models without a SIMD kernel run these.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "operands.hpp"
#include "rounding.hpp"

namespace dsa::mma::detail {

// Decoded operands of one vector in lane order (structure of arrays).
struct Lanes {
  const uint64_t* mag;  // fp8: |v| * 2^10 (below 2^19) in 64-bit lanes: products are one pmuludq
  const uint64_t* neg;
  const int16_t* exp;
};

inline float quiet_nan() { return std::numeric_limits<float>::quiet_NaN(); }

// The largest alignment exponent over N products (below kNoTermBelow: none).
template <int N>
inline int max_product_exponent(const int16_t* ea, const int16_t* eb) {
  int16_t m = std::numeric_limits<int16_t>::min();
  for (int i = 0; i < N; ++i) {
    const int16_t e = int16_t(ea[i] + eb[i]);
    m = e > m ? e : m;
  }
  return m;
}

// The sum of N products, each truncated toward zero to a multiple of 2^q, in
// units of 2^q. Exact: callers pick q >= max exponent - 31, so every
// truncated product is below 2^33 units and the sum fits easily.
template <int N>
inline int64_t truncated_product_sum(const Lanes& a, const Lanes& b, int offset, int q) {
  const uint64_t* ma = a.mag + offset;
  const uint64_t* mb = b.mag + offset;
  const uint64_t* na = a.neg + offset;
  const uint64_t* nb = b.neg + offset;
  const int shift = q + kProductShift;  // products are integers in units of 2^-20
  uint64_t sum = 0;                     // two's complement, wraps exactly like int64
  if (shift <= 0) {                     // no product loses a bit
    for (int i = 0; i < N; ++i) {
      const uint64_t p = uint64_t(uint32_t(ma[i])) * uint32_t(mb[i]), n = na[i] ^ nb[i];
      sum += (p ^ n) - n;
    }
    // A grid this fine means X is far below every product (a tiny C alone): sum is 0.
    return sum == 0 ? 0 : int64_t(sum << -shift);
  }
  if (shift >= 64) return 0;
  for (int i = 0; i < N; ++i) {
    const uint64_t t = (uint64_t(uint32_t(ma[i])) * uint32_t(mb[i])) >> shift, n = na[i] ^ nb[i];
    sum += (t ^ n) - n;
  }
  return int64_t(sum);
}

// C (or an HMMA's accumulator) as a term truncated toward zero to 2^q.
inline int64_t truncated_term(const Fp32Parts& c, int q) {
  return apply_sign(units_toward_zero(c.sig, c.exp, q), c.neg);
}

// One fused sum of N products plus an optional fp32 term, F fraction bits
// below the largest exponent, each term truncated toward zero; the exact sum
// is returned as sig * 2^q (sig = 0 when there is no term).
template <int N, int F>
inline int64_t fused_truncated_sum(const Lanes& a, const Lanes& b, int offset, float c, bool c_term, int& q) {
  int x = max_product_exponent<N>(a.exp + offset, b.exp + offset);
  Fp32Parts cp;
  if (c_term) {
    cp = split_fp32(c);
    x = cp.align > x ? cp.align : x;
  }
  if (x < kNoTermBelow) {
    q = 0;
    return 0;
  }
  q = x - F;
  int64_t sum = truncated_product_sum<N>(a, b, offset, q);
  if (c_term) sum += truncated_term(cp, q);
  return sum;
}

}  // namespace dsa::mma::detail
