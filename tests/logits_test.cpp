// The exact-tier logits against a naive loop written apart from the
// reference's code path (no gather, no GEMM, no reduction program).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "dsa/formats.hpp"
#include "dsa/logits.hpp"
#include "test_support.hpp"

namespace dsa {
namespace {

using test::bits_of;
using test::small_decode;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The `exact` profile's documented order, one entry at a time.
float naive_logit(const DecodeProblem& p, int64_t row, int64_t n) {
  const int64_t b = row / p.next_n;
  const int32_t page = p.block_table[size_t(b * p.max_pages + n / p.cache.block_size)];
  const int32_t slot = int32_t(n % p.cache.block_size);
  const uint8_t* base = p.cache.bytes.data() + size_t(page) * p.cache.page_bytes();
  float scale;
  std::memcpy(&scale, base + p.cache.scale_offset(slot), 4);
  const Fp8Format f = fp8_of(p.element);
  float acc = 0.0f;
  for (int32_t h = 0; h < p.heads; ++h) {
    double dot = 0;
    for (int32_t d = 0; d < p.head_dim; ++d)
      dot += double(fp8_to_float(f, p.q[(size_t(row) * p.heads + size_t(h)) * p.head_dim + size_t(d)])) *
             double(fp8_to_float(f, base[p.cache.value_offset(slot, d)]));
    acc = std::fma(p.weights[size_t(row) * p.heads + size_t(h)], std::max(float(dot), 0.0f), acc);
  }
  return acc * scale;
}

void expect_matches_naive(const DecodeProblem& p, const Logits& logits) {
  int64_t checked = 0;
  for (int64_t row = 0; row < p.rows(); ++row) {
    const int64_t len = visible_len(p, row);
    for (int64_t n = 0; n < p.logits_width; ++n) {
      const float expect = n < len ? naive_logit(p, row, n) : kNegInf;
      ASSERT_EQ(bits_of(logits.at(row, n)), bits_of(expect)) << "row " << row << " column " << n;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(DecodeLogits, ExactProfileMatchesANaiveLoop) {
  const DecodeProblem p = small_decode({37, 64, 1, 100}, 1, 8, 64, 3);
  expect_matches_naive(p, decode_logits(p, find_profile("exact")).logits);
}

TEST(DecodeLogits, NextNRowsSeeTheirCausalLengths) {
  const DecodeProblem p = small_decode({40, 17}, 3, 16, 128, 5);
  EXPECT_EQ(visible_len(p, 0), 38);
  EXPECT_EQ(visible_len(p, 2), 40);
  EXPECT_EQ(visible_len(p, 3), 15);
  expect_matches_naive(p, decode_logits(p, find_profile("exact")).logits);
}

TEST(DecodeLogits, FnuzAndPreshuffleLayouts) {
  const DecodeProblem flat = small_decode({48, 33}, 2, 8, 128, 9, ElementFormat::e4m3fnuz);
  DecodeProblem shuffled = flat;
  shuffled.cache = relayout(flat.cache, CacheLayout::preshuffle);
  const auto a = decode_logits(flat, find_profile("exact")).logits;
  const auto b = decode_logits(shuffled, find_profile("exact")).logits;
  expect_matches_naive(shuffled, b);
  for (size_t i = 0; i < a.values.size(); ++i) ASSERT_EQ(bits_of(a.values[i]), bits_of(b.values[i])) << i;
}

TEST(DecodeLogits, TwoDimensionalLengthsAreTakenAsGiven) {
  DecodeProblem p = small_decode({50, 50}, 2, 8, 64, 13);
  p.seq_lens_2d = true;
  p.seq_lens = {3, 50, 0, 17};
  EXPECT_EQ(visible_len(p, 0), 3);
  EXPECT_EQ(visible_len(p, 2), 0);
  expect_matches_naive(p, decode_logits(p, find_profile("exact")).logits);
}

TEST(DecodeLogits, CompressRatioDividesOneDimensionalLengths) {
  DecodeProblem p = small_decode({64}, 2, 8, 64, 17);
  p.compress_ratio = 4;  // the cache then holds 64 entries; rows see floor(tokens / 4)
  EXPECT_EQ(visible_len(p, 0), 63 / 4);
  EXPECT_EQ(visible_len(p, 1), 64 / 4);
  expect_matches_naive(p, decode_logits(p, find_profile("exact")).logits);
}

TEST(DecodeLogits, PermutingPhysicalPagesLeavesLogitsUnchanged) {
  const DecodeProblem p = small_decode({70, 45}, 1, 8, 64, 19);
  DecodeProblem moved = p;
  // Reverse the physical page order and rewrite the table to match.
  const size_t page_bytes = p.cache.page_bytes();
  const int32_t pages = p.cache.num_pages;
  for (int32_t i = 0; i < pages; ++i)
    std::copy_n(p.cache.bytes.begin() + i * page_bytes, page_bytes,
                moved.cache.bytes.begin() + (pages - 1 - i) * page_bytes);
  for (auto& page : moved.block_table) page = pages - 1 - page;
  const auto a = decode_logits(p, find_profile("exact")).logits;
  const auto b = decode_logits(moved, find_profile("exact")).logits;
  for (size_t i = 0; i < a.values.size(); ++i) ASSERT_EQ(bits_of(a.values[i]), bits_of(b.values[i])) << i;
}

TEST(DecodeLogits, PaddedRowsAreMinusInfinityAndRealRowsCausal) {
  SyntheticDecodeConfig c;
  c.batch = 2;
  c.next_n = 4;
  c.heads = 8;
  c.head_dim = 64;
  c.block_size = 16;
  c.seq_lens = {30, 21};
  c.decode_lens = {1, 4};  // request 0: 1 of 4 rows real
  Rng rng(23);
  const DecodeProblem p = make_decode_problem(c, rng);
  EXPECT_EQ(visible_len(p, 0), 30);
  EXPECT_EQ(visible_len(p, 1), 0);
  EXPECT_EQ(visible_len(p, 4), 18);
  const auto logits = decode_logits(p, find_profile("exact")).logits;
  for (int64_t n = 0; n < p.logits_width; ++n) EXPECT_EQ(logits.at(1, n), kNegInf);
  expect_matches_naive(p, logits);
  DecodeProblem vllm = p;
  vllm.padded_lengths = PaddedLengths::vllm_padded;
  EXPECT_EQ(visible_len(vllm, 0), 27);  // Lmax - d_b = 3 entries short
}

TEST(DecodeLogitsAt, EqualsTheDenseRowAtThePositions) {
  const DecodeProblem p = small_decode({90, 33}, 2, 8, 64, 29);
  const auto dense = decode_logits(p, find_profile("exact")).logits;
  std::vector<std::vector<int64_t>> positions = {{5, 0, 88, 88, 200, -1}, {1, 2, 3}, {}, {31, 32, 33}};
  const auto at = decode_logits_at(p, find_profile("exact"), positions);
  for (size_t r = 0; r < positions.size(); ++r)
    for (size_t i = 0; i < positions[r].size(); ++i) {
      const int64_t pos = positions[r][i];
      const float expect = pos >= 0 && pos < dense.width ? dense.at(int64_t(r), pos) : kNegInf;
      EXPECT_EQ(bits_of(at[r][i]), bits_of(expect)) << r << " " << pos;
    }
}

TEST(DecodeLogits, DoubleValueIsCloseToTheFp32Value) {
  const DecodeProblem p = small_decode({200}, 1, 16, 128, 31);
  const auto result = decode_logits(p, find_profile("exact"), {.with_double = true});
  ASSERT_EQ(result.exact_double.size(), result.logits.values.size());
  for (int64_t n = 0; n < 200; ++n) {
    const double exact = result.exact_double[size_t(n)];
    EXPECT_NEAR(result.logits.at(0, n), exact, 1e-5 * std::max(1.0, std::fabs(exact)));
  }
  EXPECT_EQ(result.exact_double[200], -std::numeric_limits<double>::infinity());
}

TEST(PrefillLogits, MatchesTheDecodeFormOfTheSameRows) {
  SyntheticPrefillConfig c;
  c.rows = 5;
  c.heads = 8;
  c.head_dim = 64;
  c.num_k = 1500;
  Rng rng(37);
  PrefillProblem p = make_prefill_problem(c, rng);
  p.ks[1] = 700;  // a row that does not start at 0
  const auto logits = prefill_logits(p, find_profile("exact")).logits;
  for (int32_t r = 0; r < p.rows; ++r)
    for (int64_t n = 0; n < p.num_k; ++n) {
      float expect = kNegInf;
      if (n >= p.ks[size_t(r)] && n < p.ke[size_t(r)]) {
        float acc = 0;
        for (int32_t h = 0; h < p.heads; ++h) {
          double dot = 0;
          for (int32_t d = 0; d < p.head_dim; ++d)
            dot += double(e4m3fn_to_float(p.q[(size_t(r) * p.heads + size_t(h)) * p.head_dim + size_t(d)])) *
                   double(e4m3fn_to_float(p.k[size_t(n) * p.head_dim + size_t(d)]));
          acc = std::fma(p.weights[size_t(r) * p.heads + size_t(h)], std::max(float(dot), 0.0f), acc);
        }
        expect = acc * p.k_scales[size_t(n)];
      }
      ASSERT_EQ(bits_of(logits.at(r, n)), bits_of(expect)) << r << " " << n;
    }
}

}  // namespace
}  // namespace dsa
