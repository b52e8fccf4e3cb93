// The top-k mutants, each on a hand-made input that triggers its bug (shown
// wrong by the comparator of the property it names) and on a benign input
// where the bug does not fire (correct there, as the real bugs were).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <bit>

#include "dsa/optimized/persistent_topk.hpp"
#include "dsa/optimized/radix_topk.hpp"
#include "dsa/oracle/determinism_check.hpp"
#include "dsa/padding.hpp"
#include "mutants_test_support.hpp"

namespace dsa {
namespace {

using namespace mutants_testing;
using twins_testing::kInf;
using twins_testing::kNaN;

// One decode row [0, values.size()).
struct Row {
  Logits logits;
  RowBounds bounds;
};
Row one_row(std::vector<float> values) {
  const int64_t n = int64_t(values.size());
  return {Logits{1, n, std::move(values)}, RowBounds{{0}, {n}}};
}

oracle::SelectionVerdict topk_verdict(IndexerOps& ops, const Row& row, int k) {
  const TopkIndices t = twins_testing::run_topk(ops, row.logits, row.bounds, k);
  return oracle::check_topk(oracle::view(t), row.logits, row.bounds);
}

// Two values far above a cluster of `cluster` distinct values in one fp16
// coarse bin ([1, 1.03)), then smaller values.
std::vector<float> peaks_over_cluster(int cluster) {
  std::vector<float> v = {20.0f, 10.0f};
  for (int i = 0; i < cluster; ++i) v.push_back(1.0f + 0.0007f * float((i * 17) % cluster));
  for (int i = 0; i < 10; ++i) v.push_back(-5.0f - float(i));
  return v;
}

TEST(MutantTopk, DuplicateOnBothPasses) {
  auto m = make("topk_per_row_duplicate_on_both_passes");
  // 40 entries in the threshold bin overflow the (scaled) 16-entry final buffer:
  // the two peaks come out of step 0 and again out of step 1.
  const auto bad = topk_verdict(*m, one_row(peaks_over_cluster(40)), 4);
  EXPECT_FALSE(bad.passed);
  EXPECT_GT(bad.duplicates, 0);
  EXPECT_GT(bad.missing, 0);
  // 10 entries fit the buffer: step 0 is the last step and emits once.
  EXPECT_TRUE(topk_verdict(*m, one_row(peaks_over_cluster(10)), 4).passed);
  // The real twin takes the first row.
  auto twin = optimized::make_cpu_radix_topk({.final_capacity = 16});
  EXPECT_TRUE(topk_verdict(*twin, one_row(peaks_over_cluster(40)), 4).passed);
}

TEST(MutantTopk, NanRowsEmitUninitializedSlots) {
  auto m = make("topk_per_row_nan_uninitialized_slots");
  // Six NaNs for k = 4: the threshold bin is the NaN bin, every NaN ranks 0.
  const auto bad = topk_verdict(*m, one_row({kNaN, 1.0f, kNaN, -kNaN, 2.0f, kNaN, 0.5f, kNaN, kNaN, 3.0f}), 4);
  EXPECT_FALSE(bad.passed);
  // Two NaNs lie above the cut and are emitted directly; the final buffer holds numbers.
  EXPECT_TRUE(topk_verdict(*m, one_row({kNaN, 1.0f, 0.25f, -kNaN, 2.0f, 7.0f, 0.5f, -1.0f, 4.0f, 3.0f}), 4).passed);
}

TEST(MutantTopk, SortPaddingEmittedWhenTheCutIsAtMinusFltMaxOrMinusInf) {
  auto m = make("vllm_topk_sort_padding_emitted");
  // 40 columns (the scaled radix path); 30 values above -FLT_MAX, then 6 at -FLT_MAX and 4 at -inf: k = 34
  // puts the cut in the fp16 -inf bin (10 entries, the buffer holds them), where padding ties -FLT_MAX and
  // ranks above -inf.
  std::vector<float> v;
  for (int i = 0; i < 30; ++i) v.push_back(float(i));
  for (int i = 0; i < 6; ++i) v.push_back(-FLT_MAX);
  for (int i = 0; i < 4; ++i) v.push_back(-kInf);
  const auto bad = topk_verdict(*m, one_row(v), 34);
  EXPECT_FALSE(bad.passed);
  EXPECT_GT(bad.out_of_range + bad.duplicates, 0);
  // The cut among finite values: the buffer's padding sorts last.
  EXPECT_TRUE(topk_verdict(*m, one_row(v), 20).passed);
  // The same row below the radix path's length (insertion sort): correct.
  v.resize(31);
  v[30] = -kInf;
  EXPECT_TRUE(topk_verdict(*m, one_row(v), 30).passed);
}

TEST(MutantTopk, MergePaddingRankedAboveMinusInf) {
  auto m = make("vllm_topk_merge_padding_above_minus_inf");
  // 100 columns (the scaled split path: 10 parts of 10); 15 finite values, the rest -inf; k = 20 >= 10 pads
  // every part's list, and the row's 20th value is -inf.
  std::vector<float> v(100, -kInf);
  for (int i = 0; i < 15; ++i) v[size_t(i * 6)] = float(i) * 0.5f;
  const auto bad = topk_verdict(*m, one_row(v), 20);
  EXPECT_FALSE(bad.passed);
  EXPECT_GT(bad.wrong_tail, 0);
  // The 20th value finite: padding ranks below every chosen value.
  for (int i = 0; i < 30; ++i) v[size_t(i * 3 + 1)] = float(i) * 0.25f;
  EXPECT_TRUE(topk_verdict(*m, one_row(v), 20).passed);
}

TEST(MutantTopk, TiesAtTheCutChangeFromRunToRun) {
  auto m = make("aiter_topk_nondeterministic_ties");
  const Row ties = one_row({0.5f, 0.5f, 0.5f, 2.0f, 0.5f, 0.5f, 0.5f, 0.5f, -1.0f, 0.5f});
  const TopkIndices first = twins_testing::run_topk(*m, ties.logits, ties.bounds, 4);
  const TopkIndices second = twins_testing::run_topk(*m, ties.logits, ties.bounds, 4);
  // Each run alone obeys the top-k rule: only the determinism check sees it.
  EXPECT_TRUE(twins_testing::topk_correct(first, ties.logits, ties.bounds));
  EXPECT_TRUE(twins_testing::topk_correct(second, ties.logits, ties.bounds));
  EXPECT_FALSE(oracle::check_determinism(oracle::view(first), oracle::view(second)).passed);
  // Distinct values: the same set every run.
  const Row distinct = one_row({0.5f, 0.25f, 0.125f, 2.0f, 0.75f, 1.5f, 1.25f, 0.375f, -1.0f, 3.0f});
  const TopkIndices a = twins_testing::run_topk(*m, distinct.logits, distinct.bounds, 4);
  const TopkIndices b = twins_testing::run_topk(*m, distinct.logits, distinct.bounds, 4);
  EXPECT_TRUE(oracle::check_determinism(oracle::view(a), oracle::view(b)).passed);
}

TEST(MutantTopk, TieResolvedWithADuplicate) {
  auto m = make("topk_tie_resolved_with_duplicate");
  const Row row = one_row({3.0f, 1.0f, 2.0f, 1.0f, 1.0f, 0.0f, 1.0f, -2.0f});
  const auto bad = topk_verdict(*m, row, 4);  // two of the four 1.0s are chosen
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.duplicates, 1);
  EXPECT_TRUE(topk_verdict(*m, row, 6).passed);  // all four ties chosen: nothing straddles the cut
}

TEST(MutantTopk, MinusOneTailNeverWritten) {
  auto m = make("topk_missing_minus_one_tail");
  const Row short_row = one_row({1.0f, 2.0f, 3.0f});
  const TopkIndices t = twins_testing::run_topk(*m, short_row.logits, short_row.bounds, 8);
  const auto written = oracle::check_written(oracle::view(t), "topk_indices");
  EXPECT_FALSE(written.passed);
  EXPECT_EQ(written.survivors, 5);
  const Row long_row = one_row({1.0f, 2.0f, 3.0f, 0.0f, -1.0f, 5.0f, 4.0f, 6.0f, 7.0f, 8.0f});
  const TopkIndices full = twins_testing::run_topk(*m, long_row.logits, long_row.bounds, 8);
  EXPECT_TRUE(oracle::check_written(oracle::view(full), "topk_indices").passed);
  EXPECT_TRUE(twins_testing::topk_correct(full, long_row.logits, long_row.bounds));
}

TEST(MutantTopk, PaddedRowsGarbageReachesTheIndexBuffer) {
  auto m = make("padded_row_garbage_in_indices");
  // A padded step: request 0 has 1 real row of 2, request 1 both; the padded
  // row's logits are the garbage of a NaN-padded q.
  DecodeProblem p = step(ElementFormat::e4m3fn, 8, {40, 30}, 2, 5);
  p.decode_lens = {1, 2};
  Logits logits = run_decode(*m, p, find_profile("exact"));
  for (int64_t c = 0; c < logits.width; ++c) logits.row(1)[c] = kNaN;
  const RowBounds bounds = topk_row_bounds(p);
  const TopkIndices step_topk = twins_testing::run_topk(*m, logits, bounds, 8);
  // padded_equals_unpadded: the padded row must choose nothing...
  const auto padded_row = oracle::check_topk(oracle::view(step_topk), logits, bounds);
  EXPECT_FALSE(padded_row.passed);
  EXPECT_GT(padded_row.wrong_tail + padded_row.out_of_range, 0);
  // ...while the real rows are right, and an unpadded step is right throughout.
  const TopkIndices real = unpack_topk(step_topk, p.decode_lens, p.next_n);
  const Logits real_logits = unpack_logits(logits, p.decode_lens, p.next_n);
  RowBounds real_bounds;
  for (int64_t r = 0; r < p.rows(); ++r)
    if (!p.is_padded_row(r)) {
      real_bounds.start.push_back(0);
      real_bounds.end.push_back(bounds.end[size_t(r)]);
    }
  EXPECT_TRUE(twins_testing::topk_correct(real, real_logits, real_bounds));
  const DecodeProblem unpadded = step(ElementFormat::e4m3fn, 8, {40, 30}, 2, 5);
  const Logits full = run_decode(*m, unpadded, find_profile("exact"));
  const RowBounds ub = topk_row_bounds(unpadded);
  EXPECT_TRUE(twins_testing::topk_correct(twins_testing::run_topk(*m, full, ub, 8), full, ub));
}

TEST(MutantTopk, PersistentCandidateOverflowDropsCandidates) {
  auto m = make("persistent_topk_candidate_overflow");
  // 48 distinct values in one coarse bin, the largest ones last in scan order:
  // the 32-entry buffer keeps the first 32 and refines those.
  std::vector<float> v;
  for (int i = 0; i < 48; ++i) v.push_back(1.0f + 0.001f * float(i));
  const auto bad = topk_verdict(*m, one_row(v), 4);
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.extra, 4);       // entries 28..31, the best of the 32 kept
  EXPECT_EQ(bad.missing, 3);     // 45..47 (44 is the cut itself)
  EXPECT_EQ(bad.duplicates, 0);  // k distinct indices, silently the wrong ones
  v.resize(30);  // fits the buffer
  EXPECT_TRUE(topk_verdict(*m, one_row(v), 4).passed);
}

TEST(MutantTopk, PersistentRingMisalignedAfterAShortRow) {
  auto m = make("persistent_topk_ring_misaligned");
  // One persistent block, radix path from 33 columns. Row 0 (radix) shares its
  // top 16 key bits, so its third pass histograms all 40 entries into bins
  // 0..39 of ring slot 2. Row 1 is short (filtered path). Row 2 (radix) starts
  // at pass 8, slot 2 again, when the ring follows the row counter: row 0's
  // counts sit above row 2's entries (bin 14) and take its cut.
  const int64_t width = 40;
  Logits l{3, width, std::vector<float>(size_t(3 * width), -kInf)};
  for (int64_t c = 0; c < width; ++c) {
    l.row(0)[c] = std::bit_cast<float>(0x41000000u + (uint32_t(c) << 8));  // 8.0 and up, byte 2 = c
    l.row(2)[c] = -1e30f * (1.0f + float(c) / 100.0f);
  }
  for (int64_t c = 0; c < 10; ++c) l.row(1)[c] = float(c);
  const RowBounds b{{0, 0, 0}, {width, 10, width}};
  const TopkIndices t = twins_testing::run_topk(*m, l, b, 5);
  const auto verdict = oracle::check_topk(oracle::view(t), l, b);
  EXPECT_FALSE(verdict.passed);
  ASSERT_EQ(verdict.failed_rows.size(), 1u);
  EXPECT_EQ(verdict.failed_rows[0].row, 2);
  // Two radix rows in a row: the ring is aligned.
  const RowBounds consecutive{{0, 0}, {width, width}};
  Logits two{2, width, {}};
  two.values.insert(two.values.end(), l.row(0), l.row(0) + width);
  two.values.insert(two.values.end(), l.row(2), l.row(2) + width);
  EXPECT_TRUE(twins_testing::topk_correct(twins_testing::run_topk(*m, two, consecutive, 5), two, consecutive));
  // The real twin with the same scaled geometry takes the three rows.
  auto twin = optimized::make_cpu_persistent_topk({.num_blocks = 1, .radix_min_len = 33});
  EXPECT_TRUE(twins_testing::topk_correct(twins_testing::run_topk(*twin, l, b, 5), l, b));
}

}  // namespace
}  // namespace dsa
