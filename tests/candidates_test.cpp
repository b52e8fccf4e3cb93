// Candidate blocks (SPEC 7) on hand-made logits: block scores, selection, the
// two masks, candidate top-k, prefill rows, and the agreement of candidate
// top-k with mask-then-top-k.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "candidate_test_support.hpp"
#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/rng.hpp"
#include "dsa/topk.hpp"

namespace dsa {
namespace {

using testing::bits_of;
using testing::chosen_set;
using testing::kInf;
using testing::kNaN;
using testing::make_logits;
using testing::row_of;
using testing::slots_of;

RowBounds decode_bounds(std::vector<int64_t> ends) {
  RowBounds b;
  b.start.assign(ends.size(), 0);
  b.end = std::move(ends);
  return b;
}

CandidateBlocks blocks(int64_t rows, int32_t slots, int32_t block_size, std::vector<int32_t> ids) {
  return CandidateBlocks{rows, slots, block_size, std::move(ids)};
}

std::vector<float> iota_values(int64_t n, float first = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), first);
  return v;
}

// ---------------------------------------------------------------- scores

TEST(CandidateBlockScores, MaxOfEachBlockNewestPinnedPastRowMinusInf) {
  // S = 4, row end 10: blocks [0,4) [4,8) [8,10); block 3 lies past the row.
  const std::vector<float> row = {1, 5, 2, 3, -1, -2, -7, -3, 9, 9, 100, 100};
  const auto s = candidate_block_scores(row.data(), 0, 10, 4, 4);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], 5.0f);
  EXPECT_EQ(s[1], -1.0f);
  EXPECT_EQ(s[2], kInf);  // holds entry 9, the newest
  EXPECT_EQ(s[3], -kInf);  // entries 12.. are past the row (the 100s are beyond it too)
}

TEST(CandidateBlockScores, NaNPropagatesThroughTheMax) {
  const std::vector<float> row = {1, kNaN, 2, 3, 4, 5, 6, 7, 8};
  const auto s = candidate_block_scores(row.data(), 0, 9, 4, 3);
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_EQ(s[1], 7.0f);
  EXPECT_EQ(s[2], kInf);
}

TEST(CandidateBlockScores, EmptyRowHasNoLiveBlock) {
  const std::vector<float> row = {1, 2, 3, 4};
  const auto s = candidate_block_scores(row.data(), 0, 0, 2, 2);
  EXPECT_EQ(s, (std::vector<float>{-kInf, -kInf}));
}

TEST(CandidateBlockScores, RowEndingOnABlockAndOnePastIt) {
  const auto row = iota_values(24);
  // End 16 = exactly two blocks of 8: block 1 holds the newest entry, block 2 is past the row.
  auto s = candidate_block_scores(row.data(), 0, 16, 8, 3);
  EXPECT_EQ(s, (std::vector<float>{8, kInf, -kInf}));
  // End 17: block 2 holds only entry 16, the newest; block 1 is an ordinary max.
  s = candidate_block_scores(row.data(), 0, 17, 8, 3);
  EXPECT_EQ(s, (std::vector<float>{8, 16, kInf}));
}

TEST(CandidateBlockScores, BlocksCountFromTheRowStart) {
  // A prefill row [5, 14): blocks [5,9) [9,13) [13,14).
  const auto row = iota_values(16, 0.0f);
  const auto s = candidate_block_scores(row.data(), 5, 14, 4, 3);
  EXPECT_EQ(s, (std::vector<float>{8, 12, kInf}));
}

// ---------------------------------------------------------------- selection

TEST(SelectCandidateBlocks, AllValuesEqualTiesGoToLowerBlocks) {
  const auto logits = make_logits(1, 64, std::vector<float>(64, 0.25f));
  const auto c = select_candidate_blocks(logits, decode_bounds({64}), 8, 3);
  EXPECT_EQ(slots_of(c, 0), (std::vector<int32_t>{7, 0, 1}));
}

TEST(SelectCandidateBlocks, BestBlocksByScoreThenMinusOneForMinusInfBlocks) {
  std::vector<float> v(32, -kInf);
  v[9] = 2.0f;   // block 1
  v[20] = 3.0f;  // block 2
  v[21] = 3.0f;
  v[28] = -5.0f;  // block 3 holds the newest entry (31) anyway
  const auto logits = make_logits(1, 32, v);
  const auto c = select_candidate_blocks(logits, decode_bounds({32}), 8, 6);
  EXPECT_EQ(std::vector<int32_t>(c.blocks.begin(), c.blocks.end()), (std::vector<int32_t>{3, 2, 1, -1, -1, -1}));
}

TEST(SelectCandidateBlocks, NaNScoreRanksAboveTheNewestBlock) {
  std::vector<float> v = iota_values(32);
  v[3] = kNaN;
  const auto logits = make_logits(1, 32, v);
  auto c = select_candidate_blocks(logits, decode_bounds({32}), 8, 1);
  EXPECT_EQ(c.blocks, (std::vector<int32_t>{0}));
  c = select_candidate_blocks(logits, decode_bounds({32}), 8, 3);
  EXPECT_EQ(c.blocks, (std::vector<int32_t>{0, 3, 2}));
}

TEST(SelectCandidateBlocks, NegativeZeroEqualsPositiveZero) {
  std::vector<float> v(24, -1.0f);
  std::fill(v.begin(), v.begin() + 8, -0.0f);      // block 0 scores -0
  std::fill(v.begin() + 8, v.begin() + 16, 0.0f);  // block 1 scores +0
  const auto logits = make_logits(1, 24, v);
  const auto c = select_candidate_blocks(logits, decode_bounds({24}), 8, 2);
  EXPECT_EQ(c.blocks, (std::vector<int32_t>{2, 0}));  // the tie goes to the lower block
}

TEST(SelectCandidateBlocks, EmptyRowHasEverySlotMinusOne) {
  const auto logits = make_logits(2, 16, iota_values(32));
  const auto c = select_candidate_blocks(logits, decode_bounds({0, 1}), 8, 2);
  EXPECT_EQ(c.blocks, (std::vector<int32_t>{-1, -1, 0, -1}));
}

TEST(SelectCandidateBlocks, RowsOfARequestShareTheRequestsEnd) {
  // 1-D lengths, next_n = 3, S = 4: request 0 has 21 entries, so row 0 sees
  // L = 19 entries but its candidate ops use E = 21 (the seed's _row_bounds).
  DecodeProblem p;
  p.batch = 2;
  p.next_n = 3;
  p.seq_lens = {21, 6};
  EXPECT_EQ(candidate_row_bounds(p).end, (std::vector<int64_t>{21, 21, 21, 6, 6, 6}));
  EXPECT_EQ(topk_row_bounds(p).end, (std::vector<int64_t>{19, 20, 21, 4, 5, 6}));
  const std::vector<int64_t> request_ends = {21, 6};
  EXPECT_EQ(repeated_row_bounds(request_ends, 3).end, candidate_row_bounds(p).end);

  std::vector<float> v(6 * 24, -kInf);
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t n = 0; n < 24; ++n) v[size_t(r * 24 + n)] = float((n * 7 + r) % 11);
  const auto logits = make_logits(6, 24, v);
  const auto c = select_candidate_blocks(p, logits, 4, 2);
  for (int64_t r = 0; r < 3; ++r) EXPECT_EQ(c.row(r)[0], 5) << "row " << r;  // entry 20's block, past L_0
  for (int64_t r = 3; r < 6; ++r) EXPECT_EQ(c.row(r)[0], 1) << "row " << r;

  p.seq_lens_2d = true;  // 2-D lengths: each row its own end
  p.seq_lens = {19, 20, 21, 4, 5, 6};
  EXPECT_EQ(candidate_row_bounds(p).end, (std::vector<int64_t>{19, 20, 21, 4, 5, 6}));
}

TEST(SelectCandidateBlocks, PrefillRowsCountBlocksFromKs) {
  PrefillProblem p;
  p.rows = 2;
  p.ks = {5, 0};
  p.ke = {14, 3};
  std::vector<float> v(32, 0.0f);
  for (int n = 0; n < 16; ++n) v[size_t(n)] = float(n % 5);  // row 0: [0 1 2 3 4 0 1 2 | 3 4 0 1 | 2 ...]
  const auto logits = make_logits(2, 16, v);
  const auto c = select_candidate_blocks(p, logits, 4, 3);
  // Row 0 blocks: [5,9) = {0,1,2,3} max 3, [9,13) = {4,0,1,2} max 4, [13,14) newest.
  EXPECT_EQ(slots_of(c, 0), (std::vector<int32_t>{2, 1, 0}));
  EXPECT_EQ(slots_of(c, 1), (std::vector<int32_t>{0, -1, -1}));
}

// Brute force of SPEC 7's selection: scores by definition, then the slots
// best by (score, lower index), -inf never chosen.
std::vector<int32_t> brute_force_selection(const float* row, int64_t end, int32_t S, int32_t C) {
  std::vector<std::pair<uint32_t, int32_t>> live;  // (order key, block)
  for (int64_t b = 0; b * S < end; ++b) {
    float score = -kInf;
    bool nan = false;
    for (int64_t n = b * S; n < std::min<int64_t>(end, (b + 1) * S); ++n) {
      nan = nan || std::isnan(row[n]);
      if (row[n] > score) score = row[n];
    }
    if (nan) score = kNaN;
    if ((end - 1) / S == b) score = kInf;
    if (score != -kInf) live.emplace_back(topk_order_key(score), int32_t(b));
  }
  std::stable_sort(live.begin(), live.end(), [](auto a, auto b) { return a.first > b.first; });
  std::vector<int32_t> out(size_t(C), -1);
  for (size_t i = 0; i < std::min(live.size(), size_t(C)); ++i) out[i] = live[i].second;
  return out;
}

float palette_value(int i) {
  static const float palette[] = {-kInf, -kInf, -1.0f, -0.0f, 0.0f, 0.5f, 1.0f, 1.0f, 2.0f, 7.0f, kNaN};
  return palette[i];
}

TEST(SelectCandidateBlocks, MatchesTheRuleOnRandomRowsWithTies) {
  testing::check_property(60, [] {
    const int64_t width = *rc::gen::inRange<int64_t>(1, 300);
    const int32_t S = *rc::gen::element(1, 2, 4, 8);
    const int32_t C = *rc::gen::inRange(1, 10);
    const int64_t end = *rc::gen::inRange<int64_t>(0, width + 1);
    const bool with_nan = *rc::gen::arbitrary<bool>();
    std::vector<float> v(static_cast<size_t>(width));
    for (auto& x : v) x = palette_value(*rc::gen::inRange(0, with_nan ? 11 : 10));
    const auto logits = make_logits(1, width, v);
    const auto c = select_candidate_blocks(logits, decode_bounds({end}), S, C);
    RC_ASSERT(std::vector<int32_t>(c.blocks.begin(), c.blocks.end()) == brute_force_selection(v.data(), end, S, C));
  });
}

// ---------------------------------------------------------------- mask

TEST(CandidateMask, FullVariantClearsEverythingOutsideTheCandidates) {
  // S = 4, row end 10, candidates {2, 0}: columns 0-3 and 8-9 survive.
  const auto dense = make_logits(1, 14, iota_values(14));
  auto full = dense;
  apply_candidate_mask(full, decode_bounds({10}), blocks(1, 2, 4, {2, 0}), CandidateMask::full);
  const std::vector<float> want = {1, 2, 3, 4, -kInf, -kInf, -kInf, -kInf, 9, 10, -kInf, -kInf, -kInf, -kInf};
  EXPECT_EQ(full.values, want);
}

TEST(CandidateMask, StridedVariantStopsAtTheRowEnd) {
  const auto dense = make_logits(1, 14, iota_values(14));
  auto strided = dense;
  apply_candidate_mask(strided, decode_bounds({10}), blocks(1, 2, 4, {2, 0}), CandidateMask::strided);
  const std::vector<float> want = {1, 2, 3, 4, -kInf, -kInf, -kInf, -kInf, 9, 10, 11, 12, 13, 14};
  EXPECT_EQ(strided.values, want);
}

TEST(CandidateMask, PrefillRowCountsBlocksFromKs) {
  const auto dense = make_logits(1, 12, iota_values(12));
  auto full = dense, strided = dense;
  RowBounds b{{3}, {11}};
  apply_candidate_mask(full, b, blocks(1, 1, 4, {1}), CandidateMask::full);  // block 1 = columns [7, 11)
  apply_candidate_mask(strided, b, blocks(1, 1, 4, {1}), CandidateMask::strided);
  EXPECT_EQ(full.values, (std::vector<float>{-kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, 8, 9, 10, 11, -kInf}));
  EXPECT_EQ(strided.values, (std::vector<float>{1, 2, 3, -kInf, -kInf, -kInf, -kInf, 8, 9, 10, 11, 12}));
}

TEST(CandidateMask, SevenOfEveryEightColumnsMinusInf) {
  // One candidate block in eight, as at 128k context with 2048 blocks of 8.
  constexpr int64_t W = 4096;
  constexpr int32_t S = 8, C = W / S / 8;
  Rng rng(11);
  std::vector<float> v(static_cast<size_t>(W));
  for (auto& x : v) x = float(rng.normal());
  const auto dense = make_logits(1, W, v);
  std::vector<int32_t> ids(static_cast<size_t>(C));
  for (int32_t c = 0; c < C; ++c) ids[size_t(c)] = C * 8 - 1 - 8 * c;  // blocks 7, 15, ... in reverse
  const auto cand = blocks(1, C, S, ids);
  auto masked = dense;
  apply_candidate_mask(masked, decode_bounds({W}), cand);
  int64_t finite = 0;
  for (int64_t n = 0; n < W; ++n) {
    const bool kept = (n / S) % 8 == 7;
    EXPECT_EQ(bits_of(masked.values[size_t(n)]), bits_of(kept ? v[size_t(n)] : -kInf)) << n;
    finite += kept;
  }
  EXPECT_EQ(finite, W / 8);
  const std::vector<int64_t> lens = {W};
  for (const int k : {64, 512, 600}) {
    const auto ct = candidate_topk(dense, decode_bounds({W}), cand, k);
    const auto mt = topk_rows(masked, lens, k);
    if (k < W / 8) {
      EXPECT_EQ(ct.indices, mt.indices) << "k = " << k;  // the same list, by descending value
    } else if (k == W / 8) {
      EXPECT_EQ(chosen_set(ct.row(0), k), chosen_set(mt.row(0), k));  // every candidate column
    } else {
      // Only W/8 candidate columns: candidate top-k fills -1 where mask-then-top-k takes -inf columns.
      const auto set = chosen_set(ct.row(0), k);
      EXPECT_EQ(set.size(), size_t(W / 8));
      EXPECT_EQ(std::count(ct.row(0), ct.row(0) + k, -1), k - W / 8);
      const auto full = chosen_set(mt.row(0), k);
      EXPECT_TRUE(std::includes(full.begin(), full.end(), set.begin(), set.end()));
    }
  }
}

// ---------------------------------------------------------------- candidate top-k

TEST(CandidateTopk, LengthsAroundKWithEveryBlockACandidate) {
  constexpr int k = 8;
  Rng rng(5);
  std::vector<float> v(32);
  for (auto& x : v) x = float(rng.uniform_int(-4, 4));  // ties
  const auto logits = make_logits(1, 32, v);
  const auto all = blocks(1, 4, 8, {3, 1, 0, 2});
  for (const int64_t L : {0, 1, k - 1, k, k + 1, 32}) {
    const auto ct = candidate_topk(logits, decode_bounds({L}), all, k);
    std::vector<int32_t> want(k);
    topk_row(v.data(), L, k, want.data());
    EXPECT_EQ(row_of(ct, 0), want) << "L = " << L;
  }
  EXPECT_EQ(row_of(candidate_topk(logits, decode_bounds({0}), all, k), 0), std::vector<int32_t>(k, -1));
  EXPECT_EQ(row_of(candidate_topk(logits, decode_bounds({1}), all, k), 0),
            (std::vector<int32_t>{0, -1, -1, -1, -1, -1, -1, -1}));
}

TEST(CandidateTopk, FewerCandidateColumnsThanKComeOutAscendingThenMinusOne) {
  const auto logits = make_logits(1, 24, iota_values(24));
  // Blocks of 4: candidates {4, 1}; row end 18 cuts block 4 to entries 16, 17.
  const auto ct = candidate_topk(logits, decode_bounds({18}), blocks(1, 2, 4, {4, 1}), 8);
  EXPECT_EQ(row_of(ct, 0), (std::vector<int32_t>{4, 5, 6, 7, 16, 17, -1, -1}));
}

TEST(CandidateTopk, AllValuesEqualPicksTheLowestCandidatePositions) {
  const auto logits = make_logits(1, 64, std::vector<float>(64, 3.0f));
  const auto ct = candidate_topk(logits, decode_bounds({64}), blocks(1, 3, 8, {6, 2, 4}), 10);
  EXPECT_EQ(row_of(ct, 0), (std::vector<int32_t>{16, 17, 18, 19, 20, 21, 22, 23, 32, 33}));
}

TEST(CandidateTopk, NegativeZeroTiesPositiveZeroAndNaNRanksFirst) {
  std::vector<float> v(16, -1.0f);
  v[9] = 0.0f;
  v[2] = -0.0f;
  const auto cand = blocks(1, 2, 4, {2, 0});  // columns 0-3, 8-11
  auto ct = candidate_topk(make_logits(1, 16, v), decode_bounds({16}), cand, 1);
  EXPECT_EQ(ct.row(0)[0], 2);  // -0 at 2 ties +0 at 9: the lower position
  v[11] = kNaN;
  v[5] = kNaN;  // not a candidate column
  ct = candidate_topk(make_logits(1, 16, v), decode_bounds({16}), cand, 3);
  EXPECT_EQ(row_of(ct, 0), (std::vector<int32_t>{11, 2, 9}));
}

TEST(CandidateTopk, ReadsOnlyTheRowsOwnLengthNotTheRequestEnd) {
  // Row sees L = 6 but the candidate blocks came from E = 8 (1-D lengths).
  std::vector<float> v = {0, 1, 2, 3, 4, 5, 90, 91};
  const auto ct = candidate_topk(make_logits(1, 8, v), decode_bounds({6}), blocks(1, 2, 4, {1, 0}), 3);
  EXPECT_EQ(row_of(ct, 0), (std::vector<int32_t>{5, 4, 3}));
}

TEST(CandidateTopk, PrefillIndicesAreRelativeToKs) {
  PrefillProblem p;
  p.rows = 1;
  p.ks = {4};
  p.ke = {14};
  const auto logits = make_logits(1, 16, iota_values(16));
  // Blocks of 4 from ks: block 1 = columns [8, 12) = relative 4..7, block 2 = [12, 14).
  const auto ct = candidate_topk(p, logits, blocks(1, 2, 4, {1, 2}), 3);
  EXPECT_EQ(row_of(ct, 0), (std::vector<int32_t>{9, 8, 7}));
}

TEST(CandidateTopk, RejectsMalformedCandidates) {
  const auto logits = make_logits(1, 16, iota_values(16));
  EXPECT_THROW(candidate_topk(logits, decode_bounds({16}), blocks(1, 2, 4, {1, 1}), 2), InvalidInput);
  EXPECT_THROW(candidate_topk(logits, decode_bounds({16}), blocks(1, 2, 4, {-2, 1}), 2), InvalidInput);
  EXPECT_THROW(candidate_topk(logits, decode_bounds({16}), blocks(1, 2, 4, {1}), 2), InvalidInput);
  EXPECT_THROW(candidate_topk(logits, decode_bounds({17}), blocks(1, 2, 4, {0, 1}), 2), InvalidInput);
  EXPECT_THROW(candidate_topk(logits, decode_bounds({16}), blocks(1, 2, 4, {0, 1}), 0), InvalidInput);
  EXPECT_THROW(select_candidate_blocks(logits, decode_bounds({16}), 0, 2), InvalidInput);
}

// SPEC 7: candidate top-k agrees with mask-then-top-k on every entry above
// -inf; where fewer than k candidate columns are visible, mask-then-top-k also
// returns masked (-inf) columns and candidate top-k returns -1.
TEST(CandidateTopk, AgreesWithMaskThenTopkAboveMinusInf) {
  testing::check_property(80, [] {
    const int64_t rows = *rc::gen::inRange<int64_t>(1, 4);
    const int64_t width = *rc::gen::inRange<int64_t>(1, 400);
    const int32_t S = *rc::gen::element(1, 4, 8, 16);
    const int32_t C = *rc::gen::inRange(1, 12);
    const int k = *rc::gen::inRange(1, 48);
    const bool with_nan = *rc::gen::arbitrary<bool>();
    std::vector<float> v(static_cast<size_t>(rows * width));
    for (auto& x : v) x = palette_value(*rc::gen::inRange(0, with_nan ? 11 : 10));
    const auto logits = make_logits(rows, width, v);
    RowBounds cand_bounds, topk_bounds;
    CandidateBlocks cand{rows, C, S, {}};
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t E = *rc::gen::inRange<int64_t>(0, width + 1);
      const int64_t L = *rc::gen::inRange<int64_t>(0, E + 1);
      cand_bounds.start.push_back(0);
      cand_bounds.end.push_back(E);
      topk_bounds.start.push_back(0);
      topk_bounds.end.push_back(L);
      std::set<int32_t> used;
      for (int32_t c = 0; c < C; ++c) {
        int32_t id = *rc::gen::inRange<int32_t>(-1, int32_t(width / S + 2));
        if (!used.insert(id).second) id = -1;
        cand.blocks.push_back(id);
      }
    }
    const auto ct = candidate_topk(logits, topk_bounds, cand, k);
    auto masked = logits;
    apply_candidate_mask(masked, cand_bounds, cand, CandidateMask::full);
    TopkIndices mt{rows, k, std::vector<int32_t>(size_t(rows) * size_t(k))};
    for (int64_t r = 0; r < rows; ++r) topk_row(masked.row(r), topk_bounds.end[size_t(r)], k, mt.row(r));
    for (int64_t r = 0; r < rows; ++r) {
      auto above = [&](const int32_t* out) {
        std::vector<int32_t> s;
        for (int i = 0; i < k; ++i)
          if (out[i] >= 0 && !(masked.row(r)[out[i]] == -kInf)) s.push_back(out[i]);
        std::sort(s.begin(), s.end());
        return s;
      };
      RC_ASSERT(above(ct.row(r)) == above(mt.row(r)));
      // Candidate top-k's other entries: -inf candidate columns, then -1.
      int64_t visible = 0;
      for (int64_t n = 0; n < topk_bounds.end[size_t(r)]; ++n)
        visible += std::count(cand.row(r), cand.row(r) + C, int32_t(n / S));
      const auto set = chosen_set(ct.row(r), k);
      RC_ASSERT(int64_t(set.size()) == std::min<int64_t>(k, visible));
      RC_ASSERT(std::adjacent_find(set.begin(), set.end()) == set.end());
      for (const int32_t i : set) RC_ASSERT(std::count(cand.row(r), cand.row(r) + C, i / S) == 1);
      RC_ASSERT(std::count(ct.row(r), ct.row(r) + k, -1) == k - int64_t(set.size()));
      RC_ASSERT(std::all_of(ct.row(r) + set.size(), ct.row(r) + k, [](int32_t i) { return i == -1; }));
    }
  });
}

}  // namespace
}  // namespace dsa
