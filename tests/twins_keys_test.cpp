// The radix keys of the twins and kernels (optimized/common) against independent definitions: the SPEC
// order of the reference, and fp16 rounding by search over all fp16 values.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "dsa/common/radix_keys.hpp"
#include "dsa/rng.hpp"
#include "dsa/topk.hpp"

namespace dsa::common {
namespace {

float from_bits(uint32_t b) { return std::bit_cast<float>(b); }

// fp16 bits -> value, exactly (every fp16 value is a float).
float half_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const float mag = e == 0 ? std::ldexp(float(m), -24) : e == 31 ? INFINITY : std::ldexp(float(1024 + m), e - 25);
  return (h & 0x8000) ? -mag : mag;
}

// Round-to-nearest-even to fp16 by definition: the nearest of the finite fp16
// magnitudes (ties to the even code), or infinity from 65520 on.
uint16_t half_by_search(float v) {
  static const std::vector<float> magnitudes = [] {
    std::vector<float> m;
    for (uint16_t h = 0; h < 0x7c00; ++h) m.push_back(half_value(h));
    return m;
  }();
  const float a = std::fabs(v);
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a >= 65504.0f) return sign | 0x7bff;  // below the midpoint to infinity
  const auto hi = std::lower_bound(magnitudes.begin(), magnitudes.end(), a);
  if (hi == magnitudes.begin()) return sign;
  if (*hi == a) return sign | uint16_t(hi - magnitudes.begin());
  const auto lo = hi - 1;
  const double dlo = double(a) - double(*lo), dhi = double(*hi) - double(a);
  uint16_t code = uint16_t(lo - magnitudes.begin());
  if (dhi < dlo || (dhi == dlo && (code & 1))) ++code;
  return sign | code;
}

std::vector<float> interesting_floats(int random_count) {
  std::vector<float> v = {0.0f, -0.0f, INFINITY, -INFINITY, 65504.0f, 65519.99f, 65520.0f, -65520.0f,
                          std::ldexp(1.0f, -14), std::ldexp(1.0f, -24), std::ldexp(1.0f, -25),
                          std::ldexp(3.0f, -26), std::ldexp(1.0f, -149), 1.0f, -1.0f, 1.0009765625f,
                          1.00048828125f, 1.00146484375f, -2.5f, std::nanf(""), -std::nanf(""), from_bits(0x7f800001u),
                          from_bits(0xff800001u), from_bits(0x7fa5a5a5u)};
  Rng rng(11);
  for (int i = 0; i < random_count; ++i) v.push_back(from_bits(rng.next_u32()));
  for (int i = 0; i < random_count; ++i) v.push_back(float(rng.normal() * std::ldexp(1.0, int(rng.uniform_int(-30, 20)))));
  return v;
}

// Both ways of order_key (the bits here, the compare in CUDA device code) are the reference's key.
TEST(TwinKeys, OrderKeyIsTheReferenceOrderKey) {
  for (const float v : interesting_floats(20000)) {
    EXPECT_EQ(order_key_by_bits(v), topk_order_key(v)) << std::bit_cast<uint32_t>(v);
    EXPECT_EQ(order_key_by_compare(v), topk_order_key(v)) << std::bit_cast<uint32_t>(v);
  }
  // Every sign, exponent (denormals, infinities and NaNs included) and top 15 mantissa bits, with
  // the low bits at their edges.
  int64_t differing_bits = 0, differing_compare = 0;
  for (uint32_t high = 0; high < (1u << 16); ++high)
    for (const uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0xffffu}) {
      const float v = from_bits(high << 16 | low);
      differing_bits += order_key_by_bits(v) != topk_order_key(v);
      differing_compare += order_key_by_compare(v) != topk_order_key(v);
    }
  EXPECT_EQ(differing_bits, 0);
  EXPECT_EQ(differing_compare, 0);
}

// The value-space maximum of CUDA device code, and max_order_key as the host computes it.
TEST(TwinKeys, KeyMaxIsTheMaximumOfTheKeys) {
  const auto v = interesting_floats(300);
  for (const float a : v)
    for (const float b : v) {
      const uint32_t larger = std::max(order_key(a), order_key(b));
      ASSERT_EQ(order_key(key_max_by_compare(a, b)), larger)
          << std::bit_cast<uint32_t>(a) << " " << std::bit_cast<uint32_t>(b);
      const float pair[2] = {a, b};
      ASSERT_EQ(max_order_key(pair, 0, 2), larger) << std::bit_cast<uint32_t>(a) << " " << std::bit_cast<uint32_t>(b);
    }
  EXPECT_EQ(max_order_key(v.data(), 3, 3), kMinusInfKey);
}

TEST(TwinKeys, HalfRoundingMatchesTheDefinition) {
  for (const float v : interesting_floats(20000)) {
    if (std::isnan(v)) continue;
    EXPECT_EQ(float_to_half_bits(v), half_by_search(v)) << "v = " << v << " bits " << std::bit_cast<uint32_t>(v);
  }
  // Every midpoint between neighbouring fp16 values rounds to the even one.
  for (uint16_t h = 0; h < 0x7bff; h += 7) {
    const double mid = (double(half_value(h)) + double(half_value(uint16_t(h + 1)))) / 2;
    EXPECT_EQ(float_to_half_bits(float(mid)), (h & 1) ? h + 1 : h) << h;
  }
}

TEST(TwinKeys, CoarseKeysAreMonotoneInTheSpecOrder) {
  auto v = interesting_floats(5000);
  std::sort(v.begin(), v.end(), [](float a, float b) { return topk_order_key(a) < topk_order_key(b); });
  for (size_t i = 1; i < v.size(); ++i) {
    EXPECT_LE(half_order_key(v[i - 1]), half_order_key(v[i])) << v[i - 1] << " then " << v[i];
    EXPECT_LE(coarse_bin_2048(v[i - 1]), coarse_bin_2048(v[i]));
    EXPECT_LE(coarse_bin_256(v[i - 1]), coarse_bin_256(v[i]));
  }
  EXPECT_EQ(half_order_key(0.0f), half_order_key(-0.0f));
  EXPECT_EQ(half_order_key(std::nanf("")), 0xffffu);
  EXPECT_EQ(half_order_key(-std::nanf("")), 0xffffu);
  EXPECT_LT(half_order_key(INFINITY), half_order_key(std::nanf("")));
  // [1, 1.245) is one coarse bin of persistent_topk's filtered pass (vLLM #51782).
  EXPECT_EQ(coarse_bin_256(1.0f), coarse_bin_256(1.2449f));
  EXPECT_NE(coarse_bin_256(1.0f), coarse_bin_256(1.25f));
}

}  // namespace
}  // namespace dsa::common
