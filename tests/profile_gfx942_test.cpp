// The gfx942 profiles: dsa_gfx942 (this project's HIP kernels) is AITER's
// Gluon arithmetic, bit for bit; its compact candidate logits equal its dense
// logits at every candidate position; and the MFMA dim order it copies
// (k_width = 16 operands) really changes bits against the in-order chain, so
// the profile pins it rather than carrying it along.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "candidate_test_support.hpp"
#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/logits.hpp"
#include "dsa/profile.hpp"
#include "dsa/synthetic.hpp"

namespace dsa {
namespace {

using testing::bits_of;

// A V4.1-like decode step as the gfx942 launch takes it: e4m3fnuz, the
// preshuffle cache of 64-token pages, H = 64, D = 128, next_n = 2.
DecodeProblem gfx942_step(uint64_t seed, int32_t heads = 64) {
  SyntheticDecodeConfig c;
  c.batch = 3;
  c.next_n = 2;
  c.heads = heads;
  c.head_dim = 128;
  c.element = ElementFormat::e4m3fnuz;
  c.layout = CacheLayout::preshuffle;
  c.block_size = 64;
  c.seq_lens = {700, 129, 1};
  Rng rng(seed);
  return make_decode_problem(c, rng);
}

CandidateBlocks some_candidates(const DecodeProblem& p, int32_t S, int32_t slots, uint64_t seed) {
  Rng rng(seed);
  CandidateBlocks cand{p.rows(), slots, S, {}};
  const int32_t blocks = int32_t((p.logits_width + S - 1) / S);
  for (int64_t r = 0; r < p.rows(); ++r) {
    std::set<int32_t> used;
    for (int32_t c = 0; c < slots; ++c) {
      int32_t id = int32_t(rng.next_u64() % uint64_t(blocks + 3)) - 1;
      if (id >= blocks || !used.insert(id).second) id = -1;
      cand.blocks.push_back(id);
    }
  }
  return cand;
}

TEST(ProfileGfx942, IsAitersGluonArithmeticBitForBit) {
  const Profile& ours = find_profile("dsa_gfx942");
  const Profile& aiter = find_profile("aiter_gfx942_gluon");
  for (const int32_t heads : {32, 64}) {
    const DecodeProblem p = gfx942_step(11 + heads, heads);
    const Logits a = decode_logits(p, ours).logits, b = decode_logits(p, aiter).logits;
    const auto lens = visible_lens(p);
    int64_t compared = 0;
    for (int64_t r = 0; r < p.rows(); ++r)
      for (int64_t n = 0; n < lens[size_t(r)]; ++n, ++compared)
        ASSERT_EQ(bits_of(a.at(r, n)), bits_of(b.at(r, n))) << "H " << heads << " row " << r << " column " << n;
    EXPECT_GT(compared, 1000);
  }
}

TEST(ProfileGfx942, CompactEqualsDenseAtCandidatePositions) {
  const Profile& ours = find_profile("dsa_gfx942");
  const DecodeProblem p = gfx942_step(5);
  const Logits dense = decode_logits(p, ours).logits;
  const auto lens = visible_lens(p);
  for (const int32_t S : {8, 16}) {
    const CandidateBlocks cand = some_candidates(p, S, 48, 100 + S);
    const Logits compact = compact_candidate_logits(p, ours, cand);
    ASSERT_EQ(compact.width, int64_t(cand.slots) * S);
    int64_t live = 0;
    for (int64_t r = 0; r < p.rows(); ++r)
      for (int64_t col = 0; col < compact.width; ++col) {
        const int64_t pos = compact_column_position(cand, r, col);
        if (pos < 0 || pos >= lens[size_t(r)]) {
          EXPECT_EQ(compact.at(r, col), -testing::kInf);
          continue;
        }
        ++live;
        ASSERT_EQ(bits_of(compact.at(r, col)), bits_of(dense.at(r, pos)))
            << "S " << S << " row " << r << " column " << col << " position " << pos;
      }
    EXPECT_GT(live, 200);
    // The fused launch's top 512: the compact top-k remapped, a correct top-k of the masked dense row.
    const TopkIndices fused = compact_candidate_topk(compact, cand, lens, 512);
    const TopkIndices masked = candidate_topk(p, dense, cand, 512);
    for (int64_t r = 0; r < p.rows(); ++r)
      EXPECT_EQ(testing::chosen_set(fused.row(r), 512), testing::chosen_set(masked.row(r), 512)) << "row " << r;
  }
}

// The k_width = 16 order against the in-order chain: some logits differ (the
// CDNA3 groups of 16 round), so a kernel feeding the dims in order would be
// caught by this profile. Both orders sum the same exact products.
TEST(ProfileGfx942, DimOrderChangesBits) {
  Profile in_order = find_profile("dsa_gfx942");
  in_order.dim_order = nullptr;
  const DecodeProblem p = gfx942_step(7);
  const Logits a = decode_logits(p, find_profile("dsa_gfx942")).logits, b = decode_logits(p, in_order).logits;
  const auto lens = visible_lens(p);
  int64_t differ = 0, compared = 0;
  for (int64_t r = 0; r < p.rows(); ++r)
    for (int64_t n = 0; n < lens[size_t(r)]; ++n, ++compared) differ += bits_of(a.at(r, n)) != bits_of(b.at(r, n));
  EXPECT_GT(differ, 0) << "the dim order had no effect on " << compared << " logits";
  EXPECT_LT(differ, compared) << "every logit differs: more than the rounding of the groups changed";
}

TEST(ProfileGfx942, DimOrderIsAPermutationOfWholeMfmaSteps) {
  const Profile& ours = find_profile("dsa_gfx942");
  ASSERT_NE(ours.dim_order, nullptr);
  for (const int D : {64, 128}) {
    const std::vector<int32_t> order = ours.dim_order(D);
    ASSERT_EQ(order.size(), size_t(D));
    EXPECT_EQ(std::set<int32_t>(order.begin(), order.end()).size(), size_t(D));
    // Instruction 1 (slots 32..63), lane group 1 (slots 8..15 of it): dims 16 + 8 .. 16 + 15.
    EXPECT_EQ(order[32 + 8], 24);
    EXPECT_EQ(order[32 + 15], 31);
  }
  const std::vector<int32_t> d128 = ours.dim_order(128);
  EXPECT_EQ(d128[64 * 1 + 0], 64);        // instruction 2 starts run c = 1
  EXPECT_EQ(d128[64 * 1 + 32 + 24], 64 + 48 + 8);  // instruction 3, lane group 3
  try {
    ours.dim_order(96);
    FAIL() << "D = 96 accepted";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "head_dim");
  }
}

}  // namespace
}  // namespace dsa
