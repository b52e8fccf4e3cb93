// The reduction evaluator (profile.hpp) on small programs worked out by hand:
// fused against unfused steps, the per-head stage, NaN bits, program checks,
// dead-step removal, and bf16 steps that must round exactly once.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/profile.hpp"
#include "dsa/rng.hpp"
#include "profile_test_support.hpp"
#include "test_values.hpp"

namespace dsa {
namespace {

using StepOp = ReduceStep::Op;
using test::kInf;
using test::kNaN;

Profile custom(std::vector<ReduceStep> (*build)(int), Precision reduce = Precision::fp32) {
  Profile p;
  p.name = "test";
  p.elements = {ElementFormat::e4m3fn};
  p.build_reduction = build;
  p.reduce = reduce;
  p.logits = reduce;
  return p;
}

// One token per call: dots[h], weights[h], one scale (or none).
float eval1(const Profile& p, const std::vector<float>& dots, const std::vector<float>& weights, const float* scale) {
  const ReductionProgram program(p, int(dots.size()));
  float out = -1.0f;
  program.run(dots.data(), weights.data(), scale, 1, &out);
  return out;
}

float eval1(const Profile& p, const std::vector<float>& dots, const std::vector<float>& weights, float scale) {
  return eval1(p, dots, weights, &scale);
}

std::vector<ReduceStep> pair_chain_2(int) {
  std::vector<ReduceStep> prog;
  int32_t next = 0;
  reduce::fma_chain_from_pair(prog, next, {0, 1});
  return prog;
}

std::vector<ReduceStep> mul_add_2(int) {
  std::vector<ReduceStep> prog;
  int32_t next = 0;
  reduce::mul_add_chain(prog, next, {0, 1});
  return prog;
}

std::vector<ReduceStep> zero_chain_scaled(int heads) {
  std::vector<ReduceStep> prog;
  int32_t next = 0;
  std::vector<int> order;
  for (int h = 0; h < heads; ++h) order.push_back(h);
  reduce::scale(prog, next, reduce::fma_chain_from_zero(prog, next, order));
  return prog;
}

TEST(ProfileProgram, FusedStepRoundsOnceUnfusedTwice) {
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the 2^-24 is half an fp32 ulp at 1 and
  // rounds away (to even) when the product is rounded alone.
  const float a = 1.0f + 0x1p-12f;
  const std::vector<float> dots = {a, 1.0f};  // relu keeps both
  const std::vector<float> weights = {a, -1.0f};
  // pair: fma(w0, r0, RN(w1 * r1)) = RN(a^2 - 1) = 2^-11 + 2^-24 (exact).
  EXPECT_EQ(eval1(custom(pair_chain_2), dots, weights, nullptr), 0x1p-11f + 0x1p-24f);
  // unfused: RN(RN(a^2) + RN(-1)) = (1 + 2^-11) - 1 = 2^-11.
  EXPECT_EQ(eval1(custom(mul_add_2), dots, weights, nullptr), 0x1p-11f);
}

TEST(ProfileProgram, ReluScaleAndSequentialChain) {
  const Profile p = custom(zero_chain_scaled);
  // relu drops the negative head; 3 * 0.5 + 0 * 4 = 1.5; times 2.
  EXPECT_EQ(eval1(p, {3.0f, -2.0f}, {0.5f, 4.0f}, 2.0f), 3.0f);
  // No K scale (MXFP4 entries): the scale step passes its operand through.
  EXPECT_EQ(eval1(p, {3.0f, -2.0f}, {0.5f, 4.0f}, nullptr), 1.5f);
  // relu(-0) = +0: with a negative weight the product is -0, and -0 + -0 stays -0
  // only if the chain starts from -0; from +0 the sum is +0.
  const float z = eval1(p, {-0.0f}, {-1.0f}, 1.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(z), 0u);
}

TEST(ProfileProgram, ScaleBeforeReluIsRoundedFirst) {
  Profile p = custom(zero_chain_scaled);
  p.head_stage.scale_before_relu = true;
  // v = RN(dot * s) = RN((1 + 2^-23) * 3): 3 + 1.5 ulps, a tie, to even = 3 + 2^-21;
  // then w * v, then the final scale step multiplies by s again.
  const float dot = 1.0f + 0x1p-23f;
  const float v = dot * 3.0f;
  EXPECT_EQ(v, 3.0f + 0x1p-21f);
  EXPECT_EQ(eval1(p, {dot}, {1.0f}, 3.0f), v * 3.0f);
}

TEST(ProfileProgram, ReluOfNaNFollowsTheProfile) {
  Profile gpu = custom(zero_chain_scaled);
  EXPECT_EQ(eval1(gpu, {kNaN, 2.0f}, {1.0f, 1.0f}, 1.0f), 2.0f);  // fmaxf(NaN, 0) = 0
  Profile torch = gpu;
  torch.head_stage.relu_propagates_nan = true;
  EXPECT_TRUE(std::isnan(eval1(torch, {kNaN, 2.0f}, {1.0f, 1.0f}, 1.0f)));
}

TEST(ProfileProgram, NaNResultsCarryTheProfilesBits) {
  // inf - inf in the head sum: two rounded products that overflow.
  for (uint32_t bits : {0x7FFFFFFFu, 0xFFC00000u}) {
    Profile p = custom(mul_add_2);
    p.nan_bits = bits;
    const float out = eval1(p, {10.0f, 10.0f}, {3e38f, -3e38f}, nullptr);
    EXPECT_EQ(std::bit_cast<uint32_t>(out), bits);
  }
  // A fused chain never rounds the product: inf + (-3e39 exact) stays +inf.
  EXPECT_EQ(eval1(custom(zero_chain_scaled), {10.0f, 10.0f}, {3e38f, -3e38f}, 1.0f), kInf);
}

TEST(ProfileProgram, RunsABlockStepMajor) {
  const Profile p = custom(zero_chain_scaled);
  const int heads = 3, count = ReductionProgram::kBlock;
  const ReductionProgram program(p, heads);
  std::vector<float> dots(static_cast<size_t>(heads * count)), scales(static_cast<size_t>(count)), out(static_cast<size_t>(count));
  const std::vector<float> w = {0.25f, -2.0f, 8.0f};
  for (int t = 0; t < count; ++t) {
    for (int h = 0; h < heads; ++h) dots[size_t(h * count + t)] = float(t - 10 * h);
    scales[size_t(t)] = float(t % 3 + 1);
  }
  program.run(dots.data(), w.data(), scales.data(), count, out.data());
  for (int t = 0; t < count; ++t) {
    float acc = 0.0f;  // small integers times powers of two: every step exact
    for (int h = 0; h < heads; ++h) acc += w[size_t(h)] * std::max(0.0f, dots[size_t(h * count + t)]);
    EXPECT_EQ(out[size_t(t)], acc * scales[size_t(t)]) << "t = " << t;
  }
  EXPECT_THROW(program.run(dots.data(), w.data(), scales.data(), count + 1, out.data()), InvalidInput);
}

TEST(ProfileProgram, DeadStepsAreDroppedAndSlotsReused) {
  Profile p = custom(+[](int heads) {
    std::vector<ReduceStep> prog;
    int32_t next = 0;
    reduce::product(prog, next, 0);  // never read
    std::vector<int> order;
    for (int h = 0; h < heads; ++h) order.push_back(h);
    reduce::fma_chain_from_zero(prog, next, order);
    return prog;
  });
  const ReductionProgram program(p, 64);
  EXPECT_EQ(program.steps().size(), 65u);  // zero + 64 fma
  EXPECT_LE(program.num_slots(), 2);
  // A butterfly emits every pair; only lane 0's tree survives: 7 adds for 8 lanes.
  Profile b = custom(+[](int heads) {
    std::vector<ReduceStep> prog;
    int32_t next = 0;
    std::vector<int32_t> lanes;
    for (int h = 0; h < heads; ++h) lanes.push_back(reduce::product(prog, next, h));
    reduce::butterfly(prog, next, lanes, {4, 2, 1});
    return prog;
  });
  const ReductionProgram tree(b, 8);
  size_t adds = 0;
  for (const ReduceStep& s : tree.steps()) adds += s.op == StepOp::add;
  EXPECT_EQ(adds, 7u);
  // Lane 0 after distances 4, 2, 1: ((p0 + p4) + (p2 + p6)) + ((p1 + p5) + (p3 + p7)).
  const std::vector<float> dots = {1.0f, 0x1p-24f, 0x1p-24f, 0x1p-24f, -1.0f, 0x1p-24f, 0x1p-24f, 0x1p-24f};
  const std::vector<float> ones(8, 1.0f);
  // Products of negative dots are 0 after relu; the sums are exact here.
  EXPECT_EQ(eval1(b, dots, ones, nullptr), 1.0f + 6 * 0x1p-24f);
}

TEST(ProfileProgram, MalformedProgramsAreRejected) {
  const auto expect_bad = [](std::vector<ReduceStep> (*build)(int), int heads) {
    try {
      ReductionProgram program(custom(build), heads);
      ADD_FAILURE() << "accepted";
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.argument(), "profile") << e.what();
    }
  };
  expect_bad(+[](int) { return std::vector<ReduceStep>{}; }, 4);
  expect_bad(+[](int) { return std::vector<ReduceStep>{{StepOp::add, 0, 1, 2, -1}}; }, 4);          // reads unwritten
  expect_bad(+[](int) { return std::vector<ReduceStep>{{StepOp::product, 0, -1, -1, 4}}; }, 4);     // head out of range
  expect_bad(+[](int) { return std::vector<ReduceStep>{{StepOp::product, 0, -1, -1, -1}}; }, 4);    // no head
  expect_bad(+[](int) {
    return std::vector<ReduceStep>{{StepOp::zero, 0, -1, -1, -1}, {StepOp::fma, 0, 0, -1, 1}};        // writes twice
  }, 4);
  expect_bad(+[](int) { return std::vector<ReduceStep>{{StepOp::scale, 1, 1, -1, -1}}; }, 4);     // reads itself
  Profile none;
  none.name = "none";
  EXPECT_THROW(ReductionProgram(none, 8), InvalidInput);
}

// ---- bf16: one exact rounding per step.

Profile bf16_profile(std::vector<ReduceStep> (*build)(int)) {
  Profile p = custom(build, Precision::bf16);
  p.weights = Precision::bf16;
  return p;
}

TEST(ProfileProgramBf16, FmaRoundsTheExactSumOnce) {
  // w = r = 1 + 2^-4: w * r = 1 + 2^-3 + 2^-8, exactly halfway between the bf16
  // values 1.125 and 1.125 + 2^-7. The other term (2^-100 or -2^-100) decides;
  // a double (or fp32) fma first would make a tie and round to even (1.125).
  const float a = 1.0f + 0x1p-4f;
  const Profile p = bf16_profile(pair_chain_2);
  EXPECT_EQ(eval1(p, {a, 0x1p-50f}, {a, 0x1p-50f}, nullptr), 1.125f + 0x1p-7f);
  // relu removes a negative dot: feed the negative tiny term through a negative weight.
  EXPECT_EQ(eval1(p, {a, 0x1p-50f}, {a, -0x1p-50f}, nullptr), 1.125f);
  // With nothing beside the tie it goes to even.
  EXPECT_EQ(eval1(p, {a, 0.0f}, {a, 1.0f}, nullptr), 1.125f);
}

TEST(ProfileProgramBf16, ProductsRoundToBf16WithSubnormalsAndOverflow) {
  const Profile p = bf16_profile(+[](int) {
    std::vector<ReduceStep> prog;
    int32_t next = 0;
    reduce::product(prog, next, 0);
    return prog;
  });
  EXPECT_EQ(eval1(p, {0x1p-67f}, {0x1p-67f}, nullptr), 0.0f);                 // 2^-134: a tie, to even (0)
  EXPECT_EQ(eval1(p, {0x1p-67f}, {3 * 0x1p-68f}, nullptr), 0x1p-133f);        // 0.75 quantum -> 1
  EXPECT_EQ(eval1(p, {17 * 0x1p60f}, {15 * 0x1p60f}, nullptr), 255 * 0x1p120f);  // the largest bf16
  EXPECT_EQ(eval1(p, {73 * 0x1p59f}, {7 * 0x1p60f}, nullptr), kInf);            // (2 - 2^-8) 2^127 ties up
  EXPECT_EQ(eval1(p, {-73 * 0x1p59f}, {7 * 0x1p60f}, nullptr), 0.0f);           // relu
  // fp32 keeps the same product finite.
  const Profile f = custom(p.build_reduction);
  EXPECT_EQ(eval1(f, {73 * 0x1p59f}, {7 * 0x1p60f}, nullptr), 511 * 0x1p119f);
}

TEST(ProfileProgramBf16, ScaleIsCastToBf16AndWeightsMustBeBf16) {
  const Profile p = bf16_profile(zero_chain_scaled);
  // s = 1 + 2^-9 casts to 1; 3 * 1 stays 3 (an fp32 multiply would give 3 + 3 * 2^-9 -> 3.0058...).
  EXPECT_EQ(eval1(p, {3.0f}, {1.0f}, 1.0f + 0x1p-9f), 3.0f);
  // The head values are rounded to bf16 first when the stage says so:
  // r = 1 + 2^-8 + 2^-20 -> 1 + 2^-7, then 3 r = 3 + 2^-6 + 2^-7 is a tie -> 3 + 2^-5;
  // unrounded, 3 r = 3 + 2^-7 + 2^-8 + ... -> 3 + 2^-6.
  const float r = 1.0f + 0x1p-8f + 0x1p-20f;
  EXPECT_EQ(eval1(p, {r}, {3.0f}, 1.0f), 3.0f + 0x1p-6f);
  Profile q = p;
  q.head_stage.round_relu_to = Precision::bf16;
  EXPECT_EQ(eval1(q, {r}, {3.0f}, 1.0f), 3.0f + 0x1p-5f);
  try {
    eval1(p, {1.0f}, {1.0f + 0x1p-9f}, 1.0f);
    ADD_FAILURE() << "a non-bf16 weight was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "weights");
  }
}

TEST(ProfileProgramBf16, RandomFmaMatchesExactIntegerRounding) {
  const Profile p = bf16_profile(pair_chain_2);
  Rng rng(0x5eed);
  for (int i = 0; i < 20000; ++i) {
    const auto draw = [&](int lo, int hi) {
      const int e = lo + int(rng.next_u64() % uint64_t(hi - lo + 1));
      const float m = float(128 + rng.next_u64() % 128) / 128.0f;  // 8 significant bits
      return std::ldexp(m, e);
    };
    const float w0 = draw(-20, 20) * ((rng.next_u64() & 1) ? -1.0f : 1.0f), r0 = draw(-20, 20);
    const float c = draw(-30, 30) * ((rng.next_u64() & 1) ? -1.0f : 1.0f);  // the chain's first product, c * 1
    const float expected = test::bf16_fma_exact(w0, r0, c);
    const float got = eval1(p, {r0, 1.0f}, {w0, c}, nullptr);
    ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(expected))
        << w0 << " * " << r0 << " + " << c << " (i = " << i << ")";
  }
}

}  // namespace
}  // namespace dsa
