// The numerics measures (oracle/numerics.hpp) and the sum of absolute terms
// they divide by (dsa/logit_magnitudes.hpp).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/kcache.hpp"
#include "dsa/logit_magnitudes.hpp"
#include "dsa/logits.hpp"
#include "dsa/oracle/baseline_check.hpp"
#include "dsa/oracle/numerics.hpp"
#include "oracle_support.hpp"
#include "test_support.hpp"

namespace dsa::oracle {
namespace {

using testing::kInf;
using testing::kNaN;
using testing::make_indices;
using testing::make_logits;

float up(float x, int steps) {
  for (int i = 0; i < steps; ++i) x = std::nextafter(x, kInf);
  return x;
}

TEST(OracleNumerics, UlpBucketsAreBinaryDecades) {
  EXPECT_EQ(ulp_bucket(0), 0);
  EXPECT_EQ(ulp_bucket(1), 1);
  EXPECT_EQ(ulp_bucket(2), 2);
  EXPECT_EQ(ulp_bucket(3), 2);
  EXPECT_EQ(ulp_bucket(4), 3);
  EXPECT_EQ(ulp_bucket_label(0), "0");
  EXPECT_EQ(ulp_bucket_label(3), "[4,8)");
  EXPECT_EQ(ulp_bucket_label(11), "[1k,2k)");
}

TEST(OracleNumerics, DistancesQuantilesAndTheTolerancesNeeded) {
  ErrorStats s;
  s.add(0, 0, 1.0f, 1.0f, 1.0, 2.0);              // 0 ulp
  s.add(0, 1, up(1.0f, 1), 1.0f, 1.0, 2.0);       // 1 ulp
  s.add(1, 0, up(2.0f, 5), 2.0f, 2.0, 4.0);       // 5 ulp, the worst row
  s.add(1, 1, kNaN, kNaN, 0.0, 1.0);              // matched NaN: not measured
  s.add(1, 2, -kInf, -kInf, -HUGE_VAL, 1.0);      // the same infinity: 0 ulp
  const ErrorSummary r = s.summary();
  EXPECT_EQ(r.entries, 4);
  EXPECT_EQ(r.exact_bits, 2);
  EXPECT_EQ(r.nan_matched, 1);
  EXPECT_EQ(r.nonfinite_mismatch, 0);
  EXPECT_EQ(r.ulps.median, 0);  // 0 0 1 5: the 2nd of 4
  EXPECT_EQ(r.ulps.max, 5);
  EXPECT_EQ(r.histogram, (std::vector<int64_t>{2, 1, 0, 1}));
  EXPECT_DOUBLE_EQ(r.max_abs_error, double(up(2.0f, 5)) - 2.0);
  EXPECT_DOUBLE_EQ(r.rel.max, (double(up(2.0f, 5)) - 2.0) / 4.0);
  ASSERT_GE(r.worst.size(), 2u);
  EXPECT_EQ(r.worst[0].row, 1);
  EXPECT_EQ(r.worst[0].ulps, 5u);

  s.add(2, 0, 3.0f, kNaN, 0.0, 1.0);  // a number against NaN: no tolerance covers it
  const ErrorSummary bad = s.summary();
  EXPECT_EQ(bad.nonfinite_mismatch, 1);
  EXPECT_TRUE(std::isinf(bad.max_abs_error));
  EXPECT_EQ(bad.worst[0].row, 2);
  EXPECT_TRUE(to_json(bad)["worst"][0]["ulps"].is_null());
}

TEST(OracleNumerics, RelativeErrorIsAgainstTheSumOfAbsoluteTerms) {
  // A logit that cancels to almost nothing: 1 ulp of it is a huge relative
  // error of the logit, a tiny one of the terms.
  ErrorStats s;
  const float exact = 1e-6f;
  s.add(0, 0, up(exact, 1), exact, double(exact), 1000.0);
  EXPECT_LT(s.summary().rel.max, 1e-15);
}

TEST(OracleNumerics, Bf16UnitCountsBf16Steps) {
  ErrorStats s(UlpUnit::bf16);
  const float one_step = bf16_to_float(float_to_bf16(1.0f) + 1);
  s.add(0, 0, one_step, up(1.0f, 3), 1.0, 1.0);  // exact rounds to bf16 1.0
  EXPECT_EQ(s.summary().ulps.max, 1);
  ErrorStats f;
  EXPECT_THROW(f.merge(s, "x"), InvalidInput);
}

TEST(OracleNumerics, MergedStatsNameWhereTheirWorstRowsAre) {
  ErrorStats a, b, all;
  a.add(0, 0, up(1.0f, 2), 1.0f, 1.0, 1.0);
  b.add(3, 7, up(1.0f, 9), 1.0f, 1.0, 1.0);
  all.merge(a, "case_a/logits");
  all.merge(b, "case_b/logits");
  const ErrorSummary r = all.summary();
  EXPECT_EQ(r.entries, 2);
  EXPECT_EQ(r.worst[0].where, "case_b/logits");
  EXPECT_EQ(r.worst[0].col, 7);
}

TEST(OracleNumerics, EpsNeededByTheToleranceRule) {
  const Logits v = make_logits(2, 3, {5, 4, 3.5f, 5, 4, 3.5f});
  const RowColumns cols = window_columns(v, full_bounds(2, 3));
  // Row 0 right; row 1 chose 4 over 5: eps 1 on both sides of the cut.
  const TopkIndices t = make_indices(2, 1, {0, 1});
  const EpsNeeded e = selection_eps_needed(view(t), cols);
  EXPECT_DOUBLE_EQ(e.eps, 1.0);
  EXPECT_EQ(e.rows_needing_eps, 1);
  EXPECT_EQ(e.worst_row, 1);
  // The rule with that eps accepts it; a smaller one does not.
  EXPECT_TRUE(check_topk_among(view(t), cols, {1.0}).passed);
  EXPECT_FALSE(check_topk_among(view(t), cols, {0.99}).passed);
  // A duplicate, or an infinity on the wrong side of the cut, no eps can fix.
  const Logits one = make_logits(1, 3, {5, 4, 3.5f});
  EXPECT_TRUE(std::isinf(selection_eps_needed(view(make_indices(1, 2, {0, 0})), window_columns(one, full_bounds(1, 3))).eps));
  const Logits w = make_logits(1, 2, {kInf, 1});
  EXPECT_TRUE(std::isinf(selection_eps_needed(view(make_indices(1, 1, {1})), window_columns(w, full_bounds(1, 2))).eps));
  EXPECT_EQ(selection_eps_needed(view(make_indices(1, 1, {0})), window_columns(w, full_bounds(1, 2))).eps, 0.0);
}

TEST(OracleNumerics, HistogramSvgHasABarPerBucketAndSeries) {
  ErrorStats a, b;
  a.add(0, 0, 1.0f, 1.0f, 1.0, 1.0);
  b.add(0, 0, up(1.0f, 6), 1.0f, 1.0, 1.0);
  const std::string svg = ulp_histogram_svg("old <> new", {{"baseline", a.summary(), "#777"}, {"new", b.summary(), "#e70"}});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("old &lt;&gt; new"), std::string::npos);
  size_t bars = 0;
  for (size_t at = svg.find("<rect x="); at != std::string::npos; at = svg.find("<rect x=", at + 1)) ++bars;
  EXPECT_EQ(bars, 2u * 4u + 2u);  // 4 buckets (0 .. [4,8)) x 2 series, and the 2 legend squares
  EXPECT_NE(svg.find("new: median 6, max 6 ulp"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

// A brute-force sum of |s| |w_h| |q_h[d]| |k[d]| over every product.
TEST(LogitMagnitudes, EqualTheSumOfEveryAbsoluteProductAndBoundTheError) {
  const DecodeProblem p = test::small_decode({40, 23}, 2, 8, 64, 11);
  const LogitMagnitudes m = decode_logit_magnitudes(p);
  const auto exact = decode_logits(p, find_profile("exact"), {.with_double = true});
  const float* table = fp8_decode_table(fp8_of(p.element));
  const auto lens = visible_lens(p);
  int64_t checked = 0;
  for (int64_t r = 0; r < p.rows(); ++r) {
    const int64_t b = r / p.next_n;
    const GatheredK k = gather_tokens(p.cache, std::span(p.block_table).subspan(size_t(b * p.max_pages), size_t(p.max_pages)),
                                      0, lens[size_t(r)]);
    for (int64_t n = 0; n < p.logits_width; ++n) {
      if (n >= lens[size_t(r)]) {
        EXPECT_EQ(m.at(r, n), 0.0);
        continue;
      }
      double sum = 0;
      for (int32_t h = 0; h < p.heads; ++h)
        for (int32_t d = 0; d < p.head_dim; ++d)
          sum += std::fabs(double(p.weights[size_t(r * p.heads + h)])) *
                 std::fabs(double(table[p.q[size_t((r * p.heads + h) * p.head_dim + d)]])) *
                 std::fabs(double(table[k.codes[size_t(n * p.head_dim + d)]]));
      sum *= std::fabs(double(k.scales[size_t(n)]));
      EXPECT_NEAR(m.at(r, n), sum, 1e-12 * sum) << r << " " << n;
      // fp32 rounding in H steps stays far below A times H ulps of 1.
      EXPECT_LE(std::fabs(double(exact.logits.at(r, n)) - exact.exact_double[size_t(r * p.logits_width + n)]),
                double(p.heads + 1) * std::ldexp(m.at(r, n), -23));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 40 - 1 + 40 + 23 - 1 + 23);
}

TEST(LogitMagnitudes, PrefillRowsOverTheirRange) {
  PrefillProblem p;
  p.rows = 1;
  p.heads = 1;
  p.head_dim = 32;
  p.num_k = 3;
  p.q.assign(32, 0x38);  // e4m3fn 1.0
  p.k.assign(3 * 32, 0xB8);  // -1.0
  p.k_scales = {2.0f, 0.5f, 1.0f};
  p.weights = {-3.0f};
  p.ks = {1};
  p.ke = {3};
  const LogitMagnitudes m = prefill_logit_magnitudes(p);
  EXPECT_EQ(m.at(0, 0), 0.0);
  EXPECT_EQ(m.at(0, 1), 3.0 * 32 * 0.5);
  EXPECT_EQ(m.at(0, 2), 3.0 * 32 * 1.0);
}

}  // namespace
}  // namespace dsa::oracle
