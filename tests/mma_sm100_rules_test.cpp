// Blackwell tcgen05 (NUMERICS "B200"): no hardware here, so each rule of the
// published model is pinned by a hand-worked case that a misreading fails.
// e4m3fn operands (max 448, subnormals in 2^-9 steps).
#include <gtest/gtest.h>

#include <vector>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/mma/models.hpp"
#include "mma_test_support.hpp"

namespace dsa::mma {
namespace {

using testing::Dot;
using testing::kInf;
using testing::kMxf4;
using testing::p2;

constexpr Model kTc = Model::sm100_tcgen05_f8f6f4_e4m3;

// One instruction; from zero, the bulk path (chain_dots) must agree bit for bit.
float run_f8f6f4(const Dot& d, float c, bool use_c = true) {
  const float r = instruction(kTc, d.a(), d.b(), c, use_c);
  if (!use_c || c == 0.0f) {
    EXPECT_EQ(testing::bits(r), testing::bits(testing::bulk_chain(kTc, d.a(), d.b(), d.size())));
  }
  return r;
}

// 256 * 256 = 2^16 sets X = 16 (grid 2^-9); -256 * 240 brings the sum down to 4096.
Dot big_pair() { return Dot(kTc).at(0, 256, 256).at(1, -256, 240); }

TEST(Sm100Rules, TermsKeep25FractionBitsEachTruncatedTowardZero) {
  // Two terms of 1.5 * 2^-9, each truncated to 2^-9 on the grid 2^(16 - 25):
  // D = 4096 + 2^-8. 24 bits drop them (4096); 26 bits keep them
  // (4096 + 1.5 * 2^-8); truncating the sum instead of each term gives the same.
  Dot d = big_pair();
  d.at(2, 1.5f * p2(-3), p2(-6)).at(3, 1.5f * p2(-3), p2(-6));
  EXPECT_SAME_FLOAT(4096.0f + p2(-8), run_f8f6f4(d, 0.0f, false));
}

TEST(Sm100Rules, NegativeTermsTruncateTowardZero) {
  // -1.5 * 2^-9 -> -2^-9 (flooring would give -2^-8).
  Dot d = big_pair();
  d.at(2, -1.5f * p2(-3), p2(-6));
  EXPECT_SAME_FLOAT(4096.0f - p2(-9), run_f8f6f4(d, 0.0f, false));
}

TEST(Sm100Rules, ResultRoundsTowardZero) {
  // 2^16 + 3 * 2^-9 is kept whole (each 2^-9 is on the grid), then rounded to
  // fp32 (ulp 2^-7): toward zero 2^16, where nearest would give 2^16 + 2^-7.
  // Negated: -2^16, where toward -inf would give -2^16 - 2^-7.
  for (float sign : {1.0f, -1.0f}) {
    Dot d = Dot(kTc).at(0, sign * 256, 256);
    for (int k = 1; k <= 3; ++k) d.at(k, sign * p2(-3), p2(-6));
    EXPECT_SAME_FLOAT(sign * p2(16), run_f8f6f4(d, 0.0f, false));
  }
}

TEST(Sm100Rules, CTakesPartInTheMaximum) {
  // C = 2^18 sets X = 18 (grid 2^-7); four products of -2^16 cancel it, and
  // 1.5 * 2^-7 is truncated to 2^-7. Without C in the maximum (X = 16) it
  // would stay whole.
  Dot d(kTc);
  for (int k = 0; k < 4; ++k) d.at(k, -256, 256);
  d.at(4, 1.5f * p2(-3), p2(-4));
  EXPECT_SAME_FLOAT(p2(-7), run_f8f6f4(d, p2(18)));
}

TEST(Sm100Rules, CIsTruncatedLikeAnyTerm) {
  // A lone C of 1 + 2^-23 with a product 2^8 * 2^8 (X = 16): the grid is 2^-9,
  // so C becomes 1 and D = 65537 exactly.
  const Dot d = Dot(kTc).at(0, 256, 256);
  EXPECT_SAME_FLOAT(65537.0f, run_f8f6f4(d, 1.0f + p2(-23)));
}

TEST(Sm100Rules, SubnormalsKeepTheMinimumExponent) {
  // 2^-9 (subnormal, exponent -6 as stored) * 256 = 0.5 with alignment
  // exponent 2: the grid is 2^-23, so C = 2^-20 + 2^-24 loses its 2^-24.
  // Normalising the subnormal (exponent -9, grid 2^-26) would keep it.
  const Dot d = Dot(kTc).at(0, p2(-9), 256);
  EXPECT_SAME_FLOAT(0.5f + p2(-20), run_f8f6f4(d, p2(-20) + p2(-24)));
}

TEST(Sm100Rules, ZeroProductsAreNoTerm) {
  // Every product zero: C alone, even the smallest subnormal (MMA-Sim's
  // exponent -126 for a zero operand would truncate it: NUMERICS "Zero operands").
  const Dot d = Dot(kTc).at(0, 0.0f, 256).at(1, 256, -0.0f);
  EXPECT_SAME_FLOAT(p2(-149), run_f8f6f4(d, p2(-149)));
  EXPECT_SAME_FLOAT(0.0f, run_f8f6f4(d, -0.0f));  // no term: +0
}

TEST(Sm100Rules, ExactCancellationIsPlusZero) {
  const Dot d = Dot(kTc).at(0, 3, 5).at(7, -3, 5);
  EXPECT_SAME_FLOAT(0.0f, run_f8f6f4(d, 0.0f, false));
  EXPECT_SAME_FLOAT(0.0f, run_f8f6f4(d, -0.0f));
  // scale-d = 0 ignores C entirely.
  EXPECT_SAME_FLOAT(0.0f, run_f8f6f4(d, 7.0f, false));
}

TEST(Sm100Rules, NanAndInfinity) {
  const Dot d = Dot(kTc).at(0, 2, 3);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_SAME_FLOAT(kInf, run_f8f6f4(d, kInf));
  EXPECT_SAME_FLOAT(-kInf, run_f8f6f4(d, -kInf));
  EXPECT_SAME_FLOAT(nan, run_f8f6f4(d, nan));
  for (uint8_t code : {uint8_t(0x7f), uint8_t(0xff)}) {
    Dot with_nan = Dot(kTc).at(0, 2, 3);
    with_nan.code_at(31, 0x38, code);
    EXPECT_SAME_FLOAT(nan, run_f8f6f4(with_nan, 1.0f));
    EXPECT_SAME_FLOAT(nan, run_f8f6f4(with_nan, kInf));
  }
  // Rounding toward zero never overflows: the largest C stays finite.
  const float max = std::numeric_limits<float>::max();
  EXPECT_SAME_FLOAT(max, run_f8f6f4(d, max));
}

// ---- kind::mxf4 (K = 64, e2m1 with one ue8m0 scale per 32), as DeepGEMM's
// SM100 FP4 indexer issues it.

struct Mxfp4Vector {
  std::vector<uint8_t> packed, scales;
  explicit Mxfp4Vector(int d) : packed(size_t(d / 2), 0), scales(size_t(d / 32), 127) {}
  Mxfp4Vector& at(int i, float v) {
    const uint8_t nib = float_to_e2m1(v);
    if (e2m1_to_float(nib) != v) throw std::invalid_argument("not an e2m1 value");
    uint8_t& byte = packed[size_t(i / 2)];
    byte = i % 2 ? uint8_t((byte & 0x0f) | (nib << 4)) : uint8_t((byte & 0xf0) | nib);
    return *this;
  }
  Mxfp4Vector& scale(int block, int exponent) {
    scales[size_t(block)] = uint8_t(exponent + 127);
    return *this;
  }
};

float mxfp4(Model m, const Mxfp4Vector& q, const Mxfp4Vector& k, int d) {
  float out = 0.0f;
  chain_dots_mxfp4(m, q.packed.data(), q.scales.data(), 1, k.packed.data(), k.scales.data(), 1, d, &out);
  return out;
}

// One kind::mxf4 instruction with C; from zero the bulk path must agree bit for bit.
float mxf4_instruction(const Mxfp4Vector& q, const Mxfp4Vector& k, float c, bool use_c = true) {
  const float r =
      instruction_mxfp4(kMxf4, q.packed.data(), q.scales.data(), k.packed.data(), k.scales.data(), c, use_c);
  if (!use_c || c == 0.0f) {
    EXPECT_EQ(testing::bits(r), testing::bits(mxfp4(kMxf4, q, k, 64)));
  }
  return r;
}

TEST(Sm100Mxf4Rules, GroupSumsAlignOnTheirScaleExponentWith35Bits) {
  // Block 0 (scales 2^0): group 0 sums 6 * 6 = 36, group 1 -36: they cancel,
  // and X = 0 (a group's exponent is its scales', not 36's). Block 1: 1.5 with
  // scales 2^-20 * 2^-15 = 1.5 * 2^-35, truncated to the 2^-35 grid: 2^-35.
  // 25 bits would drop it; aligning on each product's own exponent (X = 4)
  // would too; 36 bits would keep 1.5 * 2^-35.
  Mxfp4Vector q(64), k(64);
  q.at(0, 6).at(16, -6).at(32, 1.5f).scale(1, -20);
  k.at(0, 6).at(16, 6).at(32, 1.0f).scale(1, -15);
  EXPECT_SAME_FLOAT(p2(-35), mxfp4(kMxf4, q, k, 64));
  EXPECT_SAME_FLOAT(1.5f * p2(-35), mxfp4(Model::exact, q, k, 64));
  // Two such products in one group of 16 are summed exactly first (3 * 2^-35,
  // on the grid); truncating each product apart would give 2 * 2^-35.
  q.at(33, 1.5f);
  k.at(33, 1.0f);
  EXPECT_SAME_FLOAT(3.0f * p2(-35), mxfp4(kMxf4, q, k, 64));
}

TEST(Sm100Mxf4Rules, ACancelledGroupKeepsItsExponentAnAllZeroGroupIsNoTerm) {
  // Group 0 (k 0-15, scales 2^0 x 2^0: exponent 0) holds 6 * 6 and -6 * 6:
  // nonzero products that cancel. It stays in the maximum, X = 0, so block 1's
  // 1.5 * 2^-35 (scales 2^-20 x 2^-15) lands on the grid 2^(0 - 35) and is
  // truncated to 2^-35. Dropping the cancelled group (X = -35, grid 2^-70)
  // would keep 1.5 * 2^-35.
  Mxfp4Vector q(64), k(64);
  q.at(0, 6).at(1, -6).at(32, 1.5f).scale(1, -20);
  k.at(0, 6).at(1, 6).at(32, 1.0f).scale(1, -15);
  EXPECT_SAME_FLOAT(p2(-35), mxf4_instruction(q, k, 0.0f, false));
  // Block 0 with scales 2^10 x 2^10 (exponent 20) but every product zero (a 6
  // meets a 0): no term, X = -35, and 1.5 * 2^-35 stays whole. Counting the
  // group at its exponent (X = 20, grid 2^-15) would give 0.
  Mxfp4Vector qz(64), kz(64);
  qz.at(0, 6).scale(0, 10).at(32, 1.5f).scale(1, -20);
  kz.at(0, 0).at(5, 4).scale(0, 10).at(32, 1.0f).scale(1, -15);
  EXPECT_SAME_FLOAT(1.5f * p2(-35), mxf4_instruction(qz, kz, 0.0f, false));
  // The same two groups as C's companions: a C of 2^-30 alone sets X = -30
  // (grid 2^-65) when the cancelled group is gone, so 1.5 * 2^-35 is kept:
  // D = 2^-30 + 1.5 * 2^-35 (exact in fp32: 6 bits apart).
  EXPECT_SAME_FLOAT(p2(-30) + 1.5f * p2(-35), mxf4_instruction(qz, kz, p2(-30)));
  // With the cancelled group, X = 0 again: C = 2^-30 is on the grid 2^-35, the
  // product is cut to 2^-35: D = 2^-30 + 2^-35.
  EXPECT_SAME_FLOAT(p2(-30) + p2(-35), mxf4_instruction(q, k, p2(-30)));
}

TEST(Sm100Mxf4Rules, AResultBeyondFp32IsInfinity) {
  // Scales 2^127 x 2^0: 1.5 * 1 gives 1.5 * 2^127 = 0x7f400000, finite; 2 * 1
  // gives 2^128, beyond fp32: +inf (rounding toward zero under IEEE would give
  // the largest finite value 0x7f7fffff); -2 * 1 gives -inf.
  Mxfp4Vector q(64), k(64);
  q.scale(0, 127).at(0, 1.5f);
  k.at(0, 1.0f);
  EXPECT_SAME_FLOAT(1.5f * p2(127), mxf4_instruction(q, k, 0.0f, false));
  q.at(0, 2.0f);
  EXPECT_SAME_FLOAT(kInf, mxf4_instruction(q, k, 0.0f, false));
  q.at(0, -2.0f);
  EXPECT_SAME_FLOAT(-kInf, mxf4_instruction(q, k, 0.0f, false));
  // Through C: FLT_MAX = 2^128 - 2^104. Adding 1 * 2^104 (scale 2^104; X = 127,
  // grid 2^92, so the term is whole) gives exactly 2^128: +inf. Adding 2^103
  // gives 2^128 - 2^103, cut toward zero to 24 bits (ulp 2^104): FLT_MAX.
  const float max = std::numeric_limits<float>::max();
  Mxfp4Vector q1(64), k1(64);
  q1.scale(0, 104).at(0, 1.0f);
  k1.at(0, 1.0f);
  EXPECT_SAME_FLOAT(kInf, mxf4_instruction(q1, k1, max));
  q1.scale(0, 103);
  EXPECT_SAME_FLOAT(max, mxf4_instruction(q1, k1, max));
  EXPECT_SAME_FLOAT(-kInf, mxf4_instruction(q1, k1, -kInf));  // an infinite C passes through
}

TEST(Sm100Mxf4Rules, ChainOfTwoFromZero) {
  // D = 128: instruction 0 (k < 64) gives 1; instruction 1 adds 3 * 2^-36,
  // truncated on its grid 2^-35 (C = 1 is its largest term): 2^-35, then 1 +
  // 2^-35 rounded toward zero: 1.
  Mxfp4Vector q(128), k(128);
  q.at(0, 1).at(64, 3).scale(2, -36);
  k.at(0, 1).at(64, 1);
  EXPECT_SAME_FLOAT(1.0f, mxfp4(kMxf4, q, k, 128));
}

TEST(Sm100Mxf4Rules, NanScaleGivesNan) {
  Mxfp4Vector q(64), k(64);
  q.at(0, 1);
  k.at(0, 1);
  k.scales[1] = 0xff;
  EXPECT_TRUE(std::isnan(mxfp4(kMxf4, q, k, 64)));
  EXPECT_TRUE(std::isnan(mxfp4(Model::exact, q, k, 64)));
}

TEST(Mxfp4Exact, SumNeedsMoreThanDouble) {
  // 1 + 2^-24 is the tie between 1 and 1 + 2^-23; a block of 2^-200 breaks it
  // upward. A double sum loses the 2^-200 and rounds the tie to even (1).
  Mxfp4Vector q(96), k(96);
  q.at(0, 1).at(32, 1).scale(1, -12).at(64, 1).scale(2, -100);
  k.at(0, 1).at(32, 1).scale(1, -12).at(64, 1).scale(2, -100);
  EXPECT_SAME_FLOAT(1.0f + p2(-23), mxfp4(Model::exact, q, k, 96));
  Mxfp4Vector no_tail = q;
  no_tail.at(64, 0);
  EXPECT_SAME_FLOAT(1.0f, mxfp4(Model::exact, no_tail, k, 96));
}

TEST(Mxfp4Exact, MatchesDoubleWhenScalesAreClose) {
  // Scales within a few binades: the double sum is exact, so fp32(double) is the answer.
  Mxfp4Vector q(128), k(128);
  double expected = 0.0;
  const float values[] = {0.5f, -1.5f, 3.0f, 6.0f, -4.0f, 2.0f, -0.5f, 1.0f};
  for (int i = 0; i < 128; ++i) {
    const float a = values[i % 8], b = values[(i * 3 + 1) % 8];
    q.at(i, a);
    k.at(i, b);
    expected += double(a) * b * std::ldexp(1.0, (i / 32) - 2 + (i / 32 == 3 ? 3 : 0));
  }
  for (int blk = 0; blk < 4; ++blk) {
    q.scale(blk, blk - 2);
    k.scale(blk, blk == 3 ? 3 : 0);
  }
  EXPECT_SAME_FLOAT(float(expected), mxfp4(Model::exact, q, k, 128));
}

TEST(Mxfp4Models, RejectOtherModelsAndBadShapes) {
  Mxfp4Vector q(64), k(64);
  EXPECT_THROW(mxfp4(Model::sm90_wgmma_e4m3, q, k, 64), InvalidInput);
  EXPECT_THROW(mxfp4(kTc, q, k, 64), InvalidInput);  // kind::f8f6f4 reads e4m3 here, not e2m1
  Mxfp4Vector q32(32), k32(32);
  EXPECT_THROW(mxfp4(kMxf4, q32, k32, 32), InvalidInput);  // kind::mxf4 takes K = 64
  EXPECT_NO_THROW(mxfp4(Model::exact, q32, k32, 32));
}

}  // namespace
}  // namespace dsa::mma
