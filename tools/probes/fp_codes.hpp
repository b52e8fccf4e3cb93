// Bit-level helpers for the probes' inputs: e4m3fn codes and fp32 values of a
// chosen binade. Host only; the probes never do arithmetic on these values
// except to check the mapping tests, whose sums are exact.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "probe_rng.hpp"

namespace probes {

// e4m3fn: sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities,
// 0x7f and 0xff are the only NaN codes; exponent field 0 holds the subnormals.
inline constexpr uint8_t kE4m3NanPos = 0x7f;
inline constexpr uint8_t kE4m3NanNeg = 0xff;
inline constexpr uint8_t kE4m3NegZero = 0x80;

inline bool e4m3_is_nan(uint8_t code) { return (code & 0x7f) == 0x7f; }
inline uint8_t e4m3_negate(uint8_t code) { return code ^ 0x80; }

inline double e4m3_value(uint8_t code) {
  if (e4m3_is_nan(code)) return NAN;
  const int field = (code >> 3) & 15, mantissa = code & 7;
  const double magnitude = field == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, field - 10);
  return (code & 0x80) ? -magnitude : magnitude;
}

// The code of an exactly representable value (small integers in the mapping tests).
inline uint8_t e4m3_exact(double value) {
  for (int code = 0; code < 256; ++code)
    if (!e4m3_is_nan(uint8_t(code)) && e4m3_value(uint8_t(code)) == value && !(value == 0 && code != 0))
      return uint8_t(code);
  return kE4m3NanPos;  // not representable: the mapping test then fails loudly
}

// Any code but the two NaNs.
inline uint8_t e4m3_random(Rng& rng) {
  for (;;) {
    const auto code = uint8_t(rng.next());
    if (!e4m3_is_nan(code)) return code;
  }
}

// Random sign and mantissa, exponent field in [lo, hi]; field 0 gives a nonzero
// subnormal, field 15 never the NaN mantissa.
inline uint8_t e4m3_in_fields(Rng& rng, int lo, int hi) {
  const int field = lo + int(rng.below(uint32_t(hi - lo + 1)));
  int mantissa = int(rng.below(8));
  if (field == 0 && mantissa == 0) mantissa = 1 + int(rng.below(7));
  if (field == 15 && mantissa == 7) mantissa = int(rng.below(7));
  return uint8_t((rng.below(2) << 7) | (field << 3) | mantissa);
}

inline uint8_t e4m3_signed_zero(Rng& rng) { return rng.below(2) ? kE4m3NegZero : 0x00; }
inline uint8_t e4m3_nan(Rng& rng) { return rng.below(2) ? kE4m3NanNeg : kE4m3NanPos; }

inline uint32_t f32_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}
inline float f32_from_bits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

// A value with floor(log2|v|) = e, e in [-149, 127]; below -126 a subnormal.
inline float f32_in_binade(Rng& rng, int e, bool negative) {
  uint32_t bits;
  if (e >= -126) {
    bits = uint32_t(e + 127) << 23 | (uint32_t(rng.next()) & 0x7fffffu);
  } else {
    const int lead = e + 149;  // 0..22: the leading bit of the subnormal's fraction field
    bits = (1u << lead) | (uint32_t(rng.next()) & ((1u << lead) - 1));
  }
  return f32_from_bits(bits | (negative ? 0x80000000u : 0u));
}

// Random sign, binade drawn uniformly from [lo, hi].
inline float f32_random(Rng& rng, int lo, int hi) {
  const int e = lo + int(rng.below(uint32_t(hi - lo + 1)));
  return f32_in_binade(rng, e, rng.below(2) != 0);
}

}  // namespace probes
