// CDNA3 v_mfma fp8 (NUMERICS "MI300"): no hardware here, so each rule of the
// published model is pinned by a hand-worked case that a misreading fails.
// Every expected value is derived in the comment beside it; the misreadings
// it rules out are named. e4m3fnuz operands (max 240, subnormals 2^-10 steps).
#include <gtest/gtest.h>

#include "dsa/mma/models.hpp"
#include "mma_test_support.hpp"

namespace dsa::mma {
namespace {

using testing::Dot;
using testing::kInf;
using testing::p2;

constexpr Model kGroup16 = Model::cdna3_mfma_f32_32x32x16_fp8;  // one group of 16
constexpr Model kTwoGroups = Model::cdna3_mfma_f32_16x16x32_fp8;

// One instruction; from zero, the bulk path (chain_dots) must agree bit for bit.
float run_mfma(Model m, const Dot& d, float c) {
  const float r = instruction(m, d.a(), d.b(), c, true);
  if (c == 0.0f) {
    EXPECT_EQ(testing::bits(r), testing::bits(testing::bulk_chain(m, d.a(), d.b(), d.size())));
  }
  return r;
}

TEST(Cdna3Rules, EvenAndOddHalvesSumApartTheSmallerRoundedTowardMinusInf) {
  // Even half: 128 * 128 = 2^14, so M = 14 and the grid is 2^-10. Odd half:
  // -1.5 * 2^-10, exact on its own grid; floored to the 2^-10 grid: -2^-9.
  // D = 2^14 - 2^-9. One 16-wide sum (or halves 0-7 / 8-15) would truncate the
  // small term toward zero instead (2^14 - 2^-10); so would rounding toward zero.
  const Dot d = Dot(kGroup16).at(0, 128, 128).at(1, -1.5f * p2(-5), p2(-5));
  EXPECT_SAME_FLOAT(p2(14) - p2(-9), run_mfma(kGroup16, d, 0.0f));
}

TEST(Cdna3Rules, InsideAHalfTermsTruncateTowardZero) {
  // The same small term at k = 2 (even, with the big one): truncated toward zero
  // on the 2^-10 grid of its half: -2^-10.
  const Dot d = Dot(kGroup16).at(0, 128, 128).at(2, -1.5f * p2(-5), p2(-5));
  EXPECT_SAME_FLOAT(p2(14) - p2(-10), run_mfma(kGroup16, d, 0.0f));
}

TEST(Cdna3Rules, HalvesKeep24FractionBits) {
  // Even: 64 * 64 = 4096 (M = 12, grid 2^-12), -64 * 60 = -3840, and
  // 1.5 * 2^-12, truncated to 2^-12. D = 256 + 2^-12 exactly. With 25 bits
  // the term would stay whole (256 + 1.5 * 2^-12); with 23 it would vanish.
  const Dot d = Dot(kGroup16).at(0, 64, 64).at(2, -64, 60).at(4, 1.5f * p2(-6), p2(-6));
  EXPECT_SAME_FLOAT(256.0f + p2(-12), run_mfma(kGroup16, d, 0.0f));
}

TEST(Cdna3Rules, ProductSumKeeps31BitsBelowCsExponent) {
  // C = 4096 (E = 12): the product sum 2^-12 + 2^-19 is floored to 2^-19 (31
  // bits below E) and kept whole; C + S lies above the tie 4096 + 2^-12, so
  // round-to-nearest gives 4096 + 2^-11. With 30 bits, 2^-19 would be floored
  // away: an exact tie, rounded to even (4096).
  const Dot d = Dot(kGroup16).at(0, p2(-6), p2(-6)).at(2, p2(-10), p2(-9));
  EXPECT_SAME_FLOAT(4096.0f + p2(-11), run_mfma(kGroup16, d, 4096.0f));
}

TEST(Cdna3Rules, ProductSumBits32BelowAreDropped) {
  // 2^-12 + 2^-20: the 2^-20 is below the 31-bit grid (2^-19) and floored away,
  // leaving an exact tie that rounds to even: 4096. Keeping 32 bits rounds up.
  const Dot d = Dot(kGroup16).at(0, p2(-6), p2(-6)).at(2, p2(-10), p2(-10));
  EXPECT_SAME_FLOAT(4096.0f, run_mfma(kGroup16, d, 4096.0f));
}

TEST(Cdna3Rules, ProductSumRoundsTowardMinusInfNotTowardZero) {
  // C = -4096, S = -2^-12 - 2^-20: floored to -2^-12 - 2^-19, past the tie
  // -4096 - 2^-12, so D = -4096 - 2^-11. Rounding S toward zero would leave an
  // exact tie, rounded to even: -4096.
  const Dot d = Dot(kGroup16).at(0, -p2(-6), p2(-6)).at(2, -p2(-10), p2(-10));
  EXPECT_SAME_FLOAT(-4096.0f - p2(-11), run_mfma(kGroup16, d, -4096.0f));
}

TEST(Cdna3Rules, CKept25BinadesBelowAndDropped26Below) {
  // Products 64 * 64 = 4096: M = E = 12. C = -2^-13 lies 25 binades below:
  // kept and floored to the 2^-12 grid (-2^-12): D = 4096 - 2^-12. C = -2^-14
  // lies 26 below: dropped, D = 4096. (Dropping at 25, or keeping at 26,
  // fails one of the two; so does rounding C toward zero.)
  const Dot d = Dot(kGroup16).at(0, 64, 64);
  EXPECT_SAME_FLOAT(4096.0f - p2(-12), run_mfma(kGroup16, d, -p2(-13)));
  EXPECT_SAME_FLOAT(4096.0f, run_mfma(kGroup16, d, -p2(-14)));
}

TEST(Cdna3Rules, CRoundsTowardMinusInfOn24BitsBelowTheMaximum) {
  // C = -1.25 * 2^-12 floored to the 2^-12 grid: -2^-11; D = 4096 - 2^-11.
  // Toward zero would give -2^-12 (D = 4096 - 2^-12).
  const Dot d = Dot(kGroup16).at(0, 64, 64);
  EXPECT_SAME_FLOAT(4096.0f - p2(-11), run_mfma(kGroup16, d, -1.25f * p2(-12)));
  // A positive C below the grid is floored to zero.
  EXPECT_SAME_FLOAT(4096.0f, run_mfma(kGroup16, d, 0.75f * p2(-12)));
}

TEST(Cdna3Rules, ResultRoundsToNearestEven) {
  // 2^14 + 2^-10 (kept on the 2^-10 grid) is a tie between 2^14 and
  // 2^14 + 2^-9 in fp32: even wins (toward zero or -inf would agree; toward
  // +inf would not). C = 2^-10 makes the sum 2^14 + 2^-9, exact; C = 2^-11 is
  // 25 binades below, kept, but floored to zero on the 2^-10 grid.
  const Dot d = Dot(kGroup16).at(0, 128, 128).at(2, p2(-5), p2(-5));
  EXPECT_SAME_FLOAT(p2(14), run_mfma(kGroup16, d, 0.0f));
  EXPECT_SAME_FLOAT(p2(14) + p2(-9), run_mfma(kGroup16, d, p2(-10)));
  EXPECT_SAME_FLOAT(p2(14), run_mfma(kGroup16, d, p2(-11)));
  // 2^14 + 3 * 2^-10 is the tie between 2^14 + 2^-9 (odd) and 2^14 + 2^-8
  // (even): nearest-even rounds up, where toward zero or -inf would not.
  const Dot up = Dot(kGroup16).at(0, 128, 128).at(2, 1.5f * p2(-4), p2(-5));
  EXPECT_SAME_FLOAT(p2(14) + p2(-8), run_mfma(kGroup16, up, 0.0f));
}

TEST(Cdna3Rules, GroupsRunInOrderEachRoundedToFp32) {
  // Group 0 (k < 16): 2^14 + 2^-10, rounded to even: 2^14; it is group 1's C,
  // which adds -2^14: +0. Group 1 first would give 2^-10, and so would one
  // 32-wide sum.
  const Dot d = Dot(kTwoGroups).at(0, 128, 128).at(2, p2(-5), p2(-5)).at(16, -128, 128);
  const float got = run_mfma(kTwoGroups, d, 0.0f);
  EXPECT_SAME_FLOAT(0.0f, got);
  // Swapping the groups' contents swaps the answer.
  const Dot swapped = Dot(kTwoGroups).at(16, 128, 128).at(18, p2(-5), p2(-5)).at(0, -128, 128);
  EXPECT_SAME_FLOAT(p2(-10), run_mfma(kTwoGroups, swapped, 0.0f));
}

TEST(Cdna3Rules, SubnormalsKeepTheMinimumExponent) {
  // 2^-10 (a subnormal, exponent -7 as stored) * 128: the even maximum is
  // 0, not -3, so C = 2^-20 + 2^-26 is floored to the 2^-24 grid: D = 2^-3 + 2^-20.
  // Normalising the subnormal would keep C whole.
  const Dot d = Dot(kGroup16).at(0, p2(-10), 128);
  EXPECT_SAME_FLOAT(p2(-3) + p2(-20), run_mfma(kGroup16, d, p2(-20) + p2(-26)));
}

TEST(Cdna3Rules, ZeroProductsAreNoTerm) {
  // Every product zero (one operand 240): C alone, even the smallest subnormal.
  // (MMA-Sim's exponent -126 for zeros would floor it away; NUMERICS "Zero operands".)
  const Dot d = Dot(kGroup16).at(0, 0.0f, 240).at(1, 240, 0.0f);
  EXPECT_SAME_FLOAT(p2(-149), run_mfma(kGroup16, d, p2(-149)));
  EXPECT_SAME_FLOAT(-p2(-130), run_mfma(kGroup16, d, -p2(-130)));
  EXPECT_SAME_FLOAT(0.0f, run_mfma(kGroup16, d, -0.0f));  // -0 is no term: +0
}

TEST(Cdna3Rules, NanAndInfinity) {
  const Dot d = Dot(kTwoGroups).at(0, 2, 3);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_SAME_FLOAT(kInf, run_mfma(kTwoGroups, d, kInf));
  EXPECT_SAME_FLOAT(-kInf, run_mfma(kTwoGroups, d, -kInf));
  EXPECT_SAME_FLOAT(nan, run_mfma(kTwoGroups, d, nan));
  for (int k : {0, 31}) {  // 0x80 is e4m3fnuz's only NaN, in either group
    Dot with_nan = Dot(kTwoGroups).at(0, 2, 3);
    with_nan.code_at(k, 0x80, 0x38);
    EXPECT_SAME_FLOAT(nan, run_mfma(kTwoGroups, with_nan, 1.0f));
    EXPECT_SAME_FLOAT(nan, run_mfma(kTwoGroups, with_nan, kInf));
  }
  // The largest fp32 C plus a positive product rounds to nearest: no overflow.
  EXPECT_SAME_FLOAT(std::numeric_limits<float>::max(), run_mfma(kTwoGroups, d, std::numeric_limits<float>::max()));
}

TEST(Cdna3Rules, ChainAddsInstructionsInOrder) {
  // K = 64 with 32x32x16: four groups; group 0 gives 2^14, group 1 adds 2^-10
  // (a tie at 2^14: even) and group 2 subtracts 2^14: +0, group 3 adds 2^-10.
  Dot d(kGroup16, 64);
  d.at(0, 128, 128).at(16, p2(-5), p2(-5)).at(32, -128, 128).at(48, p2(-5), p2(-5));
  EXPECT_SAME_FLOAT(p2(-10), chain(kGroup16, d.a(), d.b(), 64));
  EXPECT_SAME_FLOAT(p2(-10), testing::bulk_chain(kGroup16, d.a(), d.b(), 64));
  EXPECT_SAME_FLOAT(p2(-10) + 1.0f, chain_from(kGroup16, d.a(), d.b(), 64, 1.0f));
}

TEST(Cdna3Rules, InAChainASmallCIsDroppedByALargeGroup) {
  // Group 0: -2^-20; group 1: 128 * 128 = 2^14, so C lies 34 binades below M:
  // dropped, D = 2^14. (Kept, it would be floored to -2^-10: 2^14 - 2^-10.)
  Dot d(kGroup16, 32);
  d.at(0, -p2(-10), p2(-10)).at(16, 128, 128);
  EXPECT_SAME_FLOAT(p2(14), chain(kGroup16, d.a(), d.b(), 32));
  EXPECT_SAME_FLOAT(p2(14), testing::bulk_chain(kGroup16, d.a(), d.b(), 32));
}

TEST(Cdna3Rules, InAChainSmallProductsAreFlooredBelowALargeC) {
  // Group 0: C = 2^14. Group 1: 2^-10 + 2^-20, floored to 31 bits below E = 14
  // (2^-17): 2^-10, the tie between 2^14 and 2^14 + 2^-9, rounded to even: 2^14.
  // Unfloored, the sum lies above the tie: 2^14 + 2^-9.
  Dot d(kGroup16, 32);
  d.at(0, 128, 128).at(16, p2(-5), p2(-5)).at(18, p2(-10), p2(-10));
  EXPECT_SAME_FLOAT(p2(14), chain(kGroup16, d.a(), d.b(), 32));
  EXPECT_SAME_FLOAT(p2(14), testing::bulk_chain(kGroup16, d.a(), d.b(), 32));
}

}  // namespace
}  // namespace dsa::mma
