// The logits comparator (SPEC 9): bitwise over each row's window, NaN == NaN,
// clean mode, tolerance mode, ulp distances and the report's lists.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>

#include "dsa/error.hpp"
#include "dsa/oracle/float_bits.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "oracle_support.hpp"

namespace dsa::oracle {
namespace {

using testing::kInf;
using testing::make_logits;

float next_up(float x) { return std::nextafter(x, kInf); }

TEST(OracleUlps, DistanceOnTheOrderedIntegers) {
  EXPECT_EQ(ulp_distance(1.0f, 1.0f), 0u);
  EXPECT_EQ(ulp_distance(1.0f, next_up(1.0f)), 1u);
  EXPECT_EQ(ulp_distance(0.0f, -0.0f), 0u);
  EXPECT_EQ(ulp_distance(0.0f, FLT_TRUE_MIN), 1u);
  EXPECT_EQ(ulp_distance(-FLT_TRUE_MIN, FLT_TRUE_MIN), 2u);  // across zero
  EXPECT_EQ(ulp_distance(FLT_MAX, kInf), 1u);
  EXPECT_EQ(ulp_distance(-kInf, kInf), 2u * 0x7F800000u);
  EXPECT_FALSE(ulp_distance(1.0f, testing::kNaN).has_value());
  // bf16: 1.0 and the next bf16 value 1 + 2^-7 are one bf16 ulp, 2^16 fp32 ulps apart.
  EXPECT_EQ(ulp_distance_bf16(1.0f, 1.0078125f), 1u);
  EXPECT_EQ(ulp_distance(1.0f, 1.0078125f), 65536u);
}

TEST(OracleLogits, IdenticalRowsPassAndCountOnlyTheWindows) {
  const Logits a = make_logits(2, 4, {1, 2, 3, 4, 5, 6, 7, 8});
  const std::vector<int64_t> lens{3, 0};
  const auto v = check_logits(a, a, lens);
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.entries_compared, 3);
  EXPECT_EQ(v.mismatches, 0);
}

TEST(OracleLogits, OneUlpIsAMismatchWithItsPositionBitsAndDistance) {
  Logits e = make_logits(3, 4, {0.5f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Logits a = e;
  a.values[6] = next_up(e.values[6]);                  // row 1, col 2: 1 ulp
  a.values[9] = std::nextafter(e.values[9], 0.0f);     // row 2, col 1
  a.values[11] = e.values[11] * 2;                      // row 2, col 3: far off
  const std::vector<int64_t> lens{4, 4, 4};
  const auto v = check_logits(a, e, lens);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.mismatches, 3);
  EXPECT_EQ(v.rows_with_mismatch, 2);
  ASSERT_EQ(v.first_mismatches.size(), 3u);
  const auto& m = v.first_mismatches[0];
  EXPECT_EQ(m.row, 1);
  EXPECT_EQ(m.col, 2);
  EXPECT_EQ(float_bits(m.expected), float_bits(6.0f));
  EXPECT_EQ(float_bits(m.actual), float_bits(6.0f) + 1);
  EXPECT_EQ(m.ulps, 1u);
  EXPECT_EQ(v.max_ulps, uint64_t(1) << 23);  // 11 -> 22 is one binade up
  EXPECT_DOUBLE_EQ(v.max_abs_diff, 11.0);
  // The worst row (two mismatches) comes first.
  ASSERT_EQ(v.worst_rows.size(), 2u);
  EXPECT_EQ(v.worst_rows[0].row, 2);
  EXPECT_EQ(v.worst_rows[0].mismatches, 2);
  EXPECT_EQ(v.worst_rows[1].row, 1);
}

TEST(OracleLogits, AnyNanEqualsAnyNanAndIsCounted) {
  const Logits e = make_logits(2, 3, {float_from_bits(0x7FFFFFFF), 1, 2, 3, 4, 5});  // GPU NaN
  Logits a = e;
  a.values[0] = float_from_bits(0xFFC00000);  // x86 default NaN
  const std::vector<int64_t> lens{3, 3};
  auto v = check_logits(a, e, lens);
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.nan_matched, 1);
  EXPECT_EQ(v.rows_with_nan_count, 1);
  ASSERT_EQ(v.rows_with_nan.size(), 1u);
  EXPECT_EQ(v.rows_with_nan[0], 0);

  a.values[4] = testing::kNaN;  // NaN against a number fails, with no ulp distance
  v = check_logits(a, e, lens);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.nan_vs_number, 1);
  ASSERT_EQ(v.first_mismatches.size(), 1u);
  EXPECT_FALSE(v.first_mismatches[0].ulps.has_value());
  EXPECT_EQ(v.rows_with_nan_count, 2);
}

TEST(OracleLogits, SignedZerosDifferBitwiseButNotUnderATolerance) {
  const Logits e = make_logits(1, 2, {0.0f, 1.0f});
  const Logits a = make_logits(1, 2, {-0.0f, 1.0f});
  const std::vector<int64_t> lens{2};
  const auto bitwise = check_logits(a, e, lens);
  EXPECT_FALSE(bitwise.passed);
  EXPECT_EQ(bitwise.first_mismatches.at(0).ulps, 0u);
  LogitsCheckOptions o;
  o.tolerance = LogitsTolerance{};
  EXPECT_TRUE(check_logits(a, e, lens, o).passed);
}

TEST(OracleLogits, BeyondTheRowIsIgnoredUnlessClean) {
  const Logits e = make_logits(2, 4, {1, 2, -kInf, -kInf, 3, -kInf, -kInf, -kInf});
  const Logits a = make_logits(2, 4, {1, 2, 77, -kInf, 3, -kInf, -kInf, float_from_bits(0x7FFFFFFF)});
  const std::vector<int64_t> lens{2, 1};
  EXPECT_TRUE(check_logits(a, e, lens).passed);
  LogitsCheckOptions o;
  o.clean = true;
  const auto v = check_logits(a, e, lens, o);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.entries_compared, 8);
  EXPECT_EQ(v.mismatches, 2);  // 77 and a NaN where -inf belongs
  EXPECT_TRUE(v.first_mismatches.at(0).outside_window);
  EXPECT_EQ(v.first_mismatches.at(0).col, 2);
  EXPECT_EQ(v.first_mismatches.at(1).row, 1);
  EXPECT_EQ(v.first_mismatches.at(1).col, 3);
  // A clean comparison does not trust the expected tensor beyond the row either.
  Logits e_garbage = e;
  e_garbage.values[2] = 77;
  EXPECT_FALSE(check_logits(a, e_garbage, lens, o).passed);
}

TEST(OracleLogits, ToleranceModeAbsoluteRelativeAndUlps) {
  const Logits e = make_logits(1, 4, {1.0f, 100.0f, -kInf, 1e-30f});
  const Logits a = make_logits(1, 4, {1.001f, 100.05f, -kInf, 2e-30f});
  const std::vector<int64_t> lens{4};
  LogitsCheckOptions o;
  o.tolerance = LogitsTolerance{.abs = 2e-3, .rel = 0, .ulps = 0};
  auto v = check_logits(a, e, lens, o);
  EXPECT_TRUE(v.tolerance_mode);
  EXPECT_EQ(v.mismatches, 1);  // only 100.05 is more than 2e-3 off
  EXPECT_EQ(v.first_mismatches.at(0).col, 1);
  o.tolerance = LogitsTolerance{.abs = 2e-3, .rel = 1e-3, .ulps = 0};
  EXPECT_TRUE(check_logits(a, e, lens, o).passed);
  // Distance in ulps alone: 1.001f is 8389 ulps above 1.0f.
  const Logits near = make_logits(1, 1, {next_up(next_up(1.0f))});
  const Logits one = make_logits(1, 1, {1.0f});
  const std::vector<int64_t> len1{1};
  o.tolerance = LogitsTolerance{.abs = 0, .rel = 0, .ulps = 2};
  EXPECT_TRUE(check_logits(near, one, len1, o).passed);
  o.tolerance = LogitsTolerance{.abs = 0, .rel = 0, .ulps = 1};
  EXPECT_FALSE(check_logits(near, one, len1, o).passed);
}

TEST(OracleLogits, ToleranceNeverExcusesInfinityOrNan) {
  const Logits e = make_logits(1, 3, {FLT_MAX, 1.0f, -kInf});
  const Logits a = make_logits(1, 3, {kInf, testing::kNaN, -FLT_MAX});
  const std::vector<int64_t> lens{3};
  LogitsCheckOptions o;
  o.tolerance = LogitsTolerance{.abs = 1e300, .rel = 1e300, .ulps = uint64_t(1) << 40};
  const auto v = check_logits(a, e, lens, o);
  EXPECT_EQ(v.mismatches, 3);
}

TEST(OracleLogits, PoisonNeverPassesAsTheExpectedNan) {
  const Logits e = make_logits(1, 2, {testing::kNaN, 1});
  const Logits a = make_logits(1, 2, {float_from_bits(kPoisonF32Bits), 1});
  const std::vector<int64_t> lens{2};
  EXPECT_TRUE(check_logits(a, e, lens).passed);  // NaN == NaN: the bare rule cannot see it
  LogitsCheckOptions o;
  o.poison_bits = kPoisonF32Bits;
  const auto v = check_logits(a, e, lens, o);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.first_mismatches.at(0).col, 0);
}

TEST(OracleLogits, Bf16UlpsAreReportedOnRequest) {
  const Logits e = make_logits(1, 2, {1.0f, -2.0f});
  const Logits a = make_logits(1, 2, {1.0078125f, -2.03125f});  // +1 and -2 bf16 ulps
  const std::vector<int64_t> lens{2};
  LogitsCheckOptions o;
  o.bf16_ulps = true;
  const auto v = check_logits(a, e, lens, o);
  ASSERT_EQ(v.first_mismatches.size(), 2u);
  EXPECT_EQ(v.first_mismatches[0].bf16_ulps, 1u);
  EXPECT_EQ(v.first_mismatches[1].bf16_ulps, 2u);
  EXPECT_EQ(v.first_mismatches[1].ulps, 2u << 16);
}

TEST(OracleLogits, PrefillWindowsCompareOnlyKsToKe) {
  const Logits e = make_logits(2, 5, {9, 1, 2, 9, 9, 9, 9, 9, 3, 4});
  const Logits a = make_logits(2, 5, {0, 1, 2, 0, 0, 0, 0, 0, 3, 4});
  const std::vector<int32_t> ks{1, 3}, ke{3, 5};
  const RowBounds bounds = prefill_bounds(ks, ke);
  EXPECT_TRUE(check_logits(a, e, bounds).passed);
  LogitsCheckOptions o;
  o.clean = true;  // everything outside [ks, ke) must be -inf
  EXPECT_EQ(check_logits(a, e, bounds, o).mismatches, 6);
}

TEST(OracleLogits, ListsAreCappedButCountsAreComplete) {
  Logits e = make_logits(50, 20, std::vector<float>(1000, 1.0f));
  Logits a = make_logits(50, 20, std::vector<float>(1000, 2.0f));
  const std::vector<int64_t> lens(50, 20);
  LogitsCheckOptions o;
  o.max_listed = 4;
  const auto v = check_logits(a, e, lens, o);
  EXPECT_EQ(v.mismatches, 1000);
  EXPECT_EQ(v.rows_with_mismatch, 50);
  EXPECT_EQ(v.first_mismatches.size(), 4u);
  EXPECT_EQ(v.worst_rows.size(), 4u);
}

TEST(OracleLogits, BadShapesAreInvalidInput) {
  const Logits a = make_logits(2, 3, {});
  const Logits b = make_logits(2, 4, {});
  const std::vector<int64_t> lens{3, 3}, too_long{3, 4}, one{3};
  EXPECT_THROW(check_logits(a, b, lens), InvalidInput);
  EXPECT_THROW(check_logits(a, a, too_long), InvalidInput);
  EXPECT_THROW(check_logits(a, a, one), InvalidInput);
  LogitsCheckOptions o;
  o.tolerance = LogitsTolerance{.abs = -1};
  EXPECT_THROW(check_logits(a, a, lens, o), InvalidInput);
}

}  // namespace
}  // namespace dsa::oracle
