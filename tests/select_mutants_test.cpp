// The bugs injected into the shared selection code (select::Bug, the CUDA
// mutant build's switch), each on the host emulator: wrong on an input that
// triggers it, as the GPU campaign must find; the correct code right on the
// same input.
#include <gtest/gtest.h>

#include <vector>

#include "dsa/oracle/determinism_check.hpp"
#include "dsa/rng.hpp"
#include "select_emulation_support.hpp"
#include "twins_test_support.hpp"

namespace dsa::select_testing {
namespace {

using twins_testing::RowKind;
using Warp32 = Shape<32, 64, 8>;  // capacity 512, list of 128

template <Bug B>
TopkIndices run(const twins_testing::TopkCase& c, int k, int grid = 3) {
  auto ops = make_emulated_selection<Warp32, B>("mutant", grid);
  return twins_testing::run_topk(*ops, c.logits, c.bounds, k);
}

template <Bug B>
void wrong_where_correct_is_right(const twins_testing::TopkCase& c, int k, int grid = 3) {
  EXPECT_TRUE(twins_testing::topk_correct(run<Bug::none>(c, k, grid), c.logits, c.bounds));
  EXPECT_FALSE(twins_testing::topk_correct(run<B>(c, k, grid), c.logits, c.bounds));
}

TEST(SelectMutants, EmitCoarseTwiceDuplicatesTheFirstPassEntries) {
  Rng rng(3);
  wrong_where_correct_is_right<Bug::emit_coarse_twice>(twins_testing::make_case({300}, 300, RowKind::normal, rng), 64);
}

TEST(SelectMutants, ListDropsOverflowLosesEntriesOfOneCoarseBin) {
  Rng rng(4);  // 400 values in [1, 1.03): one first-pass bin, more than the list's 128
  wrong_where_correct_is_right<Bug::list_drops_overflow>(
      twins_testing::make_case({400}, 400, RowKind::one_coarse_bin, rng), 64);
}

TEST(SelectMutants, NanIeeeTiesLeavesNanDominatedRowsShort) {
  Rng rng(5);
  wrong_where_correct_is_right<Bug::nan_ieee_ties>(twins_testing::make_case({300}, 300, RowKind::nan_heavy, rng),
                                                   64);
}

TEST(SelectMutants, RingFollowingTheSelectionCountReadsStaleCounts) {
  // One block takes both rows. Row 0's first-pass bin (2.0) is taken whole: one pass, its counts stay
  // in ring slot 0; row 1 then starts on slot 0 again under the bug.
  twins_testing::TopkCase c;
  c.logits.rows = 2;
  c.logits.width = 300;
  for (int i = 0; i < 300; ++i) c.logits.values.push_back(i < 100 ? 2.0f : 1.0f);
  for (int i = 0; i < 300; ++i) c.logits.values.push_back(0.25f + float(i) * 1e-3f);
  c.bounds = {{0, 0}, {300, 300}};
  wrong_where_correct_is_right<Bug::ring_follows_selection>(c, 100, /*grid=*/1);
}

TEST(SelectMutants, RingFollowingTheSelectionCountBreaksAMergeAfterAShortLeaf) {
  // One row of three leaves: a leaf whose selection stops early leaves a dirty slot for the merge that
  // the same block runs next.
  Rng rng(8);
  wrong_where_correct_is_right<Bug::ring_follows_selection>(
      twins_testing::make_case({1400}, 1400, RowKind::normal, rng), 64, /*grid=*/1);
}

TEST(SelectMutants, TiesByArrivalChangeFromRunToRun) {
  Rng rng(6);
  const auto c = twins_testing::make_case({500, 500}, 500, RowKind::quantized, rng);
  const TopkIndices a = run<Bug::ties_by_arrival>(c, 64), b = run<Bug::ties_by_arrival>(c, 64);
  EXPECT_TRUE(twins_testing::topk_correct(a, c.logits, c.bounds));  // each run alone obeys the rule
  EXPECT_FALSE(oracle::check_determinism(oracle::view(a), oracle::view(b)).passed);
  const TopkIndices x = run<Bug::none>(c, 64), y = run<Bug::none>(c, 64);
  EXPECT_TRUE(oracle::check_determinism(oracle::view(x), oracle::view(y)).passed);
}

}  // namespace
}  // namespace dsa::select_testing
