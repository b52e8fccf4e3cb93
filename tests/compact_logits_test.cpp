// Compact candidate logits (SPEC 7): computed at the candidate columns only,
// they must be bit-identical to the dense logits at the same positions, for
// every profile; their top-k, remapped to positions, is the candidate top-k.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "candidate_test_support.hpp"
#include "dsa/candidates.hpp"
#include "dsa/logits.hpp"
#include "dsa/profile.hpp"
#include "dsa/topk.hpp"

namespace dsa {
namespace {

using testing::bits_of;
using testing::kInf;
using testing::row_of;

// "" when compact[r][c*S + t] holds the dense logit at block_c*S + t for every
// live slot and visible position, and -inf everywhere else; else the first miss.
std::string compact_mismatch(const DecodeProblem& p, const Logits& dense, const Logits& compact,
                             const CandidateBlocks& cand) {
  if (compact.rows != p.rows() || compact.width != int64_t(cand.slots) * cand.block_size) return "shape";
  const auto lens = visible_lens(p);
  for (int64_t r = 0; r < compact.rows; ++r)
    for (int64_t col = 0; col < compact.width; ++col) {
      const int64_t pos = compact_column_position(cand, r, col);
      const float want = pos >= 0 && pos < lens[size_t(r)] ? dense.at(r, pos) : -kInf;
      if (bits_of(compact.at(r, col)) != bits_of(want)) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "row %lld column %lld (position %lld): compact %a (0x%08x), dense %a (0x%08x)",
                      (long long)r, (long long)col, (long long)pos, compact.at(r, col), bits_of(compact.at(r, col)),
                      want, bits_of(want));
        return msg;
      }
    }
  return "";
}

// A deliberately wrong compact path: every block read one block late.
Logits compact_one_block_late(const DecodeProblem& p, const Profile& profile, const CandidateBlocks& cand) {
  const auto lens = visible_lens(p);
  const int64_t S = cand.block_size, width = int64_t(cand.slots) * S;
  std::vector<std::vector<int64_t>> positions(size_t(p.rows()));
  for (int64_t r = 0; r < p.rows(); ++r)
    for (int64_t col = 0; col < width; ++col) {
      const int64_t block = cand.row(r)[col / S];
      positions[size_t(r)].push_back(block < 0 ? -1 : (block + 1) * S + col % S);
    }
  const auto values = decode_logits_at(p, profile, positions);
  Logits out{p.rows(), width, {}};
  for (const auto& row : values) out.values.insert(out.values.end(), row.begin(), row.end());
  return out;
}

using CompactPath = Logits (*)(const DecodeProblem&, const Profile&, const CandidateBlocks&);

CandidateBlocks random_candidates(const DecodeProblem& p, int32_t S, int32_t C) {
  CandidateBlocks cand{p.rows(), C, S, {}};
  for (int64_t r = 0; r < p.rows(); ++r) {
    std::set<int32_t> used;
    for (int32_t c = 0; c < C; ++c) {
      int32_t id = *rc::gen::inRange<int32_t>(-1, int32_t(p.logits_width / S + 2));
      if (!used.insert(id).second) id = -1;
      cand.blocks.push_back(id);
    }
  }
  return cand;
}

// The property, for a compact path: a random step (every element format,
// 1-D or 2-D lengths, padded or not), random candidates, every profile that
// takes the step's element format and head count.
auto compact_property(CompactPath path) {
  return [path] {
    const ElementFormat element =
        *rc::gen::element(ElementFormat::e4m3fn, ElementFormat::e4m3fnuz, ElementFormat::mxfp4);
    const int32_t heads = *rc::gen::element(8, 16, 32);
    const int32_t head_dim = *rc::gen::element(64, 128);
    const int32_t batch = *rc::gen::inRange(1, 4);
    const int32_t next_n = *rc::gen::inRange(1, 4);
    std::vector<int32_t> lens;
    for (int32_t b = 0; b < batch; ++b) lens.push_back(*rc::gen::inRange(0, 600));
    DecodeProblem p = testing::small_decode_problem(element, heads, head_dim, lens, next_n,
                                                    *rc::gen::arbitrary<uint64_t>(), *rc::gen::element(16, 64));
    if (*rc::gen::arbitrary<bool>()) {  // 2-D lengths, each row at most its request's
      std::vector<int32_t> rows;
      for (int64_t r = 0; r < p.rows(); ++r) rows.push_back(*rc::gen::inRange(0, lens[size_t(r / next_n)] + 1));
      p.seq_lens = rows;
      p.seq_lens_2d = true;
    }
    const CandidateBlocks cand = random_candidates(p, *rc::gen::element(8, 16, 32), *rc::gen::inRange(1, 10));
    const int k = *rc::gen::inRange(1, 64);
    int profiles_run = 0;
    for (const auto& name : profile_names()) {
      const Profile& profile = find_profile(name);
      if (!profile.accepts(element) || !testing::takes_heads(profile, heads)) continue;
      const Logits dense = decode_logits(p, profile).logits;
      const Logits compact = path(p, profile, cand);
      const std::string miss = compact_mismatch(p, dense, compact, cand);
      if (!miss.empty()) RC_FAIL(name + " (" + std::string(to_string(element)) + "): " + miss);
      const auto lens_r = visible_lens(p);
      RC_ASSERT(compact_candidate_topk(compact, cand, lens_r, k).indices ==
                candidate_topk(p, dense, cand, k).indices);
      ++profiles_run;
    }
    RC_ASSERT(profiles_run > 0);
  };
}

TEST(CompactCandidateLogits, BitIdenticalToDenseForEveryProfile) {
  testing::check_property(10, compact_property(compact_candidate_logits));
}

TEST(CompactCandidateLogits, PropertyCatchesPositionsOneBlockLate) {
  EXPECT_TRUE(testing::property_fails(20, compact_property(compact_one_block_late)));
}

// Every registered profile, in each format it takes, at least once.
TEST(CompactCandidateLogits, EveryProfileInEveryFormatItTakes) {
  for (const auto& name : profile_names()) {
    const Profile& profile = find_profile(name);
    for (const ElementFormat e : profile.elements) {
      const DecodeProblem p = testing::small_decode_problem(e, testing::heads_for(profile), 128, {300, 77}, 2, 3);
      CandidateBlocks cand{p.rows(), 6, 16, {}};
      for (int64_t r = 0; r < p.rows(); ++r)
        cand.blocks.insert(cand.blocks.end(), {int32_t(17 - r), 0, -1, 5, int32_t(9 + r), 30});
      const Logits dense = decode_logits(p, profile).logits;
      const Logits compact = compact_candidate_logits(p, profile, cand);
      EXPECT_EQ(compact_mismatch(p, dense, compact, cand), "") << name << " " << to_string(e);
      EXPECT_NE(compact_mismatch(p, dense, compact_one_block_late(p, profile, cand), cand), "") << name;
    }
  }
}

TEST(CompactCandidateLogits, LengthsAroundKWithEveryBlockACandidate) {
  constexpr int k = 16;
  DecodeProblem p = testing::small_decode_problem(ElementFormat::e4m3fn, 8, 64, {k + 1}, 5, 21);
  p.seq_lens_2d = true;
  p.seq_lens = {0, 1, k - 1, k, k + 1};
  const Profile& profile = find_profile("exact");
  const CandidateBlocks cand{p.rows(), 4, 8, std::vector<int32_t>{3, 1, 0, 2, 3, 1, 0, 2, 3, 1, 0, 2, 3, 1, 0, 2, 3, 1, 0, 2}};
  const Logits dense = decode_logits(p, profile).logits;
  const Logits compact = compact_candidate_logits(p, profile, cand);
  EXPECT_EQ(compact_mismatch(p, dense, compact, cand), "");
  const auto lens = visible_lens(p);
  const auto got = compact_candidate_topk(compact, cand, lens, k);
  const auto want = decode_topk(p, dense, k);  // every visible block is a candidate: the plain top-k
  for (int64_t r = 0; r < p.rows(); ++r) EXPECT_EQ(row_of(got, r), row_of(want, r)) << "L = " << lens[size_t(r)];
  EXPECT_EQ(row_of(got, 0), std::vector<int32_t>(k, -1));
  EXPECT_EQ(got.row(1)[0], 0);
  EXPECT_EQ(got.row(1)[1], -1);
  EXPECT_EQ(std::count(got.row(2), got.row(2) + k, -1), 1);
  EXPECT_EQ(std::count(got.row(4), got.row(4) + k, -1), 0);
}

TEST(CompactCandidateLogits, PositionsPastTheRowsLengthAreMinusInfAndNeverChosen) {
  // 1-D lengths, next_n = 3: row 0 of request 0 sees 35 entries, but its
  // candidate blocks come from the request's 37 (the newest block, 32..36).
  const DecodeProblem p = testing::small_decode_problem(ElementFormat::e4m3fn, 16, 128, {37, 20}, 3, 8);
  const Profile& profile = find_profile("deepgemm_sm90");
  const Logits dense = decode_logits(p, profile).logits;
  const CandidateBlocks cand = select_candidate_blocks(p, dense, 8, 2);
  ASSERT_EQ(cand.row(0)[0], 4);
  const Logits compact = compact_candidate_logits(p, profile, cand);
  EXPECT_EQ(compact_mismatch(p, dense, compact, cand), "");
  for (int t = 3; t < 8; ++t) EXPECT_EQ(compact.at(0, t), -kInf) << "position " << 32 + t;
  EXPECT_NE(compact.at(0, 2), -kInf);
  const auto lens = visible_lens(p);
  for (const int k : {1, 5, 16, 20}) {
    const auto got = compact_candidate_topk(compact, cand, lens, k);
    EXPECT_EQ(got.indices, candidate_topk(p, dense, cand, k).indices) << "k = " << k;
    for (int64_t r = 0; r < p.rows(); ++r)
      for (int i = 0; i < k; ++i) EXPECT_LT(got.row(r)[i], lens[size_t(r)]);
  }
}

TEST(CompactCandidateLogits, TopkIgnoresWhatKernelsLeaveUnwritten) {
  const DecodeProblem p = testing::small_decode_problem(ElementFormat::e4m3fn, 8, 64, {50, 9}, 2, 4);
  const Profile& profile = find_profile("exact");
  const CandidateBlocks cand{p.rows(), 3, 8, std::vector<int32_t>{6, -1, 0, 1, 2, -1, 0, -1, 1, -1, 1, 0}};
  Logits compact = compact_candidate_logits(p, profile, cand);
  const auto lens = visible_lens(p);
  const auto clean = compact_candidate_topk(compact, cand, lens, 12);
  int poisoned = 0;
  for (int64_t r = 0; r < compact.rows; ++r)
    for (int64_t col = 0; col < compact.width; ++col) {
      const int64_t pos = compact_column_position(cand, r, col);
      if (pos < 0 || pos >= lens[size_t(r)]) {
        EXPECT_EQ(compact.at(r, col), -kInf);
        compact.row(r)[col] = (col % 2) ? testing::kNaN : kInf;
        ++poisoned;
      }
    }
  EXPECT_GT(poisoned, 16);
  EXPECT_EQ(compact_candidate_topk(compact, cand, lens, 12).indices, clean.indices);
  EXPECT_EQ(compact_column_position(cand, 0, 8), -1);  // slot 1 of row 0 is empty
  EXPECT_EQ(compact_column_position(cand, 0, 3), 6 * 8 + 3);
}

TEST(CompactCandidateLogits, PaddedRowsStayMinusInf) {
  // One request with 1 of 4 rows real, one with all 4.
  SyntheticDecodeConfig config;
  config.batch = 2;
  config.next_n = 4;
  config.heads = 16;
  config.head_dim = 64;
  config.block_size = 16;
  config.seq_lens = {40, 33};
  config.decode_lens = {1, 4};
  config.bf16_weights = true;
  Rng rng(9);
  const DecodeProblem p = make_decode_problem(config, rng);
  const Profile& profile = find_profile("deepgemm_sm100");
  const Logits dense = decode_logits(p, profile).logits;
  const CandidateBlocks cand = select_candidate_blocks(p, dense, 8, 3);
  const Logits compact = compact_candidate_logits(p, profile, cand);
  EXPECT_EQ(compact_mismatch(p, dense, compact, cand), "");
  const auto lens = visible_lens(p);
  const auto topk = compact_candidate_topk(compact, cand, lens, 8);
  for (int64_t r = 1; r < 4; ++r) {
    EXPECT_TRUE(std::all_of(compact.row(r), compact.row(r) + compact.width, [](float v) { return v == -kInf; }));
    EXPECT_EQ(row_of(topk, r), std::vector<int32_t>(8, -1));
  }
  EXPECT_EQ(std::count(topk.row(0), topk.row(0) + 8, -1), 0);
  EXPECT_EQ(topk.indices, candidate_topk(p, dense, cand, 8).indices);
}

}  // namespace
}  // namespace dsa
