// The candidate-block rule (SPEC 9 on SPEC 7's block scores), and the
// oracle's own block scores checked by hand and against the reference's.
#include <gtest/gtest.h>

#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/oracle/float_bits.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "oracle_support.hpp"

namespace dsa::oracle {
namespace {

using testing::kInf;
using testing::kNaN;
using testing::make_indices;
using testing::make_logits;

// Block scores of one row read over [start, end).
struct Range {
  int64_t start = 0, end = 0;
};
std::vector<float> row_scores(const std::vector<float>& values, Range w, int64_t S, int64_t num_blocks = -1) {
  const Logits l = make_logits(1, int64_t(values.size()), values);
  return candidate_block_scores(l, S, RowBounds{{w.start}, {w.end}}, num_blocks).values;
}

TEST(OracleBlockScores, MaxNanNewestPastAndEmpty) {
  const std::vector<float> v{1, 4, 2, 3, /*block 1*/ 0, kNaN, 9, 1, /*block 2*/ 5, 6};
  const auto s = row_scores(v, {0, 10}, 4);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], 4);
  EXPECT_TRUE(std::isnan(s[1]));  // NaN propagates over 9
  EXPECT_EQ(s[2], kInf);          // the newest entry's block
  const auto past = row_scores(v, {0, 3}, 4, 3);
  EXPECT_EQ(past, (std::vector<float>{kInf, -kInf, -kInf}));
  const auto empty = row_scores(v, {0, 0}, 4, 2);
  EXPECT_EQ(empty, (std::vector<float>{-kInf, -kInf}));
}

TEST(OracleBlockScores, RowEndingOnABlockAndOnePast) {
  const std::vector<float> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(row_scores(v, {0, 8}, 4, 3), (std::vector<float>{4, kInf, -kInf}));
  EXPECT_EQ(row_scores(v, {0, 9}, 4, 3), (std::vector<float>{4, 8, kInf}));
  // Prefill rows count blocks from ks.
  EXPECT_EQ(row_scores(v, {3, 10}, 4), (std::vector<float>{7, kInf}));
}

TEST(OracleBlockScores, AgreeBitwiseWithTheReference) {
  Rng rng(41);
  const int64_t width = 96;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<float> v(static_cast<size_t>(width));
    testing::fill_tied_row(v.data(), width, rng);
    const int64_t start = rng.uniform_int(0, 8), end = rng.uniform_int(start, width);
    const int32_t S = int32_t(rng.uniform_int(1, 16));
    const int64_t blocks = (end - start + S - 1) / S + 1;
    const auto mine = row_scores(v, {start, end}, S, blocks);
    const auto theirs = dsa::candidate_block_scores(v.data(), start, end, S, blocks);
    ASSERT_EQ(mine.size(), theirs.size());
    for (size_t c = 0; c < mine.size(); ++c)
      ASSERT_EQ(float_bits(mine[c]), float_bits(theirs[c])) << "trial " << trial << " block " << c;
  }
}

SelectionVerdict judge_blocks(const std::vector<float>& scores, int32_t C, std::vector<int32_t> slots) {
  const Logits s = make_logits(1, int64_t(scores.size()), scores);
  const TopkIndices b = make_indices(1, C, std::move(slots));
  return check_candidate_blocks(view(b), s);
}

TEST(OracleCandidateBlocks, TiesAtTheCutAndOrderAreFree) {
  const std::vector<float> s{kInf, 5, 5, 3, -kInf};
  EXPECT_TRUE(judge_blocks(s, 2, {0, 1}).passed);
  EXPECT_TRUE(judge_blocks(s, 2, {2, 0}).passed);
  const auto v = judge_blocks(s, 2, {2, 0});
  EXPECT_EQ(v.check, "candidate_blocks");
  EXPECT_EQ(v.ties_at_cut, 2);
  EXPECT_EQ(v.ties_chosen, 1);
  const auto wrong = judge_blocks(s, 2, {0, 3});
  EXPECT_FALSE(wrong.passed);
  EXPECT_EQ(wrong.extra, 1);
  EXPECT_EQ(judge_blocks(s, 2, {1, 2}).missing, 1);  // the pinned newest block left out
}

TEST(OracleCandidateBlocks, FewerLiveBlocksThanSlotsGiveMinusOne) {
  const std::vector<float> s{kInf, 5, -kInf, 3, -kInf};
  EXPECT_TRUE(judge_blocks(s, 5, {3, 0, 1, -1, -1}).passed);
  const auto dead = judge_blocks(s, 5, {3, 0, 1, 2, -1});  // a -inf block is never a candidate
  EXPECT_FALSE(dead.passed);
  EXPECT_EQ(dead.wrong_tail, 1);
  EXPECT_EQ(dead.extra, 1);
  EXPECT_FALSE(judge_blocks(s, 5, {3, 0, -1, -1, -1}).passed);  // a live block dropped
  const std::vector<float> none(4, -kInf);
  EXPECT_TRUE(judge_blocks(none, 2, {-1, -1}).passed);
  EXPECT_FALSE(judge_blocks(none, 2, {0, -1}).passed);
}

TEST(OracleCandidateBlocks, NanBlocksRankAboveThePinnedBlock) {
  const std::vector<float> s{1, kNaN, kInf};
  EXPECT_TRUE(judge_blocks(s, 1, {1}).passed);
  EXPECT_FALSE(judge_blocks(s, 1, {2}).passed);
  EXPECT_TRUE(judge_blocks(s, 2, {2, 1}).passed);
}

TEST(OracleCandidateBlocks, DuplicatesAndOutOfRange) {
  const std::vector<float> s{kInf, 5, 4, 3};
  EXPECT_EQ(judge_blocks(s, 3, {0, 1, 1}).duplicates, 1);
  EXPECT_EQ(judge_blocks(s, 3, {0, 1, 4}).out_of_range, 1);
}

TEST(OracleCandidateBlocks, ReferenceSelectionAndOtherTieBreaksPass) {
  Rng rng(7);
  const int64_t rows = 64, width = 200;
  const int32_t S = 8, C = 6;
  Logits l = make_logits(rows, width, {});
  RowBounds bounds;
  for (int64_t r = 0; r < rows; ++r) {
    testing::fill_tied_row(l.row(r), width, rng);
    bounds.start.push_back(0);
    bounds.end.push_back(rng.uniform_int(0, width));
  }
  const int64_t num_blocks = (width + S - 1) / S;
  const Logits scores = candidate_block_scores(l, S, bounds, num_blocks);
  const CandidateBlocks ref = select_candidate_blocks(l, bounds, S, C);
  const IndexMatrix ref_view{ref.blocks, ref.rows, ref.slots};
  const auto ref_verdict = check_candidate_blocks(ref_view, scores);
  EXPECT_TRUE(ref_verdict.passed) << ref_verdict.rows_failed;
  EXPECT_GT(ref_verdict.rows_split_at_cut, 0);  // the data do exercise ties at the cut
  for (auto tie : {testing::TieBreak::lowest_index, testing::TieBreak::highest_index, testing::TieBreak::random}) {
    std::vector<int32_t> out;
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = scores.row(r);
      const int64_t live = std::count_if(row, row + num_blocks, [](float x) { return x != -kInf; });
      const auto sel = testing::select_row(row, num_blocks, std::min<int64_t>(C, live), C, tie, rng);
      out.insert(out.end(), sel.begin(), sel.end());
    }
    const IndexMatrix mine{out, rows, C};
    EXPECT_TRUE(check_candidate_blocks(mine, scores).passed);
  }
}

}  // namespace
}  // namespace dsa::oracle
