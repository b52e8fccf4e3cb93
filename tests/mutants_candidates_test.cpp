// The candidate-block mutants and the mutant of a check, each on a hand-made
// triggering input (shown wrong by the comparator of the property it names)
// and on a benign one.
#include <gtest/gtest.h>

#include <set>

#include "dsa/fuzz/comparator_selftest.hpp"
#include "mutants_test_support.hpp"

namespace dsa {
namespace {

using namespace mutants_testing;
using twins_testing::kInf;

oracle::SelectionVerdict selection_verdict(IndexerOps& ops, const Logits& logits, const RowBounds& bounds,
                                           int32_t block_size, int32_t slots) {
  CandidateBlocks out = oracle::poisoned_blocks(logits.rows, slots, block_size);
  ops.candidate_select(logits, bounds, out);
  const Logits scores = oracle::candidate_block_scores(logits, block_size, bounds);
  return oracle::check_candidate_blocks(oracle::IndexMatrix{out.blocks, out.rows, out.slots}, scores);
}

TEST(MutantCandidates, NewestBlockForgotten) {
  auto m = make("candidate_newest_block_forgotten");
  // 6 blocks of 4, 2 slots; the newest block (entries 20..21) scores lowest.
  std::vector<float> v = {5, 1, 1, 1, 9, 1, 1, 1, 1, 1, 1, 1, 7, 1, 1, 1, 2, 1, 1, 1, -3, -4};
  const Logits l{1, int64_t(v.size()), v};
  const RowBounds b{{0}, {int64_t(v.size())}};
  const auto bad = selection_verdict(*m, l, b, 4, 2);
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.missing, 1);
  // As many slots as live blocks: every block is chosen, pinned or not.
  EXPECT_TRUE(selection_verdict(*m, l, b, 4, 6).passed);
}

TEST(MutantCandidates, MaskLeaksPastTheRowEnd) {
  auto m = make("candidate_mask_past_row_end");
  // L = 10 with blocks of 4: block 2 covers entries 8..11, of which 10 and 11
  // lie past the row and hold the logits kernel's garbage.
  std::vector<float> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1e30f, kInf};
  const Logits l{1, 12, v};
  const CandidateBlocks cand{1, 2, 4, {2, 0}};
  TopkIndices out = oracle::poisoned_topk(1, 3);
  m->candidate_topk(l, RowBounds{{0}, {10}}, cand, out);
  // candidate_topk_agrees: the top-k rule over the candidate columns 0..3, 8, 9.
  const std::vector<int64_t> cols = {0, 1, 2, 3, 8, 9};
  Logits gathered{1, 6, {}};
  for (const int64_t c : cols) gathered.values.push_back(v[size_t(c)]);
  auto as_columns = [&](const TopkIndices& t) {
    TopkIndices mapped = t;
    for (int32_t& idx : mapped.indices) {
      const auto it = std::find(cols.begin(), cols.end(), int64_t(idx));
      idx = idx < 0 ? idx : it == cols.end() ? 1000 : int32_t(it - cols.begin());
    }
    return mapped;
  };
  const std::vector<int64_t> n = {6};
  const auto bad = oracle::check_topk(oracle::view(as_columns(out)), gathered, n);
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.out_of_range, 2);  // positions 10 and 11
  // L = 12, a whole number of blocks: nothing lies past the row.
  TopkIndices whole{1, 3, std::vector<int32_t>(3)};
  m->candidate_topk(l, RowBounds{{0}, {12}}, cand, whole);
  EXPECT_EQ(testing::chosen_set(whole.row(0), 3), (std::vector<int32_t>{9, 10, 11}));
}

TEST(MutantCandidates, CompactLogitsWithTheirOwnHeadOrder) {
  auto m = make("compact_logits_own_head_order");
  const Profile& profile = find_profile("exact");
  DecodeProblem p = step(ElementFormat::e4m3fn, 16, {64}, 1, 9);
  const CandidateBlocks cand{1, 3, 8, {5, 0, 7}};
  auto compact_vs_dense = [&](const DecodeProblem& problem) {
    Logits compact = poisoned_logits(1, 24);
    m->compact_candidate_logits(problem, profile, cand, compact);
    const Logits dense = run_decode(*m, problem, profile);  // its own dense logits
    Logits expected{1, 24, {}};
    for (int32_t c = 0; c < 3; ++c)
      for (int t = 0; t < 8; ++t) expected.values.push_back(dense.at(0, cand.blocks[size_t(c)] * 8 + t));
    const std::vector<int64_t> all = {24};
    return oracle::check_logits(compact, expected, all, bitwise());
  };
  EXPECT_FALSE(compact_vs_dense(p).passed);
  // One head carries all the weight: every order sums the same single term.
  for (size_t i = 0; i < p.weights.size(); ++i) p.weights[i] = i % size_t(p.heads) == 3 ? 0.5f : 0.0f;
  EXPECT_TRUE(compact_vs_dense(p).passed);
}

TEST(MutantComparator, SelfTestPassesTheOracleAndKillsTheVacuousAssert) {
  // The real comparator answers every hand-made pair right...
  EXPECT_EQ(fuzz::logits_comparator_self_test(fuzz::oracle_logits_comparator()), "");
  // ...the mutated one passes values ten times the tolerance apart.
  const std::string verdict = fuzz::logits_comparator_self_test(fuzz::check_logits_vacuous_tolerance);
  EXPECT_NE(verdict.find("ten times the tolerance apart"), std::string::npos) << verdict;
  const auto& m = mutant("assert_checks_nothing");
  ASSERT_TRUE(m.comparator_test);
  EXPECT_TRUE(m.comparator_test());
  // In bitwise mode the mutated check is the oracle's: no property run could tell them apart.
  const Logits a{1, 2, {1.0f, 2.0f}}, e{1, 2, {1.0f, 2.5f}};
  const std::vector<int64_t> lens = {2};
  EXPECT_FALSE(fuzz::check_logits_vacuous_tolerance(a, e, lens, bitwise()).passed);
  EXPECT_EQ(m.make()->name(), "assert_checks_nothing");
}

TEST(MutantCatalog, NamedKilledAndBuildable) {
  const auto& catalog = fuzz::mutant_catalog();
  EXPECT_GE(catalog.size(), 15u);
  const std::set<std::string> properties = {
      fuzz::property::kLogitsAgree,           fuzz::property::kLogitsAgreeClean,
      fuzz::property::kPrefillLogitsAgree,    fuzz::property::kTopkAgrees,
      fuzz::property::kCandidateSelectAgrees, fuzz::property::kCandidateTopkAgrees,
      fuzz::property::kCompactLogitsAgree,    fuzz::property::kPagePermutationInvariance,
      fuzz::property::kCompactEqualsDense,    fuzz::property::kPaddedEqualsUnpadded,
      fuzz::property::kColumnsPastLengthIgnored, fuzz::property::kMaskThenTopkEqualsCandidateTopk,
      fuzz::property::kDeterminism,           fuzz::property::kEveryEntryWritten};
  std::set<std::string> names;
  for (const auto& m : catalog) {
    EXPECT_TRUE(names.insert(m.name).second) << "duplicate " << m.name;
    EXPECT_FALSE(m.bug.empty()) << m.name;
    const bool comparator = m.killed_by.rfind("comparator_test:", 0) == 0;
    EXPECT_TRUE(comparator || properties.count(m.killed_by)) << m.name << " names " << m.killed_by;
    EXPECT_EQ(comparator, bool(m.comparator_test)) << m.name;
    ASSERT_TRUE(m.make) << m.name;
    EXPECT_EQ(m.make()->name(), m.name);
  }
}

}  // namespace
}  // namespace dsa
