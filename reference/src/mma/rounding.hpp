// Exact integer sums to fp32 under the matrix units' roundings (internal).
#pragma once

#include <cstdint>

namespace dsa::mma::detail {

enum class Rounding : uint8_t {
  nearest_even,
  toward_zero,
  toward_neg_inf,
};

// The fp32 value of sig * 2^exp rounded to `precision` significant bits
// (24: fp32; 14: the e8m13 of Hopper's fp8 accumulator) with fp32's exponent
// range: below 2^-126 the grid is fixed at 2^(-126 - precision + 1), as fp32
// subnormals are. Overflow follows IEEE for the mode (nearest: inf; toward
// zero: the largest finite value; toward -inf: the largest finite value if
// positive, -inf if negative). sig = 0 gives +0.
float round_scaled(__int128 sig, int exp, Rounding mode, int precision = 24);

// |term| truncated toward zero to a multiple of 2^q, in units of 2^q, for a
// magnitude m * 2^e.
inline uint64_t units_toward_zero(uint64_t m, int e, int q) {
  const int shift = e - q;
  if (shift >= 0) return m << shift;  // callers keep the result below 2^63
  return shift <= -64 ? 0 : m >> -shift;
}

// A signed value v * 2^e rounded toward -inf to a multiple of 2^q, in units of 2^q.
inline int64_t units_toward_neg_inf(int64_t v, int e, int q) {
  const int shift = e - q;
  if (shift >= 0) return v << shift;
  if (shift <= -63) return v < 0 ? -1 : 0;
  return v >> -shift;  // arithmetic shift: floor
}

inline int64_t apply_sign(uint64_t magnitude, bool negative) {
  return negative ? -int64_t(magnitude) : int64_t(magnitude);
}

}  // namespace dsa::mma::detail
