// The paged K cache (SPEC 3): layouts byte by byte, vLLM's quantizer, reading
// through page tables that share, shuffle and skip pages, and every bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/kcache.hpp"
#include "dsa/rng.hpp"

namespace dsa {
namespace {

std::vector<float> random_token(Rng& rng, int32_t D, double spread) {
  std::vector<float> k(static_cast<size_t>(D));
  for (float& v : k) v = float(rng.normal() * spread);
  return k;
}

// Token n's values: a different spread per token, so scales differ.
std::vector<std::vector<float>> random_tokens(uint64_t seed, int64_t n, int32_t D) {
  Rng rng(seed);
  std::vector<std::vector<float>> tokens;
  for (int64_t i = 0; i < n; ++i) tokens.push_back(random_token(rng, D, std::ldexp(1.0, int(rng.uniform_int(-8, 8)))));
  return tokens;
}

// Writes token n into page page_table[n / bs], slot n % bs.
void fill(PagedKCache& cache, const std::vector<int32_t>& page_table, const std::vector<std::vector<float>>& tokens,
          QuantizeOptions options = {}) {
  for (size_t n = 0; n < tokens.size(); ++n) {
    quantize_token_into_cache(cache, page_table[n / size_t(cache.block_size)], int32_t(n % size_t(cache.block_size)),
                              tokens[n], options);
  }
}

// The bytes one token quantizes to, from a one-token block_flat (or mxfp4) cache:
// D codes (or D/2 packed) followed by the 4-byte scale record.
std::vector<uint8_t> lone_token_bytes(ElementFormat element, const std::vector<float>& k, QuantizeOptions options = {}) {
  const CacheLayout layout = element == ElementFormat::mxfp4 ? CacheLayout::mxfp4 : CacheLayout::block_flat;
  PagedKCache lone = make_kcache(layout, element, 1, 1, int32_t(k.size()));
  quantize_token_into_cache(lone, 0, 0, k, options);
  return lone.bytes;
}

std::string thrown_argument(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.argument() + " | " + e.what();
  }
  return "<no throw>";
}

TEST(KCache, NamesParseAndPrint) {
  for (CacheLayout l : {CacheLayout::block_flat, CacheLayout::preshuffle, CacheLayout::mxfp4}) {
    EXPECT_EQ(parse_cache_layout(to_string(l)), l);
  }
  for (ElementFormat e : {ElementFormat::e4m3fn, ElementFormat::e4m3fnuz, ElementFormat::mxfp4}) {
    EXPECT_EQ(parse_element_format(to_string(e)), e);
  }
  EXPECT_EQ(to_string(CacheLayout::preshuffle), "preshuffle");
  EXPECT_EQ(fp8_of(ElementFormat::e4m3fnuz), Fp8Format::e4m3fnuz);
  EXPECT_EQ(thrown_argument([] { parse_cache_layout("shuffled"); }).substr(0, 9), "layout | ");
  EXPECT_EQ(thrown_argument([] { parse_element_format("int8"); }).substr(0, 6), "fp8 | ");
  EXPECT_THROW(fp8_of(ElementFormat::mxfp4), InvalidInput);
  EXPECT_FALSE(is_fp8(ElementFormat::mxfp4));
}

TEST(KCache, PageGeometry) {
  EXPECT_EQ(make_kcache(CacheLayout::block_flat, ElementFormat::e4m3fn, 3, 64, 128).page_bytes(), 64u * 132);
  EXPECT_EQ(make_kcache(CacheLayout::preshuffle, ElementFormat::e4m3fnuz, 3, 16, 128).page_bytes(), 16u * 132);
  const PagedKCache mx = make_kcache(CacheLayout::mxfp4, ElementFormat::mxfp4, 2, 256, 64);
  EXPECT_EQ(mx.page_bytes(), 256u * 36);
  EXPECT_EQ(mx.bytes.size(), 2u * 256 * 36);
  EXPECT_EQ(mx.scale_offset(3), 256u * 32 + 12);
  EXPECT_EQ(mx.value_offset(3, 7), 3u * 32 + 3);
}

// SPEC 3's formula on every (t, d) of a page: the preshuffle cache holds at
// byte(t, d) what the block-flat cache holds at t * D + d; the scales are identical.
TEST(KCache, PreshuffleBytesFollowSpecFormula) {
  const int32_t bs = 64, D = 128;
  const auto tokens = random_tokens(1, 2 * bs, D);
  const std::vector<int32_t> table = {1, 0};
  PagedKCache flat = make_kcache(CacheLayout::block_flat, ElementFormat::e4m3fnuz, 2, bs, D);
  PagedKCache shuffled = make_kcache(CacheLayout::preshuffle, ElementFormat::e4m3fnuz, 2, bs, D);
  fill(flat, table, tokens);
  fill(shuffled, table, tokens);
  const size_t page_bytes = flat.page_bytes();
  std::vector<int> hits(size_t(bs) * D, 0);
  for (int32_t p = 0; p < 2; ++p) {
    for (int32_t t = 0; t < bs; ++t) {
      for (int32_t d = 0; d < D; ++d) {
        const size_t spec = size_t(t / 16) * 16 * D + size_t(d / 16) * 256 + size_t(t % 16) * 16 + d % 16;
        EXPECT_EQ(shuffled.value_offset(t, d), spec);
        ASSERT_EQ(shuffled.bytes[p * page_bytes + spec], flat.bytes[p * page_bytes + size_t(t) * D + d])
            << "page " << p << " t " << t << " d " << d;
        if (p == 0) ++hits[spec];
      }
    }
    EXPECT_TRUE(std::equal(flat.bytes.begin() + p * page_bytes + bs * D, flat.bytes.begin() + (p + 1) * page_bytes,
                           shuffled.bytes.begin() + p * page_bytes + bs * D));
  }
  EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));  // a permutation
}

// The MXFP4 page: packed pairs token-major, then per token an int32 whose byte i
// is the scale of elements [32i, 32i + 32), unused bytes zero.
TEST(KCache, Mxfp4PageBytes) {
  for (int32_t D : {64, 128}) {
    const int32_t bs = 8;
    const auto tokens = random_tokens(2, bs, D);
    PagedKCache cache = make_kcache(CacheLayout::mxfp4, ElementFormat::mxfp4, 1, bs, D);
    fill(cache, {0}, tokens);
    for (int32_t t = 0; t < bs; ++t) {
      std::vector<uint8_t> packed(size_t(D) / 2), scales(size_t(D) / 32);
      quantize_mxfp4(tokens[t], packed, scales);
      EXPECT_TRUE(std::equal(packed.begin(), packed.end(), cache.bytes.begin() + size_t(t) * D / 2));
      for (int i = 0; i < 4; ++i) {
        const uint8_t expected = i < D / 32 ? scales[i] : 0;
        EXPECT_EQ(cache.bytes[size_t(bs) * D / 2 + 4 * t + i], expected) << "D " << D << " t " << t << " byte " << i;
      }
    }
  }
}

// vLLM's quantizer: scale = max(amax, 1e-4) / 448 (224 for fnuz), optionally a
// power of two above; the largest element lands on 448 (224); every code is the
// nearest fp8 value to x / scale.
TEST(KCache, QuantizerFollowsVllm) {
  Rng rng(3);
  for (ElementFormat element : {ElementFormat::e4m3fn, ElementFormat::e4m3fnuz}) {
    const Fp8Format f = fp8_of(element);
    const float divisor = element == ElementFormat::e4m3fn ? 448.0f : 224.0f;
    for (bool ue8m0 : {false, true}) {
      for (int trial = 0; trial < 40; ++trial) {
        std::vector<float> k = random_token(rng, 128, std::ldexp(1.0, int(rng.uniform_int(-12, 12))));
        if (trial == 0) std::fill(k.begin(), k.end(), 0.0f);  // amax floor 1e-4
        const std::vector<uint8_t> bytes = lone_token_bytes(element, k, {ue8m0});
        float scale;
        std::memcpy(&scale, bytes.data() + 128, 4);
        float amax = 0;
        for (float v : k) amax = std::max(amax, std::fabs(v));
        float expected = std::max(amax, 1e-4f) / divisor;
        if (ue8m0) {
          float p = 1.0f;
          while (p < expected) p *= 2;
          while (p / 2 >= expected) p /= 2;
          expected = p;
        }
        ASSERT_EQ(scale, expected) << "trial " << trial;
        for (int d = 0; d < 128; ++d) {
          const float v = k[d] / scale;
          const float q = fp8_to_float(f, bytes[d]);
          for (int c = 0; c < 256; ++c) {
            if (fp8_is_nan(f, uint8_t(c))) continue;
            ASSERT_LE(std::fabs(double(v) - q), std::fabs(double(v) - fp8_to_float(f, uint8_t(c))))
                << "d " << d << " code " << c;
          }
          if (!ue8m0 && std::fabs(k[d]) == amax && amax > 0) {
            EXPECT_EQ(std::fabs(q), divisor);
          }
        }
      }
    }
  }
}

// Quantize a request through a page table, gather sub-ranges, compare with
// each token quantized alone and with dequantize_cache_element.
void check_gather_round_trip(CacheLayout layout, ElementFormat element, int32_t bs, int32_t D) {
  const int64_t n = 5 * bs + bs / 2 + 1;
  const auto tokens = random_tokens(4, n, D);
  const std::vector<int32_t> table = {6, 2, 9, 0, 4, 7, -1 /* unused */};
  PagedKCache cache = make_kcache(layout, element, 10, bs, D);
  fill(cache, table, tokens);
  const size_t row = cache.value_bytes_per_token();
  for (auto [begin, end] : std::vector<std::pair<int64_t, int64_t>>{{0, n}, {bs - 1, 2 * bs + 1}, {3, 3}, {n - 1, n}}) {
    const GatheredK g = gather_tokens(cache, table, begin, end);
    ASSERT_EQ(g.num_tokens, end - begin);
    EXPECT_EQ(g.head_dim, D);
    EXPECT_EQ(g.element, element);
    ASSERT_EQ(g.codes.size(), size_t(end - begin) * row);
    for (int64_t t = begin; t < end; ++t) {
      const std::vector<uint8_t> lone = lone_token_bytes(element, tokens[t]);
      const size_t i = size_t(t - begin);
      ASSERT_TRUE(std::equal(lone.begin(), lone.begin() + row, g.codes.begin() + i * row)) << "token " << t;
      if (element == ElementFormat::mxfp4) {
        ASSERT_TRUE(std::equal(lone.begin() + row, lone.begin() + row + D / 32, g.block_scales.begin() + i * (D / 32)));
      } else {
        float scale;
        std::memcpy(&scale, lone.data() + row, 4);
        ASSERT_EQ(g.scales[i], scale) << "token " << t;
      }
      for (int32_t d = 0; d < D; ++d) {
        const float from_cache = dequantize_cache_element(cache, table[t / bs], int32_t(t % bs), d);
        float from_gather;
        if (element == ElementFormat::mxfp4) {
          from_gather = mxfp4_element(std::span<const uint8_t>(g.codes).subspan(i * row, row),
                                      std::span<const uint8_t>(g.block_scales).subspan(i * (D / 32), D / 32), d);
        } else {
          from_gather = fp8_to_float(fp8_of(element), g.codes[i * row + d]) * g.scales[i];
        }
        ASSERT_EQ(from_cache, from_gather) << "token " << t << " d " << d;
      }
    }
  }
}

TEST(KCache, GatherRoundTripBlockFlat) { check_gather_round_trip(CacheLayout::block_flat, ElementFormat::e4m3fn, 64, 128); }
TEST(KCache, GatherRoundTripBlockFlatSmallPages) {
  check_gather_round_trip(CacheLayout::block_flat, ElementFormat::e4m3fnuz, 1, 64);
  check_gather_round_trip(CacheLayout::block_flat, ElementFormat::e4m3fn, 3, 64);
}
TEST(KCache, GatherRoundTripPreshuffle) { check_gather_round_trip(CacheLayout::preshuffle, ElementFormat::e4m3fnuz, 32, 128); }
TEST(KCache, GatherRoundTripMxfp4) {
  check_gather_round_trip(CacheLayout::mxfp4, ElementFormat::mxfp4, 16, 128);
  check_gather_round_trip(CacheLayout::mxfp4, ElementFormat::mxfp4, 8, 64);
}

TEST(KCache, DequantizedValuesAreCloseToInput) {
  const auto tokens = random_tokens(5, 16, 128);
  for (ElementFormat element : {ElementFormat::e4m3fn, ElementFormat::e4m3fnuz, ElementFormat::mxfp4}) {
    const CacheLayout layout = element == ElementFormat::mxfp4 ? CacheLayout::mxfp4 : CacheLayout::block_flat;
    PagedKCache cache = make_kcache(layout, element, 1, 16, 128);
    fill(cache, {0}, tokens);
    for (int t = 0; t < 16; ++t) {
      float amax = 0;
      for (float v : tokens[t]) amax = std::max(amax, std::fabs(v));
      for (int d = 0; d < 128; ++d) {
        const float x = tokens[t][d], y = dequantize_cache_element(cache, 0, t, d);
        // Half a step: 2^-4 relative for fp8; for e2m1 a quarter of the block scale (>= amax / 6) per unit.
        const double bound = element == ElementFormat::mxfp4 ? amax / 3.0 : std::fabs(x) / 16 + amax / 448 / 64;
        EXPECT_LE(std::fabs(double(x) - y), bound) << to_string(element) << " t " << t << " d " << d;
      }
    }
  }
}

// Two requests share their first pages (a common prefix); pages are scattered
// and out of order. Their tokens equal those of a contiguous cache.
TEST(KCache, SharedShuffledPagesGiveSameTokensAsContiguous) {
  for (CacheLayout layout : {CacheLayout::block_flat, CacheLayout::preshuffle, CacheLayout::mxfp4}) {
    const ElementFormat element = layout == CacheLayout::mxfp4 ? ElementFormat::mxfp4
                                  : layout == CacheLayout::preshuffle ? ElementFormat::e4m3fnuz
                                                                      : ElementFormat::e4m3fn;
    const int32_t bs = 16, D = 128;
    const auto a = random_tokens(6, 3 * bs, D);
    auto b = a;
    const auto b_tail = random_tokens(7, bs, D);
    std::copy(b_tail.begin(), b_tail.end(), b.begin() + 2 * bs);  // same prefix of two pages, own last page
    const std::vector<int32_t> table_a = {8, 3, 11}, table_b = {8, 3, 5};
    PagedKCache scattered = make_kcache(layout, element, 12, bs, D);
    fill(scattered, table_a, a);
    fill(scattered, table_b, b);
    PagedKCache contiguous_a = make_kcache(layout, element, 3, bs, D), contiguous_b = contiguous_a;
    fill(contiguous_a, {0, 1, 2}, a);
    fill(contiguous_b, {0, 1, 2}, b);
    const std::vector<int32_t> identity = {0, 1, 2};
    for (auto [table, contiguous] : {std::pair{&table_a, &contiguous_a}, std::pair{&table_b, &contiguous_b}}) {
      const GatheredK got = gather_tokens(scattered, *table, 0, 3 * bs);
      const GatheredK want = gather_tokens(*contiguous, identity, 0, 3 * bs);
      EXPECT_EQ(got.codes, want.codes) << to_string(layout);
      EXPECT_EQ(got.scales, want.scales);
      EXPECT_EQ(got.block_scales, want.block_scales);
    }
    EXPECT_NE(gather_tokens(scattered, table_a, 2 * bs, 3 * bs).codes,
              gather_tokens(scattered, table_b, 2 * bs, 3 * bs).codes);
  }
}

TEST(KCache, RelayoutRoundTrip) {
  const int32_t bs = 48, D = 128;
  const auto tokens = random_tokens(8, 4 * bs, D);
  const std::vector<int32_t> table = {3, 1, 0, 2};
  PagedKCache flat = make_kcache(CacheLayout::block_flat, ElementFormat::e4m3fnuz, 4, bs, D);
  PagedKCache shuffled = make_kcache(CacheLayout::preshuffle, ElementFormat::e4m3fnuz, 4, bs, D);
  fill(flat, table, tokens, {true});
  fill(shuffled, table, tokens, {true});
  const PagedKCache to_shuffled = relayout(flat, CacheLayout::preshuffle);
  EXPECT_EQ(to_shuffled.layout, CacheLayout::preshuffle);
  EXPECT_EQ(to_shuffled.bytes, shuffled.bytes);
  const PagedKCache back = relayout(to_shuffled, CacheLayout::block_flat);
  EXPECT_EQ(back.layout, CacheLayout::block_flat);
  EXPECT_EQ(back.bytes, flat.bytes);
  EXPECT_EQ(relayout(flat, CacheLayout::block_flat).bytes, flat.bytes);
  EXPECT_EQ(thrown_argument([&] { relayout(flat, CacheLayout::mxfp4); }).substr(0, 6), "layout");
  PagedKCache narrow = make_kcache(CacheLayout::block_flat, ElementFormat::e4m3fn, 1, 20, 128);
  EXPECT_EQ(thrown_argument([&] { relayout(narrow, CacheLayout::preshuffle); }).substr(0, 10), "block_size");
}

TEST(KCache, PageTableErrorsNameBlockTable) {
  PagedKCache cache = make_kcache(CacheLayout::block_flat, ElementFormat::e4m3fn, 4, 16, 64);
  const auto check = [&](std::vector<int32_t> table, int64_t begin, int64_t end, const std::string& arg,
                         const std::string& value) {
    const std::string got = thrown_argument([&] { gather_tokens(cache, table, begin, end); });
    EXPECT_EQ(got.substr(0, arg.size() + 3), arg + " | ") << got;
    EXPECT_NE(got.find(value), std::string::npos) << got;
  };
  check({0, 4}, 0, 32, "block_table", "4");           // one past the cache
  check({1, 77, 2}, 20, 40, "block_table", "77");     // in the middle of the range
  check({-1}, 0, 1, "block_table", "-1");             // negative
  check({0, 1}, 0, 33, "block_table", "3 pages");     // beyond the row
  check({}, 0, 1, "block_table", "1 pages");
  check({0}, -1, 4, "begin", "-1");
  check({0}, 5, 4, "end", "[5, 4)");
  // Entries the range does not reach are not looked at.
  EXPECT_NO_THROW(gather_tokens(cache, std::vector<int32_t>{2, -7, 1000}, 0, 16));
  EXPECT_EQ(gather_tokens(cache, std::vector<int32_t>{}, 0, 0).num_tokens, 0);
}

TEST(KCache, GeometryErrors) {
  const auto arg = [](const std::function<void()>& f) {
    const std::string s = thrown_argument(f);
    return s.substr(0, s.find(" | "));
  };
  EXPECT_EQ(arg([] { make_kcache(CacheLayout::preshuffle, ElementFormat::e4m3fnuz, 1, 24, 128); }), "block_size");
  EXPECT_EQ(arg([] { make_kcache(CacheLayout::preshuffle, ElementFormat::e4m3fnuz, 1, 1, 128); }), "block_size");
  EXPECT_EQ(arg([] { make_kcache(CacheLayout::preshuffle, ElementFormat::e4m3fnuz, 1, 16, 64); }), "head_dim");
  for (int32_t D : {32, 96, 256}) {
    EXPECT_EQ(arg([&] { make_kcache(CacheLayout::mxfp4, ElementFormat::mxfp4, 1, 16, D); }), "head_dim") << D;
  }
  EXPECT_EQ(arg([] { make_kcache(CacheLayout::mxfp4, ElementFormat::e4m3fn, 1, 16, 128); }), "layout");
  EXPECT_EQ(arg([] { make_kcache(CacheLayout::block_flat, ElementFormat::mxfp4, 1, 16, 128); }), "layout");
  EXPECT_EQ(arg([] { make_kcache(CacheLayout::block_flat, ElementFormat::e4m3fn, 1, 0, 128); }), "block_size");
  EXPECT_EQ(arg([] { make_kcache(CacheLayout::block_flat, ElementFormat::e4m3fn, -1, 16, 128); }), "num_pages");
  EXPECT_EQ(arg([] { make_kcache(CacheLayout::block_flat, ElementFormat::e4m3fn, 1, 16, 0); }), "head_dim");
  PagedKCache cache = make_kcache(CacheLayout::block_flat, ElementFormat::e4m3fn, 2, 16, 128);
  cache.bytes.pop_back();
  EXPECT_EQ(arg([&] { cache.validate(); }), "kv_cache");
}

TEST(KCache, QuantizerErrors) {
  PagedKCache cache = make_kcache(CacheLayout::block_flat, ElementFormat::e4m3fn, 2, 16, 64);
  std::vector<float> k(64, 1.0f);
  const auto arg = [](const std::function<void()>& f) {
    const std::string s = thrown_argument(f);
    return s.substr(0, s.find(" | "));
  };
  k[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(arg([&] { quantize_token_into_cache(cache, 0, 0, k); }), "k");
  k[5] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(arg([&] { quantize_token_into_cache(cache, 0, 0, k); }), "k");
  k[5] = 1.0f;
  EXPECT_EQ(arg([&] { quantize_token_into_cache(cache, 0, 0, std::span<const float>(k).first(63)); }), "k");
  EXPECT_EQ(arg([&] { quantize_token_into_cache(cache, 2, 0, k); }), "page");
  EXPECT_EQ(arg([&] { quantize_token_into_cache(cache, 0, 16, k); }), "slot");
  EXPECT_EQ(arg([&] { dequantize_cache_element(cache, 0, 0, 64); }), "d");
  EXPECT_EQ(arg([&] { dequantize_cache_element(cache, -1, 0, 0); }), "page");
  PagedKCache mx = make_kcache(CacheLayout::mxfp4, ElementFormat::mxfp4, 1, 16, 64);
  k[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(arg([&] { quantize_token_into_cache(mx, 0, 0, k); }), "k");
  // A rejected token leaves the cache untouched.
  EXPECT_TRUE(std::all_of(cache.bytes.begin(), cache.bytes.end(), [](uint8_t b) { return b == 0; }));
  EXPECT_TRUE(std::all_of(mx.bytes.begin(), mx.bytes.end(), [](uint8_t b) { return b == 0; }));
}

}  // namespace
}  // namespace dsa
