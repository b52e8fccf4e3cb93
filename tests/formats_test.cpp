// Number formats (SPEC 2): every code against a definition written here from
// the formats' fields, round trips, ties, overflow, subnormals, signed zeros.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/rng.hpp"
#include "test_values.hpp"

namespace dsa {
namespace {

using test::kInf;
using test::kNaN;

// Independent definitions: the value of a (sign, exponent field, mantissa)
// triple of a float format with `mbits` mantissa bits and bias `bias`.
double field_value(int sign, int exponent_field, int mantissa, int mbits, int bias) {
  const double significand = exponent_field == 0 ? mantissa / double(1 << mbits) : 1.0 + mantissa / double(1 << mbits);
  const int exponent = exponent_field == 0 ? 1 - bias : exponent_field - bias;
  return (sign ? -1.0 : 1.0) * std::ldexp(significand, exponent);
}

// NaN -> nullopt-like: returns false for NaN codes.
bool reference_e4m3fn(uint8_t c, double* v) {
  if ((c & 0x7f) == 0x7f) return false;  // S.1111.111
  *v = field_value(c >> 7, (c >> 3) & 0xf, c & 7, 3, 7);
  return true;
}

bool reference_e4m3fnuz(uint8_t c, double* v) {
  if (c == 0x80) return false;  // the only NaN; no -0
  *v = field_value(c >> 7, (c >> 3) & 0xf, c & 7, 3, 8);
  return true;
}

bool same_float(float a, float b) {
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

TEST(Formats, E4m3fnEveryCodeMatchesFieldDefinition) {
  int nan_codes = 0;
  for (int c = 0; c < 256; ++c) {
    double v = 0;
    const float decoded = e4m3fn_to_float(uint8_t(c));
    if (reference_e4m3fn(uint8_t(c), &v)) {
      EXPECT_TRUE(same_float(decoded, float(v))) << "code " << c << " gives " << decoded << ", expected " << v;
      EXPECT_FALSE(fp8_is_nan(Fp8Format::e4m3fn, uint8_t(c)));
    } else {
      ++nan_codes;
      EXPECT_TRUE(std::isnan(decoded)) << c;
      EXPECT_TRUE(fp8_is_nan(Fp8Format::e4m3fn, uint8_t(c))) << c;
    }
    EXPECT_TRUE(same_float(decoded, fp8_to_float(Fp8Format::e4m3fn, uint8_t(c))) || std::isnan(decoded));
    EXPECT_TRUE(same_float(decoded, fp8_decode_table(Fp8Format::e4m3fn)[c]) || std::isnan(decoded));
  }
  EXPECT_EQ(nan_codes, 2);
  // Anchors straight from SPEC 2.
  EXPECT_EQ(e4m3fn_to_float(0x7e), 448.0f);
  EXPECT_EQ(e4m3fn_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3fn_to_float(0x38), 1.0f);
  EXPECT_TRUE(same_float(e4m3fn_to_float(0x80), -0.0f));
  EXPECT_EQ(fp8_max(Fp8Format::e4m3fn), 448.0f);
}

TEST(Formats, E4m3fnuzEveryCodeMatchesFieldDefinition) {
  int nan_codes = 0;
  for (int c = 0; c < 256; ++c) {
    double v = 0;
    const float decoded = e4m3fnuz_to_float(uint8_t(c));
    if (reference_e4m3fnuz(uint8_t(c), &v)) {
      EXPECT_TRUE(same_float(decoded, float(v))) << "code " << c << " gives " << decoded << ", expected " << v;
      EXPECT_FALSE(fp8_is_nan(Fp8Format::e4m3fnuz, uint8_t(c)));
    } else {
      ++nan_codes;
      EXPECT_TRUE(std::isnan(decoded)) << c;
      EXPECT_TRUE(fp8_is_nan(Fp8Format::e4m3fnuz, uint8_t(c)));
    }
  }
  EXPECT_EQ(nan_codes, 1);
  EXPECT_EQ(e4m3fnuz_to_float(0x7f), 240.0f);
  EXPECT_EQ(e4m3fnuz_to_float(0x01), std::ldexp(1.0f, -10));
  EXPECT_EQ(e4m3fnuz_to_float(0x40), 1.0f);
  EXPECT_EQ(fp8_max(Fp8Format::e4m3fnuz), 240.0f);
}

// SPEC 2: "the same byte read as fnuz is half its e4m3fn value (except the special codes)".
TEST(Formats, FnuzIsHalfOfFnForOrdinaryCodes) {
  for (int c = 0; c < 256; ++c) {
    if (c == 0x7f || c == 0xff || c == 0x80) continue;
    EXPECT_EQ(e4m3fnuz_to_float(uint8_t(c)), e4m3fn_to_float(uint8_t(c)) / 2) << c;
  }
}

// Positive finite values of a format in code order, which is value order.
std::vector<float> positive_values(Fp8Format f) {
  std::vector<float> values;
  for (int c = 0; c < 128; ++c) {
    if (!fp8_is_nan(f, uint8_t(c))) values.push_back(fp8_to_float(f, uint8_t(c)));
  }
  return values;
}

TEST(Formats, Fp8RoundTripEveryNonNanCode) {
  for (Fp8Format f : {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz}) {
    for (int c = 0; c < 256; ++c) {
      if (fp8_is_nan(f, uint8_t(c))) continue;
      const float v = fp8_to_float(f, uint8_t(c));
      EXPECT_EQ(float_to_fp8(f, v, Overflow::saturate), c) << to_string(f) << " code " << c;
      EXPECT_EQ(float_to_fp8(f, v, Overflow::to_nan), c) << to_string(f) << " code " << c;
    }
  }
}

TEST(Formats, Fp8CodesIncreaseWithValue) {
  for (Fp8Format f : {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz}) {
    const std::vector<float> v = positive_values(f);
    ASSERT_EQ(v.size(), f == Fp8Format::e4m3fn ? 127u : 128u);
    for (size_t i = 1; i < v.size(); ++i) EXPECT_LT(v[i - 1], v[i]);
  }
}

// Exactly between two neighbours: the one with the even mantissa (even code);
// a hair above or below: the nearer one. Subnormals and zero included.
TEST(Formats, Fp8RoundsToNearestTiesToEven) {
  for (Fp8Format f : {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz}) {
    const std::vector<float> v = positive_values(f);
    for (size_t i = 0; i + 1 < v.size(); ++i) {
      const float mid = (v[i] + v[i + 1]) / 2;  // exact: fp8 values have 4 bits
      const int even = (i % 2 == 0) ? int(i) : int(i + 1);
      for (float sign : {1.0f, -1.0f}) {
        const int sign_bit = sign < 0 && !(f == Fp8Format::e4m3fnuz && even == 0) ? 0x80 : 0;
        EXPECT_EQ(float_to_fp8(f, sign * mid), even | sign_bit) << to_string(f) << " tie " << mid;
        const int up_bit = sign < 0 ? 0x80 : 0;
        EXPECT_EQ(float_to_fp8(f, sign * std::nextafter(mid, kInf)), int(i + 1) | up_bit) << mid;
        const int down_bit = sign < 0 && !(f == Fp8Format::e4m3fnuz && i == 0) ? 0x80 : 0;
        EXPECT_EQ(float_to_fp8(f, sign * std::nextafter(mid, 0.0f)), int(i) | down_bit) << mid;
      }
    }
  }
}

TEST(Formats, E4m3fnOverflowSaturatesOrGivesNan) {
  struct Case {
    float x;
    uint8_t saturate, to_nan;
  };
  const float above_tie = std::nextafter(464.0f, kInf);
  for (const Case& c : {Case{448.0f, 0x7e, 0x7e}, Case{449.0f, 0x7e, 0x7e}, Case{464.0f, 0x7e, 0x7e},
                        Case{above_tie, 0x7e, 0x7f}, Case{480.0f, 0x7e, 0x7f}, Case{1e30f, 0x7e, 0x7f},
                        Case{kInf, 0x7e, 0x7f}, Case{-464.0f, 0xfe, 0xfe}, Case{-above_tie, 0xfe, 0xff},
                        Case{-kInf, 0xfe, 0xff}}) {
    EXPECT_EQ(float_to_e4m3fn(c.x, Overflow::saturate), c.saturate) << c.x;
    EXPECT_EQ(float_to_e4m3fn(c.x, Overflow::to_nan), c.to_nan) << c.x;
  }
}

TEST(Formats, E4m3fnuzOverflowSaturatesOrGivesNan) {
  // 248 is the tie between 240 (odd mantissa 111) and the missing 256: it rounds up, past max.
  struct Case {
    float x;
    uint8_t saturate, to_nan;
  };
  for (const Case& c : {Case{240.0f, 0x7f, 0x7f}, Case{std::nextafter(248.0f, 0.0f), 0x7f, 0x7f},
                        Case{248.0f, 0x7f, 0x80}, Case{1000.0f, 0x7f, 0x80}, Case{kInf, 0x7f, 0x80},
                        Case{-248.0f, 0xff, 0x80}, Case{-kInf, 0xff, 0x80}}) {
    EXPECT_EQ(float_to_e4m3fnuz(c.x, Overflow::saturate), c.saturate) << c.x;
    EXPECT_EQ(float_to_e4m3fnuz(c.x, Overflow::to_nan), c.to_nan) << c.x;
  }
}

TEST(Formats, Fp8NanAndPad) {
  EXPECT_EQ(float_to_e4m3fn(kNaN), 0x7f);
  EXPECT_EQ(float_to_e4m3fn(-kNaN), 0xff);
  EXPECT_EQ(float_to_e4m3fnuz(kNaN), 0x80);
  EXPECT_EQ(float_to_e4m3fnuz(-kNaN, Overflow::to_nan), 0x80);
  // SPEC 5: -inf cast to fp8 is a NaN byte.
  EXPECT_EQ(fp8_pad_code(Fp8Format::e4m3fn), 0xff);
  EXPECT_EQ(fp8_pad_code(Fp8Format::e4m3fnuz), 0x80);
  EXPECT_TRUE(fp8_is_nan(Fp8Format::e4m3fn, fp8_pad_code(Fp8Format::e4m3fn)));
}

TEST(Formats, Fp8SubnormalsAndSignedZero) {
  const float min_fn = std::ldexp(1.0f, -9), min_fnuz = std::ldexp(1.0f, -10);
  EXPECT_EQ(float_to_e4m3fn(min_fn), 0x01);
  EXPECT_EQ(float_to_e4m3fn(7 * min_fn), 0x07);  // largest subnormal
  EXPECT_EQ(float_to_e4m3fn(8 * min_fn), 0x08);  // smallest normal 2^-6
  EXPECT_EQ(float_to_e4m3fn(min_fn / 2), 0x00);  // tie with zero: even
  EXPECT_EQ(float_to_e4m3fn(-min_fn / 2), 0x80);
  EXPECT_EQ(float_to_e4m3fn(std::ldexp(1.0f, -40)), 0x00);
  EXPECT_EQ(float_to_e4m3fn(-0.0f), 0x80);
  EXPECT_EQ(float_to_e4m3fnuz(min_fnuz), 0x01);
  EXPECT_EQ(float_to_e4m3fnuz(3 * min_fnuz / 2), 0x02);  // tie 1 | 2: even
  EXPECT_EQ(float_to_e4m3fnuz(-0.0f), 0x00);             // no -0 in fnuz
  EXPECT_EQ(float_to_e4m3fnuz(-min_fnuz / 2), 0x00);
  EXPECT_EQ(float_to_e4m3fnuz(-std::ldexp(1.0f, -60), Overflow::to_nan), 0x00);
  EXPECT_EQ(float_to_e4m3fnuz(-min_fnuz), 0x81);
}

TEST(Formats, Fp8NamesParse) {
  EXPECT_EQ(parse_fp8_format("e4m3fn"), Fp8Format::e4m3fn);
  EXPECT_EQ(parse_fp8_format(to_string(Fp8Format::e4m3fnuz)), Fp8Format::e4m3fnuz);
  try {
    parse_fp8_format("e5m2");
    FAIL() << "no throw";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "fp8");
    EXPECT_NE(std::string(e.what()).find("e5m2"), std::string::npos);
  }
}

TEST(Formats, Ue8m0EveryCode) {
  float power = 1.0f;
  for (int i = 0; i < 127; ++i) power /= 2;  // 2^-127, built without ldexp
  for (int c = 0; c < 255; ++c) {
    EXPECT_EQ(ue8m0_to_float(uint8_t(c)), power) << c;
    power *= 2;
  }
  EXPECT_TRUE(std::isnan(ue8m0_to_float(0xff)));
}

TEST(Formats, Ue8m0CeilIsSmallestPowerOfTwoAbove) {
  for (int c = 0; c < 255; ++c) {
    const float p = ue8m0_to_float(uint8_t(c));
    EXPECT_EQ(float_to_ue8m0_ceil(p), c) << c;
    EXPECT_EQ(float_to_ue8m0_ceil(std::nextafter(p, 0.0f)), c) << c;
    if (c < 254) {
      EXPECT_EQ(float_to_ue8m0_ceil(std::nextafter(p, kInf)), c + 1) << c;
    }
    if (c >= 1 && c < 254) {
      EXPECT_EQ(float_to_ue8m0_ceil(p * 1.5f), c + 1) << c;
    }
  }
  EXPECT_EQ(float_to_ue8m0_ceil(std::numeric_limits<float>::denorm_min()), 0);
  EXPECT_EQ(float_to_ue8m0_ceil(3.0f / 448.0f), 127 - 7);  // 0.0067 -> 2^-7
  for (float bad : {0.0f, -1.0f, kInf, kNaN, std::nextafter(ue8m0_to_float(254), kInf)}) {
    EXPECT_THROW(float_to_ue8m0_ceil(bad), InvalidInput) << bad;
  }
}

TEST(Formats, E2m1EveryCode) {
  const float magnitudes[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 16; ++c) {
    const float expected = (c & 8) ? -magnitudes[c & 7] : magnitudes[c & 7];
    EXPECT_TRUE(same_float(e2m1_to_float(uint8_t(c)), expected)) << c;
    EXPECT_EQ(float_to_e2m1(expected), c) << c;  // round trip, -0 -> 0x8 included
  }
}

TEST(Formats, E2m1TiesSaturationAndNan) {
  const float magnitudes[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int i = 0; i + 1 < 8; ++i) {
    const float mid = (magnitudes[i] + magnitudes[i + 1]) / 2;
    const int even = (i % 2 == 0) ? i : i + 1;
    EXPECT_EQ(float_to_e2m1(mid), even) << mid;
    EXPECT_EQ(float_to_e2m1(-mid), even | 8) << mid;
    EXPECT_EQ(float_to_e2m1(std::nextafter(mid, kInf)), i + 1) << mid;
    EXPECT_EQ(float_to_e2m1(std::nextafter(mid, 0.0f)), i) << mid;
  }
  EXPECT_EQ(float_to_e2m1(6.5f), 0x7);
  EXPECT_EQ(float_to_e2m1(1e30f), 0x7);
  EXPECT_EQ(float_to_e2m1(kInf), 0x7);
  EXPECT_EQ(float_to_e2m1(-kInf), 0xf);
  EXPECT_EQ(float_to_e2m1(kNaN), 0x7);
  EXPECT_EQ(e2m1_pack(0x3, 0xc), 0xc3);
  EXPECT_EQ(e2m1_low(0xc3), 0x3);
  EXPECT_EQ(e2m1_high(0xc3), 0xc);
}

// A block whose values are e2m1 values times 2^k with max |v| = 6 * 2^k
// quantizes exactly: scale byte 127 + k, the codes themselves.
TEST(Formats, Mxfp4QuantizesGridValuesExactly) {
  Rng rng(7);
  for (int k : {-20, -3, 0, 1, 9}) {
    std::vector<float> x(64);
    std::vector<uint8_t> codes(64);
    for (int i = 0; i < 64; ++i) {
      codes[i] = uint8_t(rng.uniform_int(0, 15));
      if (i % 32 == 5) codes[i] = 0x7;  // the block maximum is 6
      x[i] = std::ldexp(e2m1_to_float(codes[i]), k);
    }
    std::vector<uint8_t> packed(32), scales(2);
    quantize_mxfp4(x, packed, scales);
    EXPECT_EQ(scales[0], 127 + k);
    EXPECT_EQ(scales[1], 127 + k);
    for (int i = 0; i < 64; ++i) {
      const uint8_t nibble = i % 2 ? e2m1_high(packed[i / 2]) : e2m1_low(packed[i / 2]);
      EXPECT_EQ(nibble, codes[i]) << i;
      EXPECT_TRUE(same_float(mxfp4_element(packed, scales, i), x[i])) << i;
    }
  }
}

TEST(Formats, Mxfp4ScaleIsCeilOfAmaxOverSix) {
  Rng rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> x(128);
    const double spread = std::ldexp(1.0, int(rng.uniform_int(-30, 30)));
    for (float& v : x) v = float(rng.normal() * spread);
    std::vector<uint8_t> packed(64), scales(4);
    quantize_mxfp4(x, packed, scales);
    for (int b = 0; b < 4; ++b) {
      double amax = 0;
      for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(double(x[b * 32 + i])));
      const double scale = std::ldexp(1.0, scales[b] - 127);
      EXPECT_GE(scale, amax / 6 * (1 - 1e-6)) << trial;  // the maximum never saturates
      EXPECT_LT(scale / 2, amax / 6 * (1 + 1e-6)) << trial;
      for (int i = 0; i < 32; ++i) {
        const double v = x[b * 32 + i] / scale, q = mxfp4_element(packed, scales, b * 32 + i) / scale;
        // Nearest on the e2m1 grid: within half a step (0.25 below 2, 0.5 below 4, 1 above).
        const double half_step = std::fabs(v) < 2 ? 0.25 : std::fabs(v) < 4 ? 0.5 : 1.0;
        EXPECT_LE(std::fabs(v - q), half_step + 1e-12) << v;
      }
    }
  }
}

TEST(Formats, Mxfp4ZeroBlockAndErrors) {
  std::vector<float> x(32, 0.0f);
  std::vector<uint8_t> packed(16, 0xaa), scales(1, 0xaa);
  quantize_mxfp4(x, packed, scales);
  EXPECT_EQ(scales[0], 1);  // amax floor 6 * 2^-126 -> 2^-126
  for (uint8_t b : packed) EXPECT_EQ(b, 0);
  std::vector<float> bad(33, 1.0f);
  std::vector<uint8_t> p2(16), s2(1);
  EXPECT_THROW(quantize_mxfp4(std::span<const float>(bad).first(31), p2, s2), InvalidInput);
  x[3] = kNaN;
  EXPECT_THROW(quantize_mxfp4(x, packed, scales), InvalidInput);
  x[3] = kInf;
  EXPECT_THROW(quantize_mxfp4(x, packed, scales), InvalidInput);
  x[3] = 1.0f;
  std::vector<uint8_t> short_packed(15);
  EXPECT_THROW(quantize_mxfp4(x, short_packed, scales), InvalidInput);
}

TEST(Formats, Bf16RoundTripEveryValue) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float v = bf16_to_float(uint16_t(b));
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    EXPECT_EQ(bits, b << 16);
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(v))));
    } else {
      EXPECT_EQ(float_to_bf16(v), b) << b;
    }
  }
}

TEST(Formats, Bf16RoundsToNearestEven) {
  for (uint32_t b = 0; b < 0x7f80; b += 3) {  // positive finite, every third
    const float tie = float_from_bits((b << 16) | 0x8000);
    const uint32_t even = (b % 2 == 0) ? b : b + 1;
    EXPECT_EQ(float_to_bf16(tie), even) << b;
    EXPECT_EQ(float_to_bf16(-tie), even | 0x8000) << b;
    EXPECT_EQ(float_to_bf16(float_from_bits((b << 16) | 0x8001)), b + 1) << b;
    EXPECT_EQ(float_to_bf16(float_from_bits((b << 16) | 0x7fff)), b) << b;
  }
  EXPECT_EQ(float_to_bf16(float_from_bits(0x7f7f8000)), 0x7f80);  // tie past max: inf
  EXPECT_EQ(float_to_bf16(kInf), 0x7f80);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(float_from_bits(0x7f800001)))));  // sNaN stays NaN
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(-kNaN))));
  EXPECT_EQ(round_to_bf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);  // tie to even
  EXPECT_EQ(round_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
}

}  // namespace
}  // namespace dsa
