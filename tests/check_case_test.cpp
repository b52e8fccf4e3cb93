// The checker's verdicts on one case: right outputs, right outputs tied
// differently, wrong outputs, poison left behind, the kernel's own logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "dsa/dataset/check.hpp"
#include "dsa/oracle/float_bits.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "golden_test_support.hpp"
#include "test_values.hpp"

namespace dsa::golden_test {
namespace {

using dataset::GoldenCase;
using dataset::GoldenOutputs;
using ::dsa::test::kInf;

bool passed(const GoldenCase& c, const GoldenOutputs& out, dataset::CheckOptions options = {}) {
  return dataset::check_case(c, out, "case", options).passed();
}

// The failed checks' names, e.g. {"written", "topk"}.
std::vector<std::string> failed_checks(const GoldenCase& c, const GoldenOutputs& out) {
  std::vector<std::string> names;
  const auto report = dataset::check_case(c, out, "case");
  for (const auto& e : report.entries())
    if (!e.passed) names.push_back(e.check);
  return names;
}

// The k best of `values` at `positions`, ties broken towards the HIGHEST
// position (the reference takes the lowest): another correct answer.
std::vector<int32_t> best_high_ties(const std::vector<std::pair<int64_t, float>>& columns, int k) {
  auto order = columns;
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    const uint32_t ka = topk_order_key(a.second), kb = topk_order_key(b.second);
    return ka != kb ? ka > kb : a.first > b.first;
  });
  std::vector<int32_t> out(size_t(k), -1);
  for (size_t i = 0; i < order.size() && i < size_t(k); ++i) out[i] = int32_t(order[i].first);
  return out;
}

std::vector<std::pair<int64_t, float>> row_columns(const Logits& values, int64_t r, int64_t begin, int64_t end) {
  std::vector<std::pair<int64_t, float>> cols;
  for (int64_t n = begin; n < end; ++n) cols.emplace_back(n - begin, values.at(r, n));
  return cols;
}

TopkIndices retied_topk(const GoldenCase& c, const Logits& values) {
  TopkIndices t = *c.expected.topk_indices;
  const auto begin = c.window_begin(), end = c.window_end();
  for (int64_t r = 0; r < t.rows; ++r) {
    const auto row = best_high_ties(row_columns(values, r, begin[size_t(r)], end[size_t(r)]), t.k);
    std::copy(row.begin(), row.end(), t.row(r));
  }
  return t;
}

TEST(CheckCase, TopkTiedTheOtherWayPasses) {
  for (size_t index : {1, 2}) {  // edge: ties (six distinct keys), neg_inf_rows (constant, specials, -inf)
    const GoldenCase c = preset_case("edge", "exact", index);
    const Logits& values = c.given_logits ? *c.given_logits : *c.expected.logits;
    GoldenOutputs out = c.expected;
    out.topk_indices = retied_topk(c, values);
    ASSERT_NE(out.topk_indices->indices, c.expected.topk_indices->indices) << "the retie must change something";
    EXPECT_TRUE(passed(c, out)) << dataset::check_case(c, out, "case").to_text();
  }
}

TEST(CheckCase, CandidateBlocksTiedTheOtherWayPass) {
  const GoldenCase c = preset_case("edge", "exact", 4);  // candidate_rows: constant rows tie every block
  GoldenOutputs out = c.expected;
  const auto ends = c.candidate_ends();
  const RowBounds bounds = oracle::decode_bounds(ends);
  const int64_t num_blocks = c.logits_width() / c.settings.candidate_block_size;
  const Logits scores = oracle::candidate_block_scores(*c.given_logits, c.settings.candidate_block_size, bounds, num_blocks);
  for (int64_t r = 0; r < c.rows(); ++r) {
    std::vector<std::pair<int64_t, float>> live;
    for (int64_t b = 0; b < num_blocks; ++b)
      if (scores.at(r, b) != -kInf) live.emplace_back(b, scores.at(r, b));
    const auto row = best_high_ties(live, c.settings.candidate_topk_blocks);
    std::copy(row.begin(), row.end(), out.candidate_blocks->row(r));
  }
  ASSERT_NE(out.candidate_blocks->blocks, c.expected.candidate_blocks->blocks);
  EXPECT_TRUE(passed(c, out)) << dataset::check_case(c, out, "case").to_text();
  // A block below the cut instead of one above it fails.
  GoldenOutputs wrong = c.expected;
  int changed = 0;
  for (int64_t r = 0; r < c.rows(); ++r) {
    int32_t* row = wrong.candidate_blocks->row(r);
    if (ends[size_t(r)] != 100) continue;  // the -inf-heavy request: some blocks are dead
    for (int64_t b = 0; b < num_blocks; ++b)
      if (scores.at(r, b) == -kInf && b * 8 < ends[size_t(r)]) {
        row[0] = int32_t(b);
        ++changed;
        break;
      }
  }
  ASSERT_GT(changed, 0);
  EXPECT_EQ(failed_checks(c, wrong), std::vector<std::string>{"candidate_blocks"});
}

TEST(CheckCase, CandidateTopkTiedTheOtherWayPassesAndANonCandidateFails) {
  const GoldenCase c = preset_case("edge", "exact", 5);  // candidate_topk_drawn: -1 slots, a block past the row
  GoldenOutputs out = c.expected;
  const auto lens = c.window_end();
  const auto& cand = *c.candidate_blocks;
  for (int64_t r = 0; r < c.rows(); ++r) {
    std::vector<std::pair<int64_t, float>> cols;
    for (int32_t s = 0; s < cand.slots; ++s)
      for (int64_t t = 0; t < cand.block_size && cand.row(r)[s] >= 0; ++t) {
        const int64_t p = cand.row(r)[s] * cand.block_size + t;
        if (p < lens[size_t(r)]) cols.emplace_back(p, c.given_logits->at(r, p));
      }
    const auto row = best_high_ties(cols, c.settings.topk);
    std::copy(row.begin(), row.end(), out.topk_indices->row(r));
  }
  ASSERT_NE(out.topk_indices->indices, c.expected.topk_indices->indices);
  EXPECT_TRUE(passed(c, out)) << dataset::check_case(c, out, "case").to_text();
  // A visible position outside every candidate block: out of range for the rule.
  GoldenOutputs wrong = c.expected;
  for (int64_t r = 0; r < c.rows(); ++r) {
    if (lens[size_t(r)] < 40 || wrong.topk_indices->row(r)[0] < 0) continue;
    for (int32_t p = 0; p < lens[size_t(r)]; ++p) {
      const int32_t* row = cand.row(r);
      if (std::find(row, row + cand.slots, p / cand.block_size) != row + cand.slots) continue;
      wrong.topk_indices->row(r)[0] = p;
      break;
    }
    break;
  }
  EXPECT_EQ(failed_checks(c, wrong), std::vector<std::string>{"topk"});
}

TEST(CheckCase, WrongTopkFails) {
  const GoldenCase c = preset_case("v32_decode", "exact", 0);  // row 0 sees more than k entries
  const auto lens = c.window_end();
  ASSERT_GT(lens[0], c.settings.topk);
  // The smallest entry of row 0 in place of a chosen one.
  const Logits& logits = *c.expected.logits;
  int32_t smallest = 0;
  for (int32_t n = 1; n < lens[0]; ++n)
    if (logits.at(0, n) < logits.at(0, smallest)) smallest = n;
  GoldenOutputs swapped = c.expected;
  swapped.topk_indices->row(0)[5] = smallest;
  EXPECT_EQ(failed_checks(c, swapped), std::vector<std::string>{"topk"});
  GoldenOutputs duplicate = c.expected;
  duplicate.topk_indices->row(0)[5] = duplicate.topk_indices->row(0)[6];
  EXPECT_EQ(failed_checks(c, duplicate), std::vector<std::string>{"topk"});
  GoldenOutputs early_tail = c.expected;
  early_tail.topk_indices->row(0)[0] = -1;
  EXPECT_EQ(failed_checks(c, early_tail), std::vector<std::string>{"topk"});
  // A short row must end in -1.
  GoldenOutputs past_row = c.expected;
  ASSERT_LT(lens[1], c.settings.topk);
  past_row.topk_indices->row(1)[lens[1]] = int32_t(lens[1]);
  EXPECT_EQ(failed_checks(c, past_row), std::vector<std::string>{"topk"});
}

TEST(CheckCase, LogitsBitExactOrWithinTolerance) {
  const GoldenCase c = preset_case("v32_decode", "exact", 1);
  const auto lens = c.window_end();
  GoldenOutputs off = c.expected;
  float& v = off.logits->row(2)[7];
  v = std::nextafter(v, kInf);
  EXPECT_EQ(failed_checks(c, off), std::vector<std::string>{"logits"});
  dataset::CheckOptions loose;
  loose.tolerance = 1e-3;
  EXPECT_TRUE(passed(c, off, loose));
  // Past a row's end a kernel may leave anything.
  GoldenOutputs tail = c.expected;
  tail.logits->row(2)[lens[2]] = 12345.0f;
  tail.logits->row(2)[lens[2] + 1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(passed(c, tail));
}

TEST(CheckCase, PoisonLeftWhereTheKernelMustWrite) {
  const GoldenCase c = preset_case("v32_decode", "exact", 1);
  const auto lens = c.window_end();
  GoldenOutputs topk = c.expected;
  topk.topk_indices->row(3)[2047] = oracle::kPoisonI32;
  const auto checks = failed_checks(c, topk);
  EXPECT_NE(std::find(checks.begin(), checks.end(), "written"), checks.end());
  GoldenOutputs logits = c.expected;
  logits.logits->row(0)[3] = oracle::float_from_bits(oracle::kPoisonF32Bits);
  EXPECT_EQ(failed_checks(c, logits), (std::vector<std::string>{"written", "logits"}));
  GoldenOutputs past = c.expected;
  std::fill(past.logits->row(0) + lens[0], past.logits->row(0) + past.logits->width,
            oracle::float_from_bits(oracle::kPoisonF32Bits));
  EXPECT_TRUE(passed(c, past));
  // bf16 logits: the bf16 poison, widened by a shift.
  const GoldenCase b = preset_case("mxfp4", "deepgemm_sm100_bf16", 0);
  GoldenOutputs bf = b.expected;
  bf.logits->row(1)[0] = oracle::float_from_bits(oracle::kPoisonBf16AsF32Bits);
  EXPECT_EQ(failed_checks(b, bf), (std::vector<std::string>{"written", "logits"}));
}

// A top-k is judged on the logits it read: the kernel's own when it hands them in.
TEST(CheckCase, TopkJudgedOnTheKernelsOwnLogits) {
  const GoldenCase c = preset_case("v32_decode", "exact", 0);
  GoldenOutputs out = c.expected;
  const auto lens = c.window_end();
  // The kernel's logits differ at one entry that becomes the row's maximum;
  // its top-k follows its own logits.
  int32_t unchosen = -1;
  for (int32_t n = 0; n < lens[0] && unchosen < 0; ++n)
    if (std::find(out.topk_indices->row(0), out.topk_indices->row(0) + out.topk_indices->k, n) ==
        out.topk_indices->row(0) + out.topk_indices->k)
      unchosen = n;
  ASSERT_GE(unchosen, 0);
  out.logits->row(0)[unchosen] = 1e30f;
  std::vector<std::pair<int64_t, float>> cols = row_columns(*out.logits, 0, 0, lens[0]);
  const auto row = best_high_ties(cols, out.topk_indices->k);
  std::copy(row.begin(), row.end(), out.topk_indices->row(0));
  EXPECT_EQ(failed_checks(c, out), std::vector<std::string>{"logits"});
  // Without its logits the same top-k is judged on the reference's, and fails.
  GoldenOutputs alone = out;
  alone.logits.reset();
  EXPECT_EQ(failed_checks(c, alone), std::vector<std::string>{"topk"});
}

TEST(CheckCase, CompactLogitsOnlyWhereAKernelMustWrite) {
  const GoldenCase c = preset_case("v41_c4a", "exact", 3);
  const auto lens = c.window_end();
  const auto& cand = *c.candidate_blocks;
  GoldenOutputs out = c.expected;
  const float poison = oracle::float_from_bits(oracle::kPoisonF32Bits);
  int64_t dead = 0, live_col = -1;
  for (int64_t col = 0; col < out.compact_logits->width; ++col) {
    const int64_t p = compact_column_position(cand, 3, col);
    if (p < 0 || p >= lens[3]) {
      out.compact_logits->row(3)[col] = poison;
      ++dead;
    } else if (live_col < 0) {
      live_col = col;
    }
  }
  ASSERT_GT(dead, 0);  // the short request's rows have -1 slots
  EXPECT_TRUE(passed(c, out)) << dataset::check_case(c, out, "case").to_text();
  out.compact_logits->row(3)[live_col] = poison;
  EXPECT_EQ(failed_checks(c, out), (std::vector<std::string>{"written", "logits"}));
}

TEST(CheckCase, MaskedLogitsAndSparseBlocks) {
  const GoldenCase m = preset_case("v41_c4a", "exact", 2);
  GoldenOutputs unmasked = m.expected;
  // Column 0 of row 0 lies in a non-candidate block unless block 0 is a candidate.
  const auto& cand = *m.candidate_blocks;
  int64_t col = -1;
  for (int64_t b = 0; b * 8 < m.window_end()[0] && col < 0; ++b)
    if (std::find(cand.row(0), cand.row(0) + cand.slots, b) == cand.row(0) + cand.slots) col = b * 8;
  ASSERT_GE(col, 0);
  unmasked.masked_logits->row(0)[col] = m.expected.logits->at(0, col);
  unmasked.topk_indices.reset();  // (judged on these masked logits, it could fail too)
  EXPECT_EQ(failed_checks(m, unmasked), std::vector<std::string>{"logits"});

  // With the logits given, every entry is the mask's (SPEC 7), past L_r and E_r too.
  const GoldenCase given = preset_case("edge", "exact", 6);
  ASSERT_EQ(given.settings.op, dataset::GoldenOp::candidate_mask);
  ASSERT_TRUE(given.logits_given() && given.expected.masked_logits);
  EXPECT_TRUE(passed(given, given.expected)) << dataset::check_case(given, given.expected, "case").to_text();
  GoldenOutputs past_row = given.expected;
  const int64_t last = past_row.masked_logits->width - 1;
  ASSERT_LT(given.candidate_ends()[4], last);
  past_row.masked_logits->row(4)[last] = 1.0f;  // past E_r: the full mask writes -inf there
  past_row.topk_indices.reset();
  EXPECT_EQ(failed_checks(given, past_row), std::vector<std::string>{"logits"});

  const GoldenCase s = preset_case("mxfp4", "deepgemm_sm100_bf16", 1);
  EXPECT_TRUE(passed(s, s.expected));
  GoldenOutputs ids = s.expected;
  ids.sparse_blocks->end[1] -= 1;
  EXPECT_EQ(failed_checks(s, ids), std::vector<std::string>{"sparse_blocks"});
}

}  // namespace
}  // namespace dsa::golden_test
