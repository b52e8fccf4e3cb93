// cpu_compact_candidates: its compact logits are the reference's bit for bit
// (every profile, every format it takes), and its candidate top-k obeys the
// top-k rule over the candidate columns (ties, NaN, -inf, short rows).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "candidate_test_support.hpp"
#include "dsa/error.hpp"
#include "dsa/optimized/compact_candidates.hpp"
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

Logits poisoned(int64_t rows, int64_t width) {
  Logits l{rows, width, std::vector<float>(size_t(rows * width))};
  oracle::fill_poison(std::span<float>(l.values));
  return l;
}

TEST(TwinCompact, CompactLogitsAreTheReferenceBitForBit) {
  auto ops = make_cpu_compact_candidates();
  uint64_t seed = 1;
  for (const auto& name : profile_names()) {
    const Profile& profile = find_profile(name);
    for (const ElementFormat e : profile.elements) {
      DecodeProblem p = testing::small_decode_problem(e, testing::heads_for(profile), 128, {300, 77, 0}, 2, ++seed);
      Rng rng(seed);
      const CandidateBlocks cand = random_blocks(p.rows(), p.logits_width, 16, 9, rng);
      Logits got = poisoned(p.rows(), int64_t(cand.slots) * cand.block_size);
      ops->compact_candidate_logits(p, profile, cand, got);
      const Logits want = compact_candidate_logits(p, profile, cand);
      std::vector<oracle::RowWindow> whole(size_t(p.rows()), oracle::RowWindow{0, got.width});
      oracle::LogitsCheckOptions options;
      options.poison_bits = oracle::kPoisonF32Bits;
      const auto verdict = oracle::check_logits(got, want, whole, options);
      EXPECT_TRUE(verdict.passed) << name << " " << to_string(e) << "\n" << oracle::format_table(verdict);
    }
  }
}

// The candidate top-k judged as a top-k over the candidate columns alone.
::testing::AssertionResult candidate_topk_correct(const TopkIndices& got, const Logits& logits, const RowBounds& bounds,
                                                  const CandidateBlocks& cand) {
  for (int64_t r = 0; r < logits.rows; ++r) {
    const int64_t start = bounds.start[size_t(r)], len = bounds.end[size_t(r)] - start;
    std::vector<int64_t> positions;
    for (int32_t c = 0; c < cand.slots; ++c)
      for (int64_t p = int64_t(cand.row(r)[c]) * cand.block_size;
           cand.row(r)[c] >= 0 && p < std::min(int64_t(cand.row(r)[c] + 1) * cand.block_size, len); ++p)
        positions.push_back(p);
    std::sort(positions.begin(), positions.end());
    Logits gathered{1, int64_t(positions.size()), {}};
    for (const int64_t p : positions) gathered.values.push_back(logits.row(r)[start + p]);
    TopkIndices as_columns{1, got.k, {}};
    for (int i = 0; i < got.k; ++i) {
      const int32_t idx = got.row(r)[i];
      const auto at = std::lower_bound(positions.begin(), positions.end(), int64_t(idx));
      // A position outside the candidates maps past the gathered row (out of range).
      as_columns.indices.push_back(idx < 0 ? idx
                                   : (at != positions.end() && *at == idx) ? int32_t(at - positions.begin())
                                                                           : int32_t(positions.size() + 1000));
    }
    const std::vector<int64_t> all{int64_t(positions.size())};
    const auto verdict = oracle::check_topk(oracle::view(as_columns), gathered, all);
    if (!verdict.passed) return ::testing::AssertionFailure() << "row " << r << "\n" << oracle::format_table(verdict);
  }
  return ::testing::AssertionSuccess();
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
      TopkIndices got{c.logits.rows, k, std::vector<int32_t>(size_t(c.logits.rows) * size_t(k))};
      oracle::fill_poison(std::span<int32_t>(got.indices));
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
