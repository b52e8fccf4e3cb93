#include "rounding.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace dsa::mma::detail {
namespace {

int bit_width_u128(unsigned __int128 v) {
  const uint64_t hi = uint64_t(v >> 64);
  return hi ? 64 + std::bit_width(hi) : std::bit_width(uint64_t(v));
}

}  // namespace

float round_scaled(__int128 sig, int exp, Rounding mode, int precision, OverflowTo overflow) {
  if (sig == 0) return 0.0f;
  const bool negative = sig < 0;
  unsigned __int128 mag = negative ? -(unsigned __int128)(sig) : (unsigned __int128)(sig);
  const int top = exp + bit_width_u128(mag) - 1;  // floor(log2|v|)
  const int lsb = (top > -126 ? top : -126) - (precision - 1);
  uint64_t kept;
  bool round_up = false;
  if (lsb <= exp) {
    kept = uint64_t(mag << (exp - lsb));  // exact: fewer than `precision` bits
  } else {
    const int shift = lsb - exp;
    if (shift >= 128) {
      kept = 0;
      round_up = mode == Rounding::toward_neg_inf && negative;  // all of it lies below half an ulp
    } else {
      kept = uint64_t(mag >> shift);
      const unsigned __int128 rest = mag - ((unsigned __int128)(kept) << shift);
      const unsigned __int128 half = (unsigned __int128)(1) << (shift - 1);
      switch (mode) {
        case Rounding::nearest_even:
          round_up = rest > half || (rest == half && (kept & 1));
          break;
        case Rounding::toward_zero:
          break;
        case Rounding::toward_neg_inf:
          round_up = negative && rest != 0;
          break;
      }
    }
  }
  kept += round_up;  // may carry into a new binade: still exact in float
  const float magnitude = kept == 0 ? 0.0f : std::ldexp(float(kept), lsb);
  float result = magnitude;
  if (std::isinf(magnitude) && overflow == OverflowTo::rounding_mode) {
    const float max_finite = std::numeric_limits<float>::max();
    switch (mode) {
      case Rounding::nearest_even:
        result = std::numeric_limits<float>::infinity();
        break;
      case Rounding::toward_zero:
        result = max_finite;
        break;
      case Rounding::toward_neg_inf:
        result = negative ? std::numeric_limits<float>::infinity() : max_finite;
        break;
    }
    // The e8m13 grid tops out below fp32's: its largest value is (2 - 2^-13) * 2^127.
    if (result == max_finite && precision < 24)
      result = std::ldexp(float((uint32_t(1) << precision) - 1), 128 - precision);
  }
  return negative ? -result : result;
}

}  // namespace dsa::mma::detail
