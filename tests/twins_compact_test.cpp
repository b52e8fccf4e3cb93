// cpu_compact_candidates: its compact logits are the reference's bit for bit
// (every profile, every format it takes), and its candidate top-k obeys the
// top-k rule over the candidate columns (ties, NaN, -inf, short rows).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "candidate_test_support.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/mutants.hpp"
#include "dsa/fuzz/properties.hpp"
#include "dsa/optimized/compact_candidates.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "twins_test_support.hpp"

namespace dsa::optimized {
namespace {

using namespace dsa::twins_testing;

CandidateBlocks random_blocks(int64_t rows, int64_t row_width, int32_t S, int32_t slots, Rng& rng) {
  CandidateBlocks cand{rows, slots, S, {}};
  for (int64_t r = 0; r < rows; ++r) {
    std::set<int32_t> used;
    for (int32_t c = 0; c < slots; ++c) {
      int32_t id = int32_t(rng.uniform_int(-1, row_width / S + 1));
      if (!used.insert(id).second) id = -1;
      cand.blocks.push_back(id);
    }
  }
  return cand;
}

using oracle::poisoned_logits;
using oracle::poisoned_topk;

TEST(TwinCompact, CompactLogitsAreTheReferenceBitForBit) {
  auto ops = make_cpu_compact_candidates();
  uint64_t seed = 1;
  for (const auto& name : profile_names()) {
    const Profile& profile = find_profile(name);
    for (const ElementFormat e : profile.elements) {
      DecodeProblem p = testing::small_decode_problem(e, testing::heads_for(profile), 128, {300, 77, 0}, 2, ++seed);
      Rng rng(seed);
      const CandidateBlocks cand = random_blocks(p.rows(), p.logits_width, 16, 9, rng);
      Logits got = poisoned_logits(p.rows(), int64_t(cand.slots) * cand.block_size);
      ops->compact_candidate_logits(p, profile, cand, got);
      const Logits want = compact_candidate_logits(p, profile, cand);
      oracle::LogitsCheckOptions options;
      options.poison_bits = oracle::kPoisonF32Bits;
      const auto verdict = oracle::check_logits(got, want, oracle::full_bounds(p.rows(), got.width), options);
      EXPECT_TRUE(verdict.passed) << name << " " << to_string(e) << "\n" << oracle::format_table(verdict);
    }
  }
}

// Page sizes other than the candidate block size, and every cache layout
// (preshuffle: e4m3fnuz, D = 128, pages a multiple of 16).
TEST(TwinCompact, CompactLogitsOfEveryLayoutAndPageSize) {
  auto ops = make_cpu_compact_candidates();
  struct Shape {
    ElementFormat element;
    CacheLayout layout;
    int32_t page_size, S;
    const char* profile;
  };
  const Shape shapes[] = {{ElementFormat::e4m3fn, CacheLayout::block_flat, 5, 8, "deepgemm_sm90"},
                          {ElementFormat::e4m3fn, CacheLayout::block_flat, 64, 16, "exact"},
                          {ElementFormat::e4m3fnuz, CacheLayout::preshuffle, 16, 8, "aiter_gfx942_gluon"},
                          {ElementFormat::e4m3fnuz, CacheLayout::preshuffle, 32, 64, "exact"},
                          {ElementFormat::mxfp4, CacheLayout::mxfp4, 7, 4, "deepgemm_sm100_bf16"}};
  uint64_t seed = 40;
  for (const Shape& shape : shapes) {
    const Profile& profile = find_profile(shape.profile);
    DecodeProblem p = testing::small_decode_problem(shape.element, testing::heads_for(profile), 128, {260, 33, 1}, 2,
                                                    ++seed, shape.page_size);
    if (shape.layout == CacheLayout::preshuffle) p.cache = relayout(p.cache, CacheLayout::preshuffle);
    Rng rng(seed);
    const CandidateBlocks cand = random_blocks(p.rows(), p.logits_width, shape.S, 7, rng);
    Logits got = poisoned_logits(p.rows(), int64_t(cand.slots) * cand.block_size);
    ops->compact_candidate_logits(p, profile, cand, got);
    oracle::LogitsCheckOptions options;
    options.poison_bits = oracle::kPoisonF32Bits;
    const auto verdict = oracle::check_logits(got, compact_candidate_logits(p, profile, cand),
                                              oracle::full_bounds(p.rows(), got.width), options);
    EXPECT_TRUE(verdict.passed) << shape.profile << " " << to_string(shape.layout) << " page " << shape.page_size
                                << "\n"
                                << oracle::format_table(verdict);
  }
}

// A wrong gather in the twin is what compact = dense (and compact = reference)
// exist to see: each defect fails both properties, the right twin passes them.
TEST(TwinCompact, WrongGathersFailTheCompactProperties) {
  fuzz::DecodeCase c;
  c.next_n = 2;
  c.block_size = 16;  // pages of 16 entries, candidate blocks of 8
  c.candidate_block_size = 8;
  c.candidate_slots = 6;
  c.seed = 3;
  c.requests = {{200, {}, 0, 1}, {90, {}, 0, 2}};
  fuzz::DecodeCase fp4 = c;
  fp4.element = ElementFormat::mxfp4;
  fp4.layout = CacheLayout::mxfp4;
  fp4.profile = "deepgemm_sm100_bf16";
  const auto& agree = fuzz::find_property(fuzz::property::kCompactLogitsAgree);
  const auto& equal = fuzz::find_property(fuzz::property::kCompactEqualsDense);
  auto verdicts = [&](const CompactCandidatesDefects& defects, const fuzz::DecodeCase& one) {
    auto ops = make_cpu_compact_candidates(defects);
    return std::pair{fuzz::check_case(agree, *ops, one).verdict, fuzz::check_case(equal, *ops, one).verdict};
  };
  using fuzz::Verdict;
  for (const auto& one : {c, fp4}) {
    EXPECT_EQ(verdicts({}, one), std::pair(Verdict::pass, Verdict::pass)) << one.profile;
    EXPECT_EQ(verdicts({.scale_of_first_slot = true}, one), std::pair(Verdict::fail, Verdict::fail)) << one.profile;
  }
  EXPECT_EQ(verdicts({.slot_modulo_candidate_block = true}, c), std::pair(Verdict::fail, Verdict::fail));
  // With pages as large as the candidate blocks the same slip reads the right entries: the case must vary the two.
  fuzz::DecodeCase same = c;
  same.block_size = 8;
  EXPECT_EQ(verdicts({.slot_modulo_candidate_block = true}, same), std::pair(Verdict::pass, Verdict::pass));
}

// The candidate top-k judged by the oracle's rule over the candidate columns alone.
::testing::AssertionResult candidate_topk_correct(const TopkIndices& got, const Logits& logits, const RowBounds& bounds,
                                                  const CandidateBlocks& cand) {
  const auto verdict = oracle::check_topk_among(oracle::view(got), oracle::candidate_columns(logits, bounds, cand));
  if (verdict.passed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << oracle::format_table(verdict);
}

TEST(TwinCompact, CandidateTopkOverTheCandidateColumns) {
  auto ops = make_cpu_compact_candidates();
  Rng pick(5);
  for (const RowKind kind : kAllRowKinds)
    for (const int k : {1, 8, 24}) {
      std::vector<int64_t> lens;
      for (int r = 0; r < 9; ++r) lens.push_back(pick.uniform_int(0, 200));
      lens[0] = 0;
      Rng rng(pick.next_u64());
      const int64_t start = kind == RowKind::quantized ? 13 : 0;
      const TopkCase c = make_case(lens, 220, kind, rng, start);
      const CandidateBlocks cand = random_blocks(c.logits.rows, 200, 8, int32_t(pick.uniform_int(1, 12)), rng);
      TopkIndices got = poisoned_topk(c.logits.rows, k);
      ops->candidate_topk(c.logits, c.bounds, cand, got);
      EXPECT_TRUE(candidate_topk_correct(got, c.logits, c.bounds, cand)) << to_string(kind) << " k " << k;
      // Distinct values: the same set as the reference.
      if (kind == RowKind::normal) {
        const TopkIndices want = candidate_topk(c.logits, c.bounds, cand, k);
        for (int64_t r = 0; r < c.logits.rows; ++r)
          EXPECT_EQ(testing::chosen_set(got.row(r), k), testing::chosen_set(want.row(r), k)) << "row " << r;
      }
    }
}

// The fused launch: its compact logits are the reference's, its top-k obeys
// the rule over them (the k the design uses, and k past the columns).
TEST(TwinCompact, FusedLaunchIsItsCompactLogitsAndTheirTopk) {
  auto ops = make_cpu_compact_candidates();
  const Profile& profile = find_profile("exact");
  const DecodeProblem p = testing::small_decode_problem(ElementFormat::e4m3fn, 8, 64, {300, 41, 0}, 2, 17, 16);
  Rng rng(17);
  const CandidateBlocks cand = random_blocks(p.rows(), p.logits_width, 8, 9, rng);
  for (const int k : {1, 12, 512}) {
    Logits compact = poisoned_logits(p.rows(), int64_t(cand.slots) * cand.block_size);
    TopkIndices chosen = poisoned_topk(p.rows(), k);
    ops->candidate_logits_top_k(p, profile, cand, compact, chosen);
    const auto lens = visible_lens(p);
    const auto views = oracle::compact_views(compact, compact_candidate_logits(p, profile, cand), cand, lens);
    oracle::LogitsCheckOptions options;
    options.poison_bits = oracle::kPoisonF32Bits;
    const auto lv =
        oracle::check_logits(views.actual, views.expected, oracle::full_bounds(p.rows(), compact.width), options);
    EXPECT_TRUE(lv.passed) << oracle::format_table(lv);
    const auto sv = oracle::check_topk_among(oracle::view(chosen), oracle::compact_columns(compact, cand, lens));
    EXPECT_TRUE(sv.passed) << "k " << k << "\n" << oracle::format_table(sv);
  }
}

TEST(TwinCompact, TakesOnlyItsOwnOps) {
  auto ops = make_cpu_compact_candidates();
  EXPECT_EQ(ops->name(), "cpu_compact_candidates");
  const DecodeProblem p = testing::small_decode_problem(ElementFormat::e4m3fn, 8, 64, {40}, 1, 3);
  Logits dense{p.rows(), p.logits_width, std::vector<float>(size_t(p.rows() * p.logits_width))};
  EXPECT_THROW(ops->decode_logits(p, find_profile("exact"), dense), Unsupported);
  TopkIndices t{p.rows(), 4, std::vector<int32_t>(size_t(p.rows()) * 4)};
  EXPECT_THROW(ops->topk(dense, topk_row_bounds(p), t), Unsupported);
  CandidateBlocks wrong_rows{2, 2, 8, {0, 1, 0, 1}};
  Logits compact{p.rows(), 16, std::vector<float>(16)};
  EXPECT_THROW(ops->compact_candidate_logits(p, find_profile("exact"), wrong_rows, compact), InvalidInput);
  CandidateBlocks twice{1, 2, 8, {3, 3}};
  EXPECT_THROW(ops->compact_candidate_logits(p, find_profile("exact"), twice, compact), InvalidInput);
}

}  // namespace
}  // namespace dsa::optimized
