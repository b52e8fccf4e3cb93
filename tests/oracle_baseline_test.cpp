// A selection held to its baseline (oracle/baseline_check.hpp): sets compared
// only where the values are identical; ties at the cut reported apart; a
// change beyond the ties fails, and says when the baseline was the broken one.
#include <gtest/gtest.h>

#include <cmath>

#include "dsa/error.hpp"
#include "dsa/oracle/baseline_check.hpp"
#include "oracle_support.hpp"

namespace dsa::oracle {
namespace {

using testing::kInf;
using testing::make_indices;
using testing::make_logits;

// One row of values, its columns the whole row.
RowColumns row_of(std::vector<float> values) {
  const int64_t n = int64_t(values.size());
  return window_columns(make_logits(1, n, std::move(values)), full_bounds(1, n));
}

SelectionChangeVerdict compare(const std::vector<int32_t>& mine, const RowColumns& my_values,
                               const std::vector<int32_t>& theirs, const RowColumns& their_values) {
  const TopkIndices a = make_indices(1, int32_t(mine.size()), mine), b = make_indices(1, int32_t(theirs.size()), theirs);
  return compare_selection_to_baseline(view(a), my_values, view(b), their_values, "topk_indices");
}

TEST(OracleBaseline, TheSameSetOnTheSameValuesPasses) {
  const RowColumns v = row_of({5, 3, 3, 1});
  const auto r = compare({1, 0}, v, {0, 1}, v);  // any order
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.rows_values_equal, 1);
  EXPECT_EQ(r.rows_identical, 1);
  EXPECT_EQ(r.rows_tie_changes, 0);
}

TEST(OracleBaseline, AnotherChoiceAmongTiesAtTheCutPassesAndIsReportedApart) {
  const RowColumns v = row_of({5, 3, 3, 1});
  const auto r = compare({0, 1}, v, {0, 2}, v);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.rows_tie_changes, 1);
  ASSERT_EQ(r.tie_changes.size(), 1u);
  EXPECT_EQ(r.tie_changes[0].cut, 3.0f);
  EXPECT_EQ(r.tie_changes[0].only_new, std::vector<int64_t>{1});
  EXPECT_EQ(r.tie_changes[0].only_baseline, std::vector<int64_t>{2});
  EXPECT_NE(summary_line(r).find("1 differ only among ties at the cut (legal: a tie-break change)"), std::string::npos)
      << summary_line(r);
  const Report::Entry e = baseline_entry("case/topk_indices", r);
  EXPECT_TRUE(e.passed);
  EXPECT_EQ(e.check, "baseline_selection");
  EXPECT_EQ(e.details["rows_tie_changes"], 1);
  EXPECT_NE(e.table.find("ties"), std::string::npos) << e.table;
}

TEST(OracleBaseline, OtherValuesChosenFailNamingTheRow) {
  const RowColumns v = row_of({5, 3, 3, 1});
  const auto r = compare({0, 3}, v, {0, 1}, v);  // the new one took 1 below the cut
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.rows_changed, 1);
  EXPECT_EQ(r.rows_changed_baseline_broken, 0);
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].only_new, std::vector<int64_t>{3});
  EXPECT_EQ(r.changes[0].only_baseline, std::vector<int64_t>{1});
  EXPECT_NE(format_table(r).find("values"), std::string::npos) << format_table(r);
}

TEST(OracleBaseline, AChangeAwayFromABrokenBaselineIsNamedAPossibleFix) {
  const RowColumns v = row_of({5, 3, 3, 1});
  const auto r = compare({0, 1}, v, {0, 3}, v);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.rows_changed_baseline_broken, 1);
  EXPECT_TRUE(r.changes[0].baseline_breaks_rule);
  EXPECT_NE(summary_line(r).find("a fix?"), std::string::npos) << summary_line(r);
}

TEST(OracleBaseline, RowsWithOtherValuesAreNotComparedBySet) {
  const auto r = compare({0, 1}, row_of({5, 3, 3, 1}), {0, 2}, row_of({5, 3, 3.5f, 1}));
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.rows_values_equal, 0);
  EXPECT_EQ(r.rows_values_differ, 1);
  EXPECT_EQ(r.rows_values_differ_same_set, 0);
  const auto same = compare({0, 1}, row_of({5, 3, 2, 1}), {1, 0}, row_of({5, 3.5f, 2, 1}));
  EXPECT_EQ(same.rows_values_differ_same_set, 1);
  // -0 against +0 is another value (another order of operations), NaN against NaN the same.
  EXPECT_EQ(compare({0}, row_of({-0.0f, 1}), {0}, row_of({0.0f, 1})).rows_values_differ, 1);
  const float nan_a = std::bit_cast<float>(0x7FFFFFFFu), nan_b = std::bit_cast<float>(0xFFC00000u);
  EXPECT_EQ(compare({0}, row_of({nan_a, 1}), {0}, row_of({nan_b, 1})).rows_values_equal, 1);
}

TEST(OracleBaseline, ShortRowsAndTheirTailsCompare) {
  const RowColumns v = row_of({2});
  EXPECT_EQ(compare({0, -1}, v, {0, -1}, v).rows_identical, 1);
  const auto r = compare({-1, 0}, v, {0, -1}, v);  // the same set in another order
  EXPECT_EQ(r.rows_identical, 1);
}

TEST(OracleBaseline, BlocksAreComparedAmongTheLiveOnes) {
  const Logits scores = make_logits(1, 4, {kInf, 2, -kInf, 2});
  const RowColumns live = live_block_columns(scores);
  ASSERT_EQ(live[0].size(), 3u);
  EXPECT_EQ(live[0][2].position, 3);
  const auto r = compare({0, 1}, live, {0, 3}, live);
  EXPECT_EQ(r.rows_tie_changes, 1);
}

TEST(OracleBaseline, MismatchedShapesAreBadInput) {
  const RowColumns v = row_of({5, 3});
  const TopkIndices a = make_indices(1, 2, {0, 1}), b = make_indices(1, 1, {0});
  try {
    compare_selection_to_baseline(view(a), v, view(b), v, "topk_indices");
    FAIL() << "no throw";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "baseline");
  }
}

}  // namespace
}  // namespace dsa::oracle
