// Encoding and decoding of the indexer's number formats (see formats.hpp).
//
// Every 8-bit and 4-bit float format here is a "minifloat": sign, an exponent
// field with a bias, a few mantissa bits, subnormals when the field is zero.
// One encoder serves them all; it works in double, where every step is exact
// (an fp32 input has 24 significant bits, divided by a power of two).
#include "dsa/formats.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "dsa/error.hpp"

namespace dsa {
namespace {

struct Minifloat {
  int bias;
  int mantissa_bits;
  int sign_shift;       // 7 for fp8, 3 for e2m1
  double max_finite;
  uint8_t max_code;     // magnitude bits of max_finite
  bool keeps_sign_of_zero;
  bool nan_keeps_sign;
  uint8_t nan_code;     // magnitude (or full code when !nan_keeps_sign)
};

constexpr Minifloat kE4m3fn{7, 3, 7, 448.0, 0x7e, true, true, 0x7f};
constexpr Minifloat kE4m3fnuz{8, 3, 7, 240.0, 0x7f, false, false, 0x80};
// e2m1 has no NaN: PTX satfinite sends NaN to +max.
constexpr Minifloat kE2m1{1, 1, 3, 6.0, 0x7, true, false, 0x7};

// Round-to-nearest-even of a >= 0 onto the format's grid, exponent unbounded above.
double round_to_grid(const Minifloat& f, double a) {
  if (a == 0.0) return 0.0;
  const int min_normal_exp = 1 - f.bias;
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): floor(log2 a) = e - 1
  const int exponent = std::max(e - 1, min_normal_exp);
  const double quantum = std::ldexp(1.0, exponent - f.mantissa_bits);
  const double n = a / quantum;  // exact: a has 24 bits, quantum is a power of two
  double whole = std::floor(n);
  const double rest = n - whole;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(whole, 2.0) != 0.0)) whole += 1.0;
  return whole * quantum;
}

// The code of a value that lies on the grid and within range (sign excluded).
uint8_t grid_value_code(const Minifloat& f, double r) {
  if (r == 0.0) return 0;
  const int min_normal_exp = 1 - f.bias;
  int e = 0;
  std::frexp(r, &e);
  const int exponent = e - 1;
  if (exponent < min_normal_exp) {
    return uint8_t(r / std::ldexp(1.0, min_normal_exp - f.mantissa_bits));
  }
  const int mantissa = int(r / std::ldexp(1.0, exponent - f.mantissa_bits)) - (1 << f.mantissa_bits);
  return uint8_t(((exponent + f.bias) << f.mantissa_bits) | mantissa);
}

uint8_t encode(const Minifloat& f, float x, Overflow overflow) {
  const bool negative = std::signbit(x);
  const uint8_t sign_bit = uint8_t(1u << f.sign_shift);
  if (std::isnan(x)) return f.nan_keeps_sign && negative ? uint8_t(f.nan_code | sign_bit) : f.nan_code;
  const double a = std::fabs(double(x));
  const double r = std::isinf(x) ? std::numeric_limits<double>::infinity() : round_to_grid(f, a);
  uint8_t magnitude = 0;
  if (r > f.max_finite) {
    if (overflow == Overflow::to_nan) {
      return f.nan_keeps_sign && negative ? uint8_t(f.nan_code | sign_bit) : f.nan_code;
    }
    magnitude = f.max_code;
  } else {
    magnitude = grid_value_code(f, r);
  }
  if (magnitude == 0 && !f.keeps_sign_of_zero) return 0;
  return negative ? uint8_t(magnitude | sign_bit) : magnitude;
}

float decode(const Minifloat& f, uint8_t code) {
  const uint8_t sign_bit = uint8_t(1u << f.sign_shift);
  const int magnitude = code & (sign_bit - 1);
  const int exponent_field = magnitude >> f.mantissa_bits;
  const int mantissa = magnitude & ((1 << f.mantissa_bits) - 1);
  const double value = exponent_field == 0
                           ? std::ldexp(double(mantissa), 1 - f.bias - f.mantissa_bits)
                           : std::ldexp(double((1 << f.mantissa_bits) | mantissa),
                                        exponent_field - f.bias - f.mantissa_bits);
  return float((code & sign_bit) ? -value : value);
}

std::array<float, 256> build_table(Fp8Format f) {
  std::array<float, 256> table{};
  for (int code = 0; code < 256; ++code) {
    table[code] = fp8_is_nan(f, uint8_t(code)) ? std::numeric_limits<float>::quiet_NaN()
                                                : decode(f == Fp8Format::e4m3fn ? kE4m3fn : kE4m3fnuz, uint8_t(code));
  }
  return table;
}

}  // namespace

std::string_view to_string(Fp8Format f) { return f == Fp8Format::e4m3fn ? "e4m3fn" : "e4m3fnuz"; }

Fp8Format parse_fp8_format(std::string_view name) {
  if (name == "e4m3fn") return Fp8Format::e4m3fn;
  if (name == "e4m3fnuz") return Fp8Format::e4m3fnuz;
  throw InvalidInput("fp8", "unknown fp8 format '" + excerpt(name) + "' (expected e4m3fn or e4m3fnuz)");
}

float e4m3fn_to_float(uint8_t code) { return fp8_decode_table(Fp8Format::e4m3fn)[code]; }
float e4m3fnuz_to_float(uint8_t code) { return fp8_decode_table(Fp8Format::e4m3fnuz)[code]; }
uint8_t float_to_e4m3fn(float x, Overflow overflow) { return encode(kE4m3fn, x, overflow); }
uint8_t float_to_e4m3fnuz(float x, Overflow overflow) { return encode(kE4m3fnuz, x, overflow); }

float fp8_to_float(Fp8Format f, uint8_t code) { return fp8_decode_table(f)[code]; }

uint8_t float_to_fp8(Fp8Format f, float x, Overflow overflow) {
  return encode(f == Fp8Format::e4m3fn ? kE4m3fn : kE4m3fnuz, x, overflow);
}

float fp8_max(Fp8Format f) { return f == Fp8Format::e4m3fn ? kE4m3fnMax : kE4m3fnuzMax; }

bool fp8_is_nan(Fp8Format f, uint8_t code) {
  return f == Fp8Format::e4m3fn ? (code & 0x7f) == 0x7f : code == 0x80;
}

uint8_t fp8_pad_code(Fp8Format f) {
  return float_to_fp8(f, -std::numeric_limits<float>::infinity(), Overflow::to_nan);
}

const float* fp8_decode_table(Fp8Format f) {
  static const std::array<float, 256> fn = build_table(Fp8Format::e4m3fn);
  static const std::array<float, 256> fnuz = build_table(Fp8Format::e4m3fnuz);
  return f == Fp8Format::e4m3fn ? fn.data() : fnuz.data();
}

float ue8m0_to_float(uint8_t code) {
  if (code == 0xff) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, int(code) - 127);
}

uint8_t float_to_ue8m0_ceil(float x) {
  if (!(x > 0.0f) || !std::isfinite(x)) {
    throw InvalidInput("scale", "ue8m0 needs a positive finite value, got " + std::to_string(x));
  }
  const uint32_t bits = float_bits(x);
  const uint32_t exponent_field = bits >> 23;
  const uint32_t mantissa = bits & 0x7fffff;
  if (exponent_field == 0) return mantissa <= 0x400000 ? 0 : 1;  // subnormal: 2^-127 or 2^-126
  const uint32_t code = exponent_field + (mantissa != 0 ? 1 : 0);
  if (code > 254) throw InvalidInput("scale", "ue8m0 cannot hold the power of two above " + std::to_string(x));
  return uint8_t(code);
}

float e2m1_to_float(uint8_t nibble) { return decode(kE2m1, uint8_t(nibble & 0xf)); }

uint8_t float_to_e2m1(float x) { return encode(kE2m1, x, Overflow::saturate); }

void quantize_mxfp4(std::span<const float> x, std::span<uint8_t> packed, std::span<uint8_t> scales) {
  const size_t n = x.size();
  if (n % 32 != 0) throw InvalidInput("x", "MXFP4 needs a multiple of 32 values, got " + std::to_string(n));
  if (packed.size() != n / 2 || scales.size() != n / 32) {
    throw InvalidInput("x", "MXFP4 of " + std::to_string(n) + " values needs " + std::to_string(n / 2) +
                                " packed bytes and " + std::to_string(n / 32) + " scales");
  }
  const float min_amax = std::ldexp(6.0f, -126);
  const float one_sixth = 1.0f / 6.0f;
  for (size_t block = 0; block < n / 32; ++block) {
    const float* v = x.data() + block * 32;
    float amax = 0.0f;
    for (int i = 0; i < 32; ++i) {
      if (!std::isfinite(v[i])) {
        throw InvalidInput("x", "non-finite value " + std::to_string(v[i]) + " at " + std::to_string(block * 32 + i));
      }
      amax = std::max(amax, std::fabs(v[i]));
    }
    amax = std::max(amax, min_amax);
    const uint8_t code = float_to_ue8m0_ceil(amax * one_sixth);  // >= 2^-126: code >= 1
    const float inv_scale = std::ldexp(1.0f, 127 - int(code));
    scales[block] = code;
    for (int i = 0; i < 32; i += 2) {
      packed[block * 16 + i / 2] = e2m1_pack(float_to_e2m1(v[i] * inv_scale), float_to_e2m1(v[i + 1] * inv_scale));
    }
  }
}

float mxfp4_element(std::span<const uint8_t> packed, std::span<const uint8_t> scales, int i) {
  const uint8_t byte = packed[size_t(i) / 2];
  const uint8_t nibble = (i % 2 == 0) ? e2m1_low(byte) : e2m1_high(byte);
  const uint8_t scale = scales[size_t(i) / 32];
  if (scale == 0xff) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(e2m1_to_float(nibble), int(scale) - 127);
}

float bf16_to_float(uint16_t bits) { return float_from_bits(uint32_t(bits) << 16); }

uint16_t float_to_bf16(float x) {
  const uint32_t bits = float_bits(x);
  if (std::isnan(x)) return uint16_t((bits >> 16) | 0x0040);  // quiet, sign and payload top kept
  const uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return uint16_t((bits + rounding) >> 16);
}

uint32_t float_bits(float x) { return std::bit_cast<uint32_t>(x); }
float float_from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }

}  // namespace dsa
