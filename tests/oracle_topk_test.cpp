// The top-k rule (SPEC 9), one hand-made case per clause.
#include <gtest/gtest.h>

#include "dsa/error.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "oracle_support.hpp"

namespace dsa::oracle {
namespace {

using testing::kInf;
using testing::kNaN;
using testing::make_indices;
using testing::make_logits;

// One decode row of values, visible length len, judged with k slots.
SelectionVerdict judge(const std::vector<float>& values, int64_t len, int32_t k, std::vector<int32_t> slots,
                       double eps = 0) {
  const Logits l = make_logits(1, int64_t(values.size()), values);
  const TopkIndices t = make_indices(1, k, std::move(slots));
  const std::vector<int64_t> lens{len};
  SelectionCheckOptions o;
  o.eps = eps;
  return check_topk(view(t), l, lens, o);
}

const SelectionRowIssue& only_issue(const SelectionVerdict& v) {
  EXPECT_EQ(v.failed_rows.size(), 1u);
  return v.failed_rows.at(0);
}

TEST(OracleTopk, AllValuesEqualAcceptAnySubset) {
  const std::vector<float> v(10, 0.5f);
  for (const auto& slots : {std::vector<int32_t>{0, 1, 2}, {9, 8, 7}, {4, 0, 9}}) {
    const auto verdict = judge(v, 10, 3, slots);
    EXPECT_TRUE(verdict.passed);
    EXPECT_EQ(verdict.ties_at_cut, 10);
    EXPECT_EQ(verdict.ties_chosen, 3);
    EXPECT_EQ(verdict.rows_split_at_cut, 1);
  }
}

TEST(OracleTopk, SevenOfEightColumnsMinusInf) {
  // The candidate mask at 128k leaves 1 column in 8; here 32 live columns of 256.
  std::vector<float> v(256, -kInf);
  for (int i = 0; i < 256; i += 8) v[size_t(i)] = float(i);
  std::vector<int32_t> top16;
  for (int i = 255 - 7; top16.size() < 16; i -= 8) top16.push_back(i);
  EXPECT_TRUE(judge(v, 256, 16, top16).passed);
  // k = 64 > 32 live columns: the cut is -inf and any 32 masked columns fill the rest.
  std::vector<int32_t> all_live, filled_high;
  for (int i = 0; i < 256; i += 8) all_live.push_back(i);
  filled_high = all_live;
  for (int i = 255; filled_high.size() < 64; --i)
    if (i % 8) filled_high.push_back(i);
  auto filled_low = all_live;
  for (int i = 1; filled_low.size() < 64; ++i)
    if (i % 8) filled_low.push_back(i);
  EXPECT_TRUE(judge(v, 256, 64, filled_high).passed);
  EXPECT_TRUE(judge(v, 256, 64, filled_low).passed);
  // Leaving out a live column for a masked one is a miss.
  auto wrong = filled_low;
  wrong[0] = 255;  // 0 was live
  const auto verdict = judge(v, 256, 64, wrong);
  EXPECT_FALSE(verdict.passed);
  EXPECT_EQ(only_issue(verdict).missing, std::vector<int32_t>{0});
}

TEST(OracleTopk, VisibleLengthsAroundK) {
  const std::vector<float> v{5, 4, 3, 2, 1, 0};
  const int k = 4;
  EXPECT_TRUE(judge(v, 0, k, {-1, -1, -1, -1}).passed);                // L = 0
  EXPECT_TRUE(judge(v, 1, k, {0, -1, -1, -1}).passed);                 // L = 1
  EXPECT_TRUE(judge(v, 3, k, {2, 0, 1, -1}).passed);                   // L = k - 1, any order
  EXPECT_TRUE(judge(v, 4, k, {3, 1, 2, 0}).passed);                    // L = k
  EXPECT_TRUE(judge(v, 5, k, {0, 1, 2, 3}).passed);                    // L = k + 1
  EXPECT_FALSE(judge(v, 5, k, {0, 1, 2, 4}).passed);                   // 4 is below the cut
  EXPECT_FALSE(judge(v, 0, k, {0, -1, -1, -1}).passed);                // nothing visible
  // An index at or past L is out of range even where the logits exist.
  const auto past = judge(v, 3, k, {0, 1, 3, -1});
  EXPECT_EQ(past.out_of_range, 1);
  EXPECT_EQ(past.wrong_tail, 0);
}

TEST(OracleTopk, SignedZerosAreEqual) {
  const std::vector<float> v{1.0f, -0.0f, 0.0f, -1.0f};
  EXPECT_TRUE(judge(v, 4, 2, {0, 1}).passed);
  EXPECT_TRUE(judge(v, 4, 2, {2, 0}).passed);
  const auto verdict = judge(v, 4, 2, {0, 2});
  EXPECT_EQ(verdict.ties_at_cut, 2);
  EXPECT_EQ(verdict.ties_chosen, 1);
  EXPECT_FALSE(judge(v, 4, 2, {1, 2}).passed);  // 1.0 is above the cut
}

TEST(OracleTopk, NanRanksAboveInfinity) {
  const std::vector<float> v{kInf, 3, kNaN, -kNaN, 7};
  EXPECT_TRUE(judge(v, 5, 2, {3, 2}).passed);  // the two NaNs
  const auto inf_instead = judge(v, 5, 2, {2, 0});
  EXPECT_FALSE(inf_instead.passed);
  const auto& issue = only_issue(inf_instead);
  EXPECT_TRUE(issue.missing.empty());  // the other NaN ties with the cut (a NaN)
  EXPECT_EQ(issue.extra, std::vector<int32_t>{0});  // +inf is below it
  EXPECT_TRUE(issue.has_nan);
  EXPECT_EQ(inf_instead.rows_with_nan_count, 1);
  // Three slots: both NaNs and +inf; any NaN ties with any other.
  EXPECT_TRUE(judge(v, 5, 3, {0, 3, 2}).passed);
  EXPECT_EQ(judge(v, 5, 1, {3}).ties_at_cut, 2);
}

TEST(OracleTopk, DuplicatesAreCaught) {
  const std::vector<float> v{1, 1, 1, 0};
  const auto verdict = judge(v, 4, 2, {0, 0});
  EXPECT_FALSE(verdict.passed);
  EXPECT_EQ(verdict.duplicates, 1);
  EXPECT_EQ(only_issue(verdict).duplicate_slots, std::vector<int64_t>{1});
}

TEST(OracleTopk, OutOfRangeIndicesAreCaught) {
  const std::vector<float> v{3, 2, 1, 0};
  const auto verdict = judge(v, 4, 3, {0, 1, -7});
  EXPECT_EQ(verdict.out_of_range, 1);
  const auto poisoned = judge(v, 4, 3, {0, 1, kPoisonI32});
  EXPECT_EQ(poisoned.out_of_range, 1);
  EXPECT_EQ(judge(v, 4, 3, {0, 1, 4}).out_of_range, 1);
}

TEST(OracleTopk, WrongMinusOneTail) {
  const std::vector<float> v{3, 2, 1, 0};
  // L = 2 < k = 4: slots 2, 3 must be -1.
  const auto tail_missing = judge(v, 2, 4, {0, 1, 0, 0});
  EXPECT_FALSE(tail_missing.passed);
  EXPECT_EQ(tail_missing.wrong_tail, 2);
  EXPECT_EQ(tail_missing.duplicates, 2);
  const auto unwritten = judge(v, 2, 4, {0, 1, kPoisonI32, kPoisonI32});
  EXPECT_EQ(unwritten.out_of_range, 2);
  // A -1 among the first k' slots, the valid index after it.
  const auto early = judge(v, 2, 4, {0, -1, 1, -1});
  EXPECT_FALSE(early.passed);
  EXPECT_EQ(early.wrong_tail, 2);
  EXPECT_EQ(only_issue(early).wrong_tail_slots, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(early.missing, 0);  // the set itself is right
  EXPECT_FALSE(judge(v, 4, 2, {0, -1}).passed);  // L > k: no -1 at all
}

TEST(OracleTopk, TiesAtTheCutAreCountedAndAccepted) {
  // Three 5s at the cut, k = 3 with one 9 above: any two of the 5s.
  const std::vector<float> v{5, 1, 9, 5, 1, 5};
  for (const auto& slots : {std::vector<int32_t>{2, 0, 3}, {2, 3, 5}, {5, 0, 2}}) {
    const auto verdict = judge(v, 6, 3, slots);
    EXPECT_TRUE(verdict.passed);
    EXPECT_EQ(verdict.ties_at_cut, 3);
    EXPECT_EQ(verdict.ties_chosen, 2);
  }
  const auto below = judge(v, 6, 3, {2, 0, 1});
  EXPECT_EQ(below.extra, 1);
  EXPECT_EQ(below.missing, 0);  // no 5 is strictly above the cut
  const auto above_missing = judge(v, 6, 3, {0, 3, 5});
  EXPECT_EQ(above_missing.missing, 1);  // the 9
  EXPECT_EQ(above_missing.extra, 0);    // three 5s are all at the cut
}

TEST(OracleTopk, ToleranceAcceptsNearTiesOnly) {
  const std::vector<float> v{1.0f, 0.9999f, 0.5f, 0.99995f};
  // k = 2: exact top is {0, 3}; choosing 1 for 3 is 5e-5 off.
  EXPECT_FALSE(judge(v, 4, 2, {0, 1}).passed);
  EXPECT_TRUE(judge(v, 4, 2, {0, 1}, 1e-4).passed);
  EXPECT_FALSE(judge(v, 4, 2, {0, 2}, 1e-4).passed);
  const auto far = judge(v, 4, 2, {0, 2}, 1e-4);
  EXPECT_EQ(far.extra, 1);
  EXPECT_EQ(far.missing, 0);  // nothing unchosen is above cut + eps
  // Infinities and NaN still follow the order, whatever eps.
  const std::vector<float> w{kInf, 1e30f, kNaN};
  EXPECT_FALSE(judge(w, 3, 2, {2, 1}, 1e40).passed);
}

TEST(OracleTopk, PrefillIndicesCountFromKs) {
  const Logits l = make_logits(2, 6, {9, 9, 1, 2, 3, 9, /*row 1*/ 0, 0, 0, 0, 7, 8});
  const std::vector<int32_t> ks{2, 4}, ke{5, 6};
  const RowBounds bounds = prefill_bounds(ks, ke);
  const TopkIndices good = make_indices(2, 2, {2, 1, 1, 0});  // values 3, 2 and 8, 7
  EXPECT_TRUE(check_topk(view(good), l, bounds).passed);
  const TopkIndices absolute = make_indices(2, 2, {4, 3, 5, 4});  // positions, not relative
  const auto v = check_topk(view(absolute), l, bounds);
  EXPECT_EQ(v.rows_failed, 2);
  EXPECT_EQ(v.out_of_range, 4);
}

TEST(OracleTopk, WorstRowsComeFirst) {
  const Logits l = make_logits(3, 4, {3, 2, 1, 0, 3, 2, 1, 0, 3, 2, 1, 0});
  const TopkIndices t = make_indices(3, 2, {0, 1, 3, 3, 2, 1});
  const std::vector<int64_t> lens{4, 4, 4};
  const auto v = check_topk(view(t), l, lens);
  EXPECT_EQ(v.rows_failed, 2);
  ASSERT_EQ(v.failed_rows.size(), 2u);
  EXPECT_EQ(v.failed_rows[0].row, 1);  // duplicate + extra + two missing
  EXPECT_EQ(v.failed_rows[1].row, 2);
}

TEST(OracleTopk, BadArgumentsAreInvalidInput) {
  const Logits l = make_logits(2, 4, {});
  const TopkIndices t = make_indices(2, 2, {});
  const std::vector<int64_t> lens{4, 5}, one{4};
  EXPECT_THROW(check_topk(view(t), l, lens), InvalidInput);
  EXPECT_THROW(check_topk(view(t), l, one), InvalidInput);
  const std::vector<int64_t> ok{4, 4};
  SelectionCheckOptions o;
  o.eps = -1;
  EXPECT_THROW(check_topk(view(t), l, ok, o), InvalidInput);
  IndexMatrix short_view{std::span<const int32_t>(t.indices).first(3), 2, 2};
  EXPECT_THROW(check_topk(short_view, l, ok), InvalidInput);
}

}  // namespace
}  // namespace dsa::oracle
