// Exact integer sums to fp32 under the matrix units' roundings (internal).
#pragma once

#include <bit>
#include <cstdint>

namespace dsa::mma::detail {

enum class Rounding : uint8_t {
  nearest_even,
  toward_zero,
  toward_neg_inf,
};

// What a result beyond the largest finite value becomes.
enum class OverflowTo : uint8_t {
  rounding_mode,  // IEEE for the mode (nearest: inf; toward zero: the largest finite
                  // value; toward -inf: the largest finite value if positive, -inf if negative)
  infinity,       // +-inf whatever the mode (MMA-Sim's block-scaled result: a double cast to fp32)
};

// The fp32 value of sig * 2^exp rounded to `precision` significant bits
// (24: fp32; 14: the e8m13 of Hopper's fp8 accumulator) with fp32's exponent
// range: below 2^-126 the grid is fixed at 2^(-126 - precision + 1), as fp32
// subnormals are. sig = 0 gives +0.
float round_scaled(__int128 sig, int exp, Rounding mode, int precision = 24,
                   OverflowTo overflow = OverflowTo::rounding_mode);

// The same for the sums of the hot loops (|sig| < 2^53), fast where the result
// is a normal fp32: every step below is exact, the rounding is done on the
// integer (toward zero / -inf) or by one IEEE conversion (to nearest).
inline float round_scaled_fast(int64_t sig, int exp, Rounding mode, int precision = 24) {
  if (sig == 0) return 0.0f;
  const uint64_t mag = sig < 0 ? 0 - uint64_t(sig) : uint64_t(sig);
  const int width = 64 - __builtin_clzll(mag);
  const int top = exp + width - 1;
  if (width > 53 || top < -126 || top > 126 || exp < -1000) return round_scaled(sig, exp, mode, precision);
  auto pow2 = [](int e) { return std::bit_cast<double>(uint64_t(e + 1023) << 52); };
  if (mode == Rounding::nearest_even && precision == 24) return float(double(sig) * pow2(exp));
  const int drop = width > precision ? width - precision : 0;
  uint64_t kept = mag >> drop;
  if (mode == Rounding::toward_neg_inf && sig < 0 && (kept << drop) != mag) ++kept;
  if (mode == Rounding::nearest_even) {
    const uint64_t rest = mag - (kept << drop), half = drop ? uint64_t(1) << (drop - 1) : 1;
    if (drop && (rest > half || (rest == half && (kept & 1)))) ++kept;
  }
  const double v = double(kept) * pow2(exp + drop);
  return float(sig < 0 ? -v : v);
}

// |term| truncated toward zero to a multiple of 2^q, in units of 2^q, for a
// magnitude m * 2^e.
inline uint64_t units_toward_zero(uint64_t m, int e, int q) {
  // A zero term may carry any exponent (an all-zero MXFP4 group is not in the maximum), and a
  // shift past 63 is undefined even of zero.
  if (m == 0) return 0;
  const int shift = e - q;
  if (shift >= 0) return m << shift;  // callers keep the result below 2^63
  return shift <= -64 ? 0 : m >> -shift;
}

// A signed value v * 2^e rounded toward -inf to a multiple of 2^q, in units of 2^q.
inline int64_t units_toward_neg_inf(int64_t v, int e, int q) {
  if (v == 0) return 0;
  const int shift = e - q;
  if (shift >= 0) return v << shift;
  if (shift <= -63) return v < 0 ? -1 : 0;
  return v >> -shift;  // arithmetic shift: floor
}

inline int64_t apply_sign(uint64_t magnitude, bool negative) {
  return negative ? -int64_t(magnitude) : int64_t(magnitude);
}

}  // namespace dsa::mma::detail
