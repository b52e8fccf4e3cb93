// One instruction of each matrix-unit model on decoded operands (internal).
//
// Operands arrive decoded (operands.hpp) and permuted into the model's lane
// order, so that every set the datapath sums apart is a contiguous run of
// lanes: align-truncate-sum is then a fixed-length loop of integer adds that
// the compiler vectorises. The scalar API, the dump checker and the bulk
// chain_dots all run these same kernels.
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
  const uint64_t* mag;  // |v| * 2^10 (below 2^19) in 64-bit lanes: products are one pmuludq
  const uint64_t* neg;
  const int16_t* exp;
};

inline float quiet_nan() { return std::numeric_limits<float>::quiet_NaN(); }
// The NaN NVIDIA's matrix units write, whatever NaN went in (seen on the H200:
// data/hardware/RESULTS.md). CDNA3's models keep the IEEE default quiet NaN.
inline float nvidia_nan() { return std::bit_cast<float>(0x7FFFFFFFu); }

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

// ---- Hopper wgmma m64nNk32 e4m3 (native QGMMA): 13 fraction bits, C in the
// max, result truncated to e8m13; an empty or exactly cancelling sum is +0.
inline float wgmma_e4m3(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
  if (use_c && !std::isfinite(c)) return c;  // inf stays inf; NaN stays NaN
  int q;
  const int64_t sum = fused_truncated_sum<32, 13>(a, b, offset, c, use_c && c != 0.0f, q);
  return round_scaled_fast(sum, q, Rounding::toward_zero, 14);
}

// ---- Hopper mma.sync m16n8k32 e4m3 (ptxas emulation). Lanes 0-15 hold
// k mod 4 in {0, 1}, lanes 16-31 k mod 4 in {2, 3}: two HMMA.16816 with 25
// fraction bits, the first one's fp32 result a term of the second, then an
// ordinary fp32 add of C.
inline float hmma_16816(const Lanes& a, const Lanes& b, int offset, float z) {
  int q;
  const int64_t sum = fused_truncated_sum<16, 25>(a, b, offset, z, z != 0.0f, q);
  return round_scaled_fast(sum, q, Rounding::toward_zero);
}
inline float mma_sync_e4m3(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
  const float p1 = hmma_16816(a, b, offset, 0.0f);
  const float p2 = hmma_16816(a, b, offset + 16, p1);
  return use_c ? p2 + c : p2;
}

// ---- Blackwell tcgen05 kind::f8f6f4 k32 e4m3 (published model): one fused sum
// of 32 products and C, 25 fraction bits, result rounded toward zero.
inline float tcgen05_f8f6f4(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
  if (use_c && !std::isfinite(c)) return c;
  int q;
  const int64_t sum = fused_truncated_sum<32, 25>(a, b, offset, c, use_c && c != 0.0f, q);
  return round_scaled_fast(sum, q, Rounding::toward_zero);
}

// ---- CDNA3 v_mfma fp8, one group of 16 consecutive k (published model).
// Lanes 0-7 hold the even k, lanes 8-15 the odd k.
inline float cdna3_group16(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
  if (use_c && !std::isfinite(c)) return c;
  constexpr int kF = 24;   // fraction bits of the even and odd sums
  constexpr int kF2 = 31;  // fraction bits of the product sum against C
  const int xe = max_product_exponent<8>(a.exp + offset, b.exp + offset);
  const int xo = max_product_exponent<8>(a.exp + offset + 8, b.exp + offset + 8);
  const bool even = xe >= kNoTermBelow, odd = xo >= kNoTermBelow;
  const bool c_term = use_c && c != 0.0f;
  if (!even && !odd) return c_term ? c : 0.0f;  // C alone: already on its 24-bit grid
  // Each half with 24 bits below its own maximum, truncating toward zero.
  const int64_t se = even ? truncated_product_sum<8>(a, b, offset, xe - kF) : 0;
  const int64_t so = odd ? truncated_product_sum<8>(a, b, offset + 8, xo - kF) : 0;
  // The smaller half rounded toward -inf to 24 bits below the larger exponent.
  const int m = !even ? xo : !odd ? xe : (xe > xo ? xe : xo);
  const int64_t s =
      (even ? units_toward_neg_inf(se, xe - kF, m - kF) : 0) + (odd ? units_toward_neg_inf(so, xo - kF, m - kF) : 0);
  Fp32Parts cp;
  int e = m;
  if (c_term) {
    cp = split_fp32(c);
    e = cp.align > e ? cp.align : e;
  }
  // The product sum rounded toward -inf to 31 bits below max(its exponent, C's);
  // C rounded toward -inf to 24 bits below it, or dropped 26 or more binades below.
  int64_t sum = units_toward_neg_inf(s, m - kF, e - kF2);
  if (c_term && cp.align >= e - 25) {
    const int64_t cs = cp.neg ? -int64_t(cp.sig) : int64_t(cp.sig);
    sum += units_toward_neg_inf(cs, cp.exp, e - kF) << (kF2 - kF);
  }
  return round_scaled_fast(sum, e - kF2, Rounding::nearest_even);
}

// ---- The models as compile-time policies: K of one instruction and its step.
struct MmaSyncE4m3 {
  static constexpr int kK = 32;
  static float nan() { return nvidia_nan(); }
  static float step(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
    return mma_sync_e4m3(a, b, offset, c, use_c);
  }
};
struct WgmmaE4m3 {
  static constexpr int kK = 32;
  static float nan() { return nvidia_nan(); }
  static float step(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
    return wgmma_e4m3(a, b, offset, c, use_c);
  }
};
struct Tcgen05F8f6f4 {
  static constexpr int kK = 32;
  static float nan() { return nvidia_nan(); }
  static float step(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
    return tcgen05_f8f6f4(a, b, offset, c, use_c);
  }
};
struct Cdna3Mfma16x16x32 {  // two groups of 16 in sequence
  static constexpr int kK = 32;
  static float nan() { return quiet_nan(); }
  static float step(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
    return cdna3_group16(a, b, offset + 16, cdna3_group16(a, b, offset, c, use_c), true);
  }
};
struct Cdna3Mfma32x32x16 {
  static constexpr int kK = 16;
  static float nan() { return quiet_nan(); }
  static float step(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
    return cdna3_group16(a, b, offset, c, use_c);
  }
};

// One instruction with its NaN: a NaN operand makes the result NaN, and every
// NaN result has the unit's bits.
template <class Model>
inline float step_with_nan(const Lanes& a, const Lanes& b, bool nan_operand, int offset, float c, bool use_c) {
  const float d = nan_operand ? Model::nan() : Model::step(a, b, offset, c, use_c);
  return std::isnan(d) ? Model::nan() : d;
}

// A chain over `slices` instructions.
template <class Model>
inline float chain_lanes(const Lanes& a, const uint8_t* a_nan, const Lanes& b, const uint8_t* b_nan, int slices,
                         float c, bool use_c) {
  float acc = c;
  for (int j = 0; j < slices; ++j) {
    acc = step_with_nan<Model>(a, b, a_nan[j] | b_nan[j], j * Model::kK, acc, use_c);
    use_c = true;
  }
  return acc;
}

}  // namespace dsa::mma::detail
