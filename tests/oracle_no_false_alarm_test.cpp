// No false alarms: correct outputs that break ties in different ways pass
// every comparator, on rows built to be full of ties; and the same outputs
// with one small mutation fail in exactly the mutated rows.
#include <gtest/gtest.h>

#include <set>

#include "dsa/oracle/determinism_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "oracle_support.hpp"

namespace dsa::oracle {
namespace {

using testing::TieBreak;

constexpr TieBreak kTieBreaks[] = {TieBreak::lowest_index, TieBreak::highest_index, TieBreak::random};

struct Batch {
  int32_t k = 0;
  Logits values;
  std::vector<int64_t> lens;
};

// Rows of heavy ties; a third of the lengths sit at 0, 1, k - 1, k, k + 1.
Batch make_batch(int64_t rows, int64_t width, int32_t k, Rng& rng) {
  Batch b{k, testing::make_logits(rows, width, {}), {}};
  for (int64_t r = 0; r < rows; ++r) {
    testing::fill_tied_row(b.values.row(r), width, rng);
    const int64_t edge[] = {0, 1, k - 1, k, k + 1};
    const int64_t len = rng.bernoulli(0.35) ? edge[rng.uniform_int(0, 4)] : rng.uniform_int(0, width);
    b.lens.push_back(std::clamp<int64_t>(len, 0, width));
  }
  return b;
}

std::vector<int32_t> select_all(const Batch& b, TieBreak tie, Rng& rng) {
  std::vector<int32_t> out;
  for (int64_t r = 0; r < b.values.rows; ++r) {
    const int64_t len = b.lens[size_t(r)];
    const auto row = testing::select_row(b.values.row(r), len, std::min<int64_t>(b.k, len), b.k, tie, rng);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

std::set<int64_t> failed_rows(const SelectionVerdict& v) {
  std::set<int64_t> rows;
  for (const auto& issue : v.failed_rows) rows.insert(issue.row);
  return rows;
}

// The k'-th largest of a row under the SPEC order, by sorting (independent of the oracle's nth_element on keys).
float cut_of(const float* v, int64_t len, int64_t k_valid) {
  std::vector<float> sorted(v, v + len);
  std::sort(sorted.begin(), sorted.end(), [](float a, float b) { return testing::spec_less(b, a); });
  return sorted[size_t(k_valid - 1)];
}

TEST(OracleNoFalseAlarm, TenThousandTiedRowsPassUnderEveryTieBreak) {
  Rng rng(2024);
  SelectionCheckOptions all;
  all.max_listed = 1 << 20;
  int64_t outputs = 0, split_rows = 0;
  for (const int32_t k : {1, 7, 16, 64}) {
    const Batch b = make_batch(2500, 128, k, rng);
    const IndexMatrix shape{{}, b.values.rows, k};
    std::vector<std::vector<int32_t>> runs;
    for (const TieBreak tie : kTieBreaks) {
      runs.push_back(select_all(b, tie, rng));
      const IndexMatrix out{runs.back(), shape.rows, shape.cols};
      const auto exact = check_topk(out, b.values, b.lens, all);
      ASSERT_TRUE(exact.passed) << "k " << k << " tie " << int(tie) << " first failing row "
                                << exact.failed_rows.at(0).row;
      SelectionCheckOptions loose = all;
      loose.eps = 0.25;  // a tolerance only widens what passes
      ASSERT_TRUE(check_topk(out, b.values, b.lens, loose).passed);
      outputs += b.values.rows;
      if (tie == TieBreak::lowest_index) split_rows += exact.rows_split_at_cut;
    }
    // Determinism: the same tie-break twice (reshuffled) agrees; lowest against highest
    // index differs exactly in the rows whose cut splits a group of ties.
    const IndexMatrix low{runs[0], shape.rows, k}, high{runs[1], shape.rows, k};
    const auto again = select_all(b, TieBreak::lowest_index, rng);
    EXPECT_TRUE(check_determinism(low, IndexMatrix{again, shape.rows, k}).passed);
    const auto det = check_determinism(low, high, 1 << 20);
    EXPECT_EQ(det.rows_differing, check_topk(low, b.values, b.lens, all).rows_split_at_cut);
  }
  EXPECT_GE(outputs, 30000);
  EXPECT_GT(split_rows, 1000);  // the generator really does put ties at the cut
}

TEST(OracleNoFalseAlarm, MutatedOutputsFailInExactlyTheMutatedRows) {
  Rng rng(99);
  SelectionCheckOptions all;
  all.max_listed = 1 << 20;
  for (const int32_t k : {1, 8, 32}) {
    const Batch b = make_batch(1500, 96, k, rng);
    const auto good = select_all(b, TieBreak::random, rng);
    auto swapped = good, duplicated = good, tail_dropped = good, tail_unwritten = good;
    std::set<int64_t> swap_rows, dup_rows, tail_rows;
    for (int64_t r = 0; r < b.values.rows; ++r) {
      const float* v = b.values.row(r);
      const int64_t len = b.lens[size_t(r)], kv = std::min<int64_t>(k, len);
      int32_t* slots = swapped.data() + r * k;
      if (kv > 0) {
        // Swap a chosen index for an unchosen one strictly below the cut.
        const float cut = cut_of(v, len, kv);
        const std::set<int32_t> chosen(slots, slots + kv);
        for (int32_t i = 0; i < len; ++i)
          if (!chosen.count(i) && testing::spec_less(v[i], cut)) {
            slots[rng.uniform_int(0, kv - 1)] = i;
            swap_rows.insert(r);
            break;
          }
      }
      if (kv >= 2) {
        duplicated[size_t(r * k + 1)] = duplicated[size_t(r * k)];
        dup_rows.insert(r);
      }
      if (kv < k) {
        tail_dropped[size_t(r * k + kv)] = int32_t(len > 0 ? rng.uniform_int(0, len - 1) : 0);
        tail_unwritten[size_t(r * k + kv)] = kPoisonI32;
        tail_rows.insert(r);
      }
    }
    ASSERT_FALSE(swap_rows.empty());
    ASSERT_FALSE(tail_rows.empty());
    const auto judge = [&](const std::vector<int32_t>& out) {
      return failed_rows(check_topk(IndexMatrix{out, b.values.rows, k}, b.values, b.lens, all));
    };
    EXPECT_EQ(judge(swapped), swap_rows) << "k " << k;
    EXPECT_EQ(judge(duplicated), dup_rows) << "k " << k;
    EXPECT_EQ(judge(tail_dropped), tail_rows) << "k " << k;
    EXPECT_EQ(judge(tail_unwritten), tail_rows) << "k " << k;
    const auto written = check_written(IndexMatrix{tail_unwritten, b.values.rows, k}, "topk_indices");
    EXPECT_EQ(written.rows_with_survivors, int64_t(tail_rows.size()));
  }
}

TEST(OracleNoFalseAlarm, CandidateBlocksUnderEveryTieBreak) {
  Rng rng(5);
  const int64_t rows = 4000, num_blocks = 48;
  Logits scores = testing::make_logits(rows, num_blocks, {});
  for (int64_t r = 0; r < rows; ++r) {
    float* s = scores.row(r);
    testing::fill_tied_row(s, num_blocks, rng);
    const int64_t blocks = rng.uniform_int(0, num_blocks);  // blocks past the row are -inf
    for (int64_t c = blocks; c < num_blocks; ++c) s[c] = -testing::kInf;
    if (blocks > 0) s[blocks - 1] = testing::kInf;  // the pinned newest block
  }
  int64_t outputs = 0;
  for (const int32_t C : {1, 4, 16}) {
    for (const TieBreak tie : kTieBreaks) {
      std::vector<int32_t> out;
      for (int64_t r = 0; r < rows; ++r) {
        const float* s = scores.row(r);
        const int64_t live = std::count_if(s, s + num_blocks, [](float x) { return x != -testing::kInf; });
        const auto sel = testing::select_row(s, num_blocks, std::min<int64_t>(C, live), C, tie, rng);
        out.insert(out.end(), sel.begin(), sel.end());
      }
      const auto v = check_candidate_blocks(IndexMatrix{out, rows, C}, scores);
      ASSERT_TRUE(v.passed) << "C " << C << " tie " << int(tie);
      outputs += rows;
    }
  }
  EXPECT_GE(outputs, 10000);
}

}  // namespace
}  // namespace dsa::oracle
