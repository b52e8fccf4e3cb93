// The oracle's candidate views: which columns a candidate top-k chooses among,
// the compact layout and its defined entries, and the top-k rule over a row's
// own columns (reported in positions), on hand-worked rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "dsa/error.hpp"
#include "dsa/rng.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/report.hpp"
#include "oracle_support.hpp"

namespace dsa::oracle {
namespace {

using testing::kInf;
using testing::kNaN;
using testing::make_indices;
using testing::make_logits;

// Row 0: S = 4, slots {5, -1, 1} over 22 positions: block 5 is cut at 22, block 1 whole.
CandidateBlocks two_rows() { return CandidateBlocks{2, 3, 4, {5, -1, 1, /*row 1*/ -1, -1, 0}}; }

std::string argument_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.argument();
  }
  return "(no InvalidInput)";
}

TEST(OracleCandidateViews, PositionsAreLiveBlocksBelowTheLengthAscending) {
  const CandidateBlocks c = two_rows();
  EXPECT_EQ(candidate_positions(c, 0, 22), (std::vector<int64_t>{4, 5, 6, 7, 20, 21}));
  EXPECT_EQ(candidate_positions(c, 0, 5), (std::vector<int64_t>{4}));
  EXPECT_TRUE(candidate_positions(c, 0, 4).empty());
  EXPECT_EQ(candidate_positions(c, 1, 3), (std::vector<int64_t>{0, 1, 2}));
}

TEST(OracleCandidateViews, CompactLayoutAndDefinedEntries) {
  const CandidateBlocks c = two_rows();
  EXPECT_EQ(compact_position(c, 0, 0), 20);
  EXPECT_EQ(compact_position(c, 0, 3), 23);
  EXPECT_EQ(compact_position(c, 0, 5), -1);  // slot 1 is empty
  EXPECT_EQ(compact_position(c, 0, 9), 5);
  EXPECT_TRUE(compact_defined(c, 0, 1, 22));
  EXPECT_FALSE(compact_defined(c, 0, 2, 22));  // position 22 is past the row
  EXPECT_FALSE(compact_defined(c, 0, 5, 22));
}

TEST(OracleCandidateViews, DenseColumnsReadFromTheRowStart) {
  // A prefill-like row starting at 3: position p is column 3 + p.
  std::vector<float> v(40);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  const Logits l = make_logits(2, 20, v);
  const CandidateBlocks c{2, 2, 4, {1, -1, /*row 1*/ 0, 3}};
  const RowBounds b{{3, 0}, {10, 14}};
  const RowColumns cols = candidate_columns(l, b, c);
  ASSERT_EQ(cols[0].size(), 3u);  // positions 4, 5, 6 (7 is past the length 7)
  EXPECT_EQ(cols[0][0].position, 4);
  EXPECT_EQ(cols[0][0].value, 7.0f);
  EXPECT_EQ(cols[0][2].value, 9.0f);
  ASSERT_EQ(cols[1].size(), 6u);  // 0..3, then 12, 13 of block 3
  EXPECT_EQ(cols[1][4].position, 12);
  EXPECT_EQ(cols[1][4].value, 32.0f);

  const Logits compact = compact_from_dense(l, b, c);
  EXPECT_EQ(compact.width, 8);
  EXPECT_EQ(compact.at(0, 0), 7.0f);
  EXPECT_EQ(compact.at(0, 3), -kInf);  // position 7 is not in the row
  EXPECT_EQ(compact.at(0, 4), -kInf);  // empty slot
  EXPECT_EQ(compact.at(1, 5), 33.0f);
  EXPECT_EQ(compact.at(1, 6), -kInf);
}

TEST(OracleCandidateViews, TopkAmongColumnsIsTheRuleInPositions) {
  const CandidateBlocks c = two_rows();
  // Row 0's columns: positions 4..7 and 20, 21; row 1's: 0..2.
  std::vector<float> v(2 * 24, 100.0f);  // large values outside the candidates: never to be chosen
  v[4] = 1, v[5] = 3, v[6] = 3, v[7] = 0, v[20] = 5, v[21] = 2;
  v[24 + 0] = kNaN, v[24 + 1] = 1, v[24 + 2] = -kInf;
  const Logits l = make_logits(2, 24, v);
  const RowBounds b{{0, 0}, {22, 3}};
  const RowColumns cols = candidate_columns(l, b, c);

  // 5 and both 3s; ties at the cut either way; row 1 takes all three (NaN first) then -1.
  EXPECT_TRUE(check_topk_among(view(make_indices(2, 4, {20, 5, 6, 21, 0, 2, 1, -1})), cols).passed);
  const auto k2 = check_topk_among(view(make_indices(2, 2, {6, 20, 0, 1})), cols);
  EXPECT_TRUE(k2.passed) << format_table(k2);

  // Column 8 holds 100 but is not a candidate: out of range.
  const auto wrong = check_topk_among(view(make_indices(2, 2, {20, 8, 0, 1})), cols);
  EXPECT_FALSE(wrong.passed);
  EXPECT_EQ(wrong.out_of_range, 1);
  ASSERT_EQ(wrong.failed_rows.size(), 1u);
  EXPECT_EQ(wrong.failed_rows[0].candidates, 6);

  // 5 left out for the 2: missing and extra are named by their positions (20 and 21, not places 4 and 5).
  const auto low = check_topk_among(view(make_indices(2, 2, {5, 21, 0, 1})), cols);
  ASSERT_EQ(low.failed_rows.size(), 1u);
  EXPECT_EQ(low.failed_rows[0].missing, (std::vector<int32_t>{20}));
  EXPECT_EQ(low.failed_rows[0].extra, (std::vector<int32_t>{21}));

  // Poison and duplicates are the plain rule's.
  const auto poisoned = check_topk_among(view(make_indices(2, 2, {20, kPoisonI32, 0, 0})), cols);
  EXPECT_EQ(poisoned.out_of_range, 1);
  EXPECT_EQ(poisoned.duplicates, 1);
}

TEST(OracleCandidateViews, CompactColumnsAndViews) {
  const CandidateBlocks c = two_rows();
  const std::vector<int64_t> lens{22, 3};
  Logits expected = make_logits(2, 12, std::vector<float>(24, 1.0f));
  Logits actual = expected;
  // Undefined entries (empty slot, past the row) may hold anything, poison included.
  fill_poison(std::span<float>(actual.row(0) + 4, 4));
  actual.row(0)[2] = 7.0f;
  actual.row(1)[11] = kNaN;
  const CompactViews same = compact_views(actual, expected, c, lens);
  EXPECT_TRUE(check_logits(same.actual, same.expected, full_bounds(2, 12)).passed);
  EXPECT_TRUE(check_written(same.written, "compact_logits").passed);
  EXPECT_TRUE(check_written(compact_written_view(actual, c, lens), "compact_logits").passed);

  // A defined entry: a different value fails, poison is "never written".
  actual.row(0)[9] = 2.0f;
  actual.row(1)[8] = float_from_bits(kPoisonF32Bits);
  const CompactViews differ = compact_views(actual, expected, c, lens);
  LogitsCheckOptions o;
  o.poison_bits = kPoisonF32Bits;
  const auto lv = check_logits(differ.actual, differ.expected, full_bounds(2, 12), o);
  EXPECT_EQ(lv.mismatches, 2);
  const auto wv = check_written(differ.written, "compact_logits");
  EXPECT_EQ(wv.survivors, 1);
  ASSERT_EQ(wv.first_survivors.size(), 1u);
  EXPECT_EQ(wv.first_survivors[0].row, 1);
  EXPECT_EQ(wv.first_survivors[0].col, 8);

  // By position: row 0 holds positions 4..7 (slot 2) then 20, 21 (slot 0).
  const RowColumns cols = compact_columns(expected, c, lens);
  ASSERT_EQ(cols[0].size(), 6u);
  EXPECT_EQ(cols[0][0].position, 4);
  EXPECT_EQ(cols[0][5].position, 21);
  EXPECT_EQ(cols[1].size(), 3u);
}

TEST(OracleCandidateViews, SparseColumnsSitAtTheirPositions) {
  // SBK 8: ids {3, 5, 5}, end 12: columns 0..7 are positions 24..31, 8..11 are 40..43 (ks 0).
  SparseBlocks s{1, 3, 8, {3, 5, 5}, {12}};
  std::vector<float> v(24, -kInf);
  for (int i = 0; i < 12; ++i) v[size_t(i)] = float(i);
  const Logits l = make_logits(1, 24, v);
  const RowColumns cols = sparse_columns(l, s, std::vector<int64_t>{0});
  ASSERT_EQ(cols[0].size(), 12u);
  EXPECT_EQ(cols[0][0].position, 24);
  EXPECT_EQ(cols[0][8].position, 40);
  EXPECT_EQ(cols[0][11].value, 11.0f);
  // The top 2 are columns 11 and 10: positions 43 and 42.
  EXPECT_TRUE(check_topk_among(view(make_indices(1, 2, {43, 42})), cols).passed);
  EXPECT_FALSE(check_topk_among(view(make_indices(1, 2, {11, 10})), cols).passed);  // columns, not positions
}

TEST(OracleCandidateViews, MaskKeepsCandidateColumnsOnly) {
  // Row 0 [2, 12): S = 4, blocks {0, 2}: positions 0..3 and 8, 9 (columns 2..5, 10, 11) stay.
  std::vector<float> v(2 * 14);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  const Logits l = make_logits(2, 14, v);
  const CandidateBlocks c{2, 2, 4, {2, 0, /*row 1*/ -1, -1}};
  const RowBounds b{{2, 0}, {12, 9}};
  const Logits strided = expected_candidate_mask(l, b, c, CandidateMask::strided);
  const std::vector<float> row0(strided.row(0), strided.row(0) + 14);
  EXPECT_EQ(row0, (std::vector<float>{0, 1, 2, 3, 4, 5, -kInf, -kInf, -kInf, -kInf, 10, 11, 12, 13}));
  EXPECT_EQ(strided.at(1, 0), -kInf);  // no candidate in row 1
  EXPECT_EQ(strided.at(1, 9), 23.0f);  // past the row: as it was
  const Logits full = expected_candidate_mask(l, b, c, CandidateMask::full);
  EXPECT_EQ(full.at(0, 1), -kInf);
  EXPECT_EQ(full.at(0, 12), -kInf);
  EXPECT_EQ(full.at(0, 3), 3.0f);

  // The same as the reference's mask on random rows, blocks past the row and NaN included.
  Rng rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t rows = rng.uniform_int(1, 6), width = rng.uniform_int(1, 90);
    const int32_t S = int32_t(rng.uniform_int(1, 9)), slots = int32_t(rng.uniform_int(1, 6));
    Logits x = make_logits(rows, width, {});
    for (auto& e : x.values) e = rng.uniform_int(0, 9) == 0 ? kNaN : float(rng.uniform_int(-5, 5));
    RowBounds rb;
    CandidateBlocks cand{rows, slots, S, {}};
    for (int64_t r = 0; r < rows; ++r) {
      rb.start.push_back(rng.uniform_int(0, width));
      rb.end.push_back(rng.uniform_int(rb.start.back(), width));
      std::vector<int32_t> used;
      for (int32_t s = 0; s < slots; ++s) {
        int32_t id = int32_t(rng.uniform_int(-1, width / S + 1));
        if (std::find(used.begin(), used.end(), id) != used.end()) id = -1;
        if (id >= 0) used.push_back(id);
        cand.blocks.push_back(id);
      }
    }
    for (const CandidateMask m : {CandidateMask::full, CandidateMask::strided}) {
      Logits ref = x;
      apply_candidate_mask(ref, rb, cand, m);
      const Logits mine = expected_candidate_mask(x, rb, cand, m);
      EXPECT_TRUE(check_logits(mine, ref, full_bounds(rows, width)).passed) << "trial " << trial;
    }
  }
}

TEST(OracleCandidateViews, BadShapesNameTheArgument) {
  const CandidateBlocks c = two_rows();
  const Logits l = make_logits(2, 24, {});
  const Logits one_row = make_logits(1, 24, {});
  EXPECT_EQ(argument_of([&] { candidate_columns(one_row, RowBounds{{0}, {3}}, c); }), "candidate_blocks");
  EXPECT_EQ(argument_of([&] { candidate_columns(l, RowBounds{{0, 0}, {3, 30}}, c); }), "row_bounds");
  EXPECT_EQ(argument_of([&] { compact_columns(l, c, std::vector<int64_t>{3, 3}); }), "compact_logits");
  const Logits compact = make_logits(2, 12, {});
  EXPECT_EQ(argument_of([&] { compact_views(compact, compact, c, std::vector<int64_t>{3}); }), "lens");
  const CandidateBlocks twice{1, 2, 4, {3, 3}};
  EXPECT_EQ(argument_of([&] { compact_written_view(make_logits(1, 8, {}), twice, std::vector<int64_t>{8}); }),
            "candidate_blocks");
  EXPECT_EQ(argument_of([&] { check_topk_among(view(make_indices(3, 1, {})), RowColumns(2)); }), "topk indices");
}

}  // namespace
}  // namespace dsa::oracle
