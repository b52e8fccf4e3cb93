// Hopper wgmma and mma.sync special cases that the H200 dumps do not cover
// (NUMERICS lists them as not yet seen): exact cancellation, C = -0, the sign
// of truncated small sums, NaN inputs; and the rules that the dumps pin,
// restated as hand-worked cases so that a failure names the rule.
#include <gtest/gtest.h>

#include <bit>
#include <vector>

#include "dsa/mma/models.hpp"
#include "mma_test_support.hpp"

namespace dsa::mma {
namespace {

using testing::Dot;
using testing::kInf;
using testing::p2;

constexpr Model kWgmma = Model::sm90_wgmma_e4m3;
constexpr Model kSync = Model::sm90_mma_sync_e4m3;

// One instruction; from zero, the bulk path (chain_dots) must agree bit for bit.
float run(Model m, const Dot& d, float c, bool use_c = true) {
  const float r = instruction(m, d.a(), d.b(), c, use_c);
  if (!use_c || (c == 0.0f && !std::signbit(c))) {
    EXPECT_EQ(testing::bits(r), testing::bits(testing::bulk_chain(m, d.a(), d.b(), d.size())));
  }
  return r;
}

TEST(Wgmma, ExactCancellationIsPlusZero) {
  const Dot d = Dot(kWgmma).at(0, 3, 5).at(9, -3, 5);
  EXPECT_SAME_FLOAT(0.0f, run(kWgmma, d, 0.0f, false));
  EXPECT_SAME_FLOAT(0.0f, run(kWgmma, d, -0.0f));
  // A C that cancels the products exactly: +0 as well.
  const Dot one = Dot(kWgmma).at(0, -2, 2);
  EXPECT_SAME_FLOAT(0.0f, run(kWgmma, one, 4.0f));
}

TEST(Wgmma, NoTermsIsPlusZero) {
  const Dot zeros = Dot(kWgmma).at(0, -0.0f, 5).at(1, 5, 0.0f);
  EXPECT_SAME_FLOAT(0.0f, run(kWgmma, zeros, -0.0f));
  EXPECT_SAME_FLOAT(0.0f, run(kWgmma, zeros, 123.0f, false));  // scale-d = 0 ignores C
}

TEST(Wgmma, TruncationCanFlipTheSignOfASmallSum) {
  // 8 - 8 sets X = 3 (grid 2^-10); 1.875 * 2^-10 twice truncates to 2^-10
  // each; -2^-9 and -2^-10 are on the grid. Truncated: 1 + 1 - 2 - 1 = -1
  // units, D = -2^-10, while the exact sum is +0.75 * 2^-10.
  const Dot d = Dot(kWgmma)
                    .at(0, 8, 1)
                    .at(1, -8, 1)
                    .at(2, 1.875f * p2(-5), p2(-5))
                    .at(3, 1.875f * p2(-5), p2(-5))
                    .at(4, -p2(-4), p2(-5))
                    .at(5, -p2(-5), p2(-5));
  EXPECT_SAME_FLOAT(-p2(-10), run(kWgmma, d, 0.0f, false));
  EXPECT_SAME_FLOAT(0.75f * p2(-10), chain(Model::exact, d.a(), d.b(), 32));
}

TEST(Wgmma, TruncationCanZeroASmallSum) {
  // 8 - 8 + 1.875 * 2^-10 - 2^-10: truncated 1 - 1 = 0 units: +0.
  const Dot d = Dot(kWgmma).at(0, 8, 1).at(1, -8, 1).at(2, 1.875f * p2(-5), p2(-5)).at(3, -p2(-5), p2(-5));
  EXPECT_SAME_FLOAT(0.0f, run(kWgmma, d, 0.0f, false));
}

TEST(Wgmma, ResultKeeps13FractionBits) {
  // 1.875 + 1.875 + 2^-13 (all on the grid 2^-13 of X = 0): the sum 3.75 + 2^-13
  // has exponent 1, so it is truncated to 2^-12: 3.75.
  const Dot d = Dot(kWgmma).at(0, 1.875f, 1).at(1, 1.875f, 1).at(2, p2(-6), p2(-7));
  EXPECT_SAME_FLOAT(3.75f, run(kWgmma, d, 0.0f, false));
  // A lone C is truncated to 13 fraction bits: the low 10 bits of D are zero.
  const Dot none(kWgmma);
  EXPECT_SAME_FLOAT(1.0f, run(kWgmma, none, 1.0f + p2(-20)));
  EXPECT_SAME_FLOAT(1.0f + p2(-13), run(kWgmma, none, 1.0f + p2(-13) + p2(-14)));
  EXPECT_SAME_FLOAT(-(1.0f + p2(-13)), run(kWgmma, none, -(1.0f + p2(-13) + p2(-14))));
  // The largest fp32 C: truncated to the largest e8m13 value, never inf.
  EXPECT_EQ(0x7F7FFC00u, testing::bits(run(kWgmma, none, std::numeric_limits<float>::max())));
  // fp32 subnormal C: exponent -126, grid 2^-139.
  EXPECT_SAME_FLOAT(p2(-130), run(kWgmma, none, p2(-130) + p2(-149)));
}

TEST(Wgmma, SubnormalOperandsAreNotNormalised) {
  // 2^-9 (subnormal, exponent -6) * 256 = 0.5 with alignment exponent 2:
  // grid 2^-11, so 1.5 * 2^-13 vanishes (normalised, exponent -1, it would stay).
  const Dot d = Dot(kWgmma).at(0, p2(-9), 256).at(1, 1.5f * p2(-7), p2(-6));
  EXPECT_SAME_FLOAT(0.5f, run(kWgmma, d, 0.0f, false));
}

TEST(Wgmma, NanAndInfinity) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Dot d = Dot(kWgmma).at(0, 2, 3);
  EXPECT_SAME_FLOAT(kInf, run(kWgmma, d, kInf));
  EXPECT_SAME_FLOAT(-kInf, run(kWgmma, d, -kInf));
  EXPECT_SAME_FLOAT(nan, run(kWgmma, d, nan));
  EXPECT_SAME_FLOAT(6.0f, run(kWgmma, d, nan, false));  // scale-d = 0: C is not read
  Dot with_nan = Dot(kWgmma).at(0, 2, 3);
  with_nan.code_at(5, 0xff, 0x38);
  EXPECT_SAME_FLOAT(nan, run(kWgmma, with_nan, 0.0f, false));
  // A NaN in one instruction of a chain poisons the rest.
  Dot chain_nan(kWgmma, 128);
  chain_nan.at(0, 1, 1).code_at(40, 0x7f, 0x38);
  EXPECT_SAME_FLOAT(nan, chain(kWgmma, chain_nan.a(), chain_nan.b(), 128));
}

TEST(Hopper, EveryNanIs0x7fffffff) {
  // The H200 writes this one NaN whatever went in: a NaN operand (even times
  // zero), a NaN C of any payload or sign (data/hardware/RESULTS.md).
  const float payload = std::bit_cast<float>(0xffc0dead);
  for (Model m : {kWgmma, kSync}) {
    Dot d = Dot(m).at(0, 2, 3);
    EXPECT_EQ(0x7fffffffu, testing::bits(run(m, d, payload))) << to_string(m);
    d.code_at(9, 0x7f, 0x00);  // NaN * 0
    EXPECT_EQ(0x7fffffffu, testing::bits(run(m, d, 1.0f))) << to_string(m);
    std::vector<uint8_t> q(64, 0x38), k(64, 0x38);
    k[33] = 0xff;
    float out = 0;
    chain_dots(m, q.data(), 1, k.data(), 1, 64, &out);
    EXPECT_EQ(0x7fffffffu, testing::bits(out)) << to_string(m);
  }
}

TEST(Wgmma, ChainFeedsEachResultToTheNext) {
  // Instruction 0: 2^8 * 2^8 = 2^16. Instruction 1: 1.5 * 2^-9 with C = 2^16
  // as the largest term (grid 2^3): vanishes. From C = -2^16: +0 then 1.5 * 2^-9.
  Dot d(kWgmma, 64);
  d.at(0, 256, 256).at(32, 1.5f * p2(-3), p2(-6));
  EXPECT_SAME_FLOAT(p2(16), chain(kWgmma, d.a(), d.b(), 64));
  EXPECT_SAME_FLOAT(p2(16), testing::bulk_chain(kWgmma, d.a(), d.b(), 64));
  EXPECT_SAME_FLOAT(1.5f * p2(-9), chain_from(kWgmma, d.a(), d.b(), 64, -p2(16)));
}

TEST(MmaSync, ExactCancellationAndMinusZeroC) {
  const Dot d = Dot(kSync).at(0, 3, 5).at(1, -3, 5);
  EXPECT_SAME_FLOAT(0.0f, run(kSync, d, 0.0f));
  EXPECT_SAME_FLOAT(0.0f, run(kSync, d, -0.0f));  // FADD(+0, -0) = +0
  const Dot none(kSync);
  EXPECT_SAME_FLOAT(0.0f, run(kSync, none, -0.0f));
  const Dot six = Dot(kSync).at(0, 2, 3);
  EXPECT_SAME_FLOAT(6.0f, run(kSync, six, -0.0f));
}

TEST(MmaSync, TwoHmmaOverKMod4) {
  // HMMA 1 (k mod 4 in {0, 1}): 2^16 + 1.5 * 2^-9 -> grid 2^-9 -> 2^16 + 2^-9,
  // rounded toward zero to fp32: 2^16. HMMA 2 (k = 2) adds -2^16: +0. Grouping
  // k < 16 / k >= 16, or even / odd k, or one 32-wide sum gives 2^-9 or more.
  const Dot d = Dot(kSync).at(0, 256, 256).at(1, 1.5f * p2(-3), p2(-6)).at(2, -256, 256);
  EXPECT_SAME_FLOAT(0.0f, run(kSync, d, 0.0f));
  // The same terms with the small one in HMMA 2 (k = 3): 2^-9 survives there.
  const Dot d2 = Dot(kSync).at(0, 256, 256).at(3, 1.5f * p2(-3), p2(-6)).at(2, -256, 256);
  EXPECT_SAME_FLOAT(p2(-9), run(kSync, d2, 0.0f));
}

TEST(MmaSync, HmmaKeeps25Bits) {
  // 2^16 - 61440 = 4096 in HMMA 1 with 1.5 * 2^-9 at k = 4: grid 2^-9: 4096 + 2^-9.
  const Dot d = Dot(kSync).at(0, 256, 256).at(1, -256, 240).at(4, 1.5f * p2(-3), p2(-6));
  EXPECT_SAME_FLOAT(4096.0f + p2(-9), run(kSync, d, 0.0f));
}

TEST(MmaSync, CIsAddedByAnOrdinaryFp32Add) {
  // p2 = 1; C = 2^-24 + 2^-30: round to nearest gives 1 + 2^-23. (C as a term
  // of the HMMA would be truncated to 2^-24 and the sum rounded toward zero: 1.)
  const Dot d = Dot(kSync).at(0, 1, 1);
  EXPECT_SAME_FLOAT(1.0f + p2(-23), run(kSync, d, p2(-24) + p2(-30)));
  EXPECT_SAME_FLOAT(1.0f, run(kSync, d, p2(-24)));  // the tie goes to even
}

TEST(MmaSync, NanAndInfinity) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Dot d = Dot(kSync).at(0, 2, 3);
  EXPECT_SAME_FLOAT(kInf, run(kSync, d, kInf));
  EXPECT_SAME_FLOAT(nan, run(kSync, d, nan));
  Dot with_nan = Dot(kSync).at(0, 2, 3);
  with_nan.code_at(17, 0x38, 0x7f);
  EXPECT_SAME_FLOAT(nan, run(kSync, with_nan, 1.0f));
}

}  // namespace
}  // namespace dsa::mma
