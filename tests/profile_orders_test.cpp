// Each named profile's program against its order written out directly from
// SPEC 8 (and the profile's stated assumptions), lane by lane as the GPU runs
// it, on random per-head values: the data-driven programs must compute
// exactly these bits. Also the registry and the profile checks.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/profile.hpp"
#include "dsa/rng.hpp"
#include "profile_test_support.hpp"

namespace dsa {
namespace {

float relu(float x) { return x > 0.0f ? x : 0.0f; }

// SPEC 8, DeepGEMM SM90: four lanes of a quad, then shfl xor 1 and xor 2.
float deepgemm_sm90_direct(const std::vector<float>& d, const std::vector<float>& w, float s) {
  const int H = int(d.size()), G = H / 8;
  float lane[4];
  for (int q = 0; q < 4; ++q) {
    if (G == 1) {
      lane[q] = std::fma(w[2 * q], relu(d[2 * q]), w[2 * q + 1] * relu(d[2 * q + 1])) * s;
      continue;
    }
    float part[2];
    for (int odd = 0; odd < 2; ++odd) {
      const auto h = [&](int g) { return 8 * g + 2 * q + odd; };
      float acc = std::fma(w[h(0)], relu(d[h(0)]), w[h(1)] * relu(d[h(1)]));
      for (int g = 2; g < G; ++g) acc = std::fma(w[h(g)], relu(d[h(g)]), acc);
      part[odd] = acc;
    }
    lane[q] = (part[0] + part[1]) * s;
  }
  for (int dist : {1, 2}) {
    float next[4];
    for (int q = 0; q < 4; ++q) next[q] = lane[q] + lane[q ^ dist];
    std::copy(next, next + 4, lane);
  }
  return lane[0];
}

// SPEC 8, DeepGEMM SM100 fp32: float2 fma chains, t = sum_0 + sum_1, s * (t.x + t.y).
float deepgemm_sm100_direct(const std::vector<float>& d, const std::vector<float>& w, float s) {
  float s0x = 0, s0y = 0, s1x = 0, s1y = 0;
  for (size_t j = 0; j < d.size(); j += 4) {
    s0x = std::fma(relu(d[j]), w[j], s0x);
    s0y = std::fma(relu(d[j + 1]), w[j + 1], s0y);
    s1x = std::fma(relu(d[j + 2]), w[j + 2], s1x);
    s1y = std::fma(relu(d[j + 3]), w[j + 3], s1y);
  }
  const float tx = s0x + s1x, ty = s0y + s1y;
  return s * (tx + ty);
}

// The same in bf16: relu -> bf16, __hfma2, __hadd2, __hadd, times bf16(s).
float deepgemm_sm100_bf16_direct(const std::vector<float>& d, const std::vector<float>& w, float s) {
  using test::bf16_add_exact;
  using test::bf16_fma_exact;
  float sum[4] = {0, 0, 0, 0};
  for (size_t j = 0; j < d.size(); j += 4)
    for (int c = 0; c < 4; ++c) sum[c] = bf16_fma_exact(round_to_bf16(relu(d[j + c])), w[j + c], sum[c]);
  const float tx = bf16_add_exact(sum[0], sum[2]), ty = bf16_add_exact(sum[1], sum[3]);
  return test::bf16_mul_exact(bf16_add_exact(tx, ty), round_to_bf16(s));
}

// AITER (the profile's assumption): per head RN(relu(RN(dot * s)) * w); lane
// group g sums heads 16 rep + 4g + i in order; shuffles at 32 then 16 lanes.
float aiter_direct(const std::vector<float>& d, const std::vector<float>& w, float s) {
  const int H = int(d.size());
  float group[4];
  for (int g = 0; g < 4; ++g) {
    bool first = true;
    for (int rep = 0; rep < H / 16; ++rep)
      for (int i = 0; i < 4; ++i) {
        const int h = 16 * rep + 4 * g + i;
        const float p = relu(d[h] * s) * w[h];
        group[g] = first ? p : group[g] + p;
        first = false;
      }
  }
  // 64 lanes, lane l in group l / 16: xor 32 then xor 16, read lane 0.
  float lanes[64];
  for (int l = 0; l < 64; ++l) lanes[l] = group[l / 16];
  for (int dist : {32, 16}) {
    float next[64];
    for (int l = 0; l < 64; ++l) next[l] = lanes[l] + lanes[l ^ dist];
    std::copy(next, next + 64, lanes);
  }
  return lanes[0];
}

// vLLM C4A (the profile's assumption): per warp of 32 heads a lane butterfly
// 16, 8, 4, 2, 1 of RN(relu(dot) * w); warps added in order; times s.
float vllm_c4a_direct(const std::vector<float>& d, const std::vector<float>& w, float s) {
  float total = 0.0f;
  for (size_t warp = 0; warp < d.size() / 32; ++warp) {
    float lanes[32];
    for (int l = 0; l < 32; ++l) lanes[l] = relu(d[32 * warp + l]) * w[32 * warp + l];
    for (int dist : {16, 8, 4, 2, 1}) {
      float next[32];
      for (int l = 0; l < 32; ++l) next[l] = lanes[l] + lanes[l ^ dist];
      std::copy(next, next + 32, lanes);
    }
    total = warp == 0 ? lanes[0] : total + lanes[0];
  }
  return total * s;
}

float exact_direct(const std::vector<float>& d, const std::vector<float>& w, float s) {
  float acc = 0.0f;
  for (size_t h = 0; h < d.size(); ++h) acc = std::fma(w[h], relu(d[h]), acc);
  return acc * s;
}

struct Case {
  const char* profile;
  std::vector<int> heads;
  float (*direct)(const std::vector<float>&, const std::vector<float>&, float);
  bool bf16;
};

// Names the case in test listings instead of dumping its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.profile; }

class ProfileOrder : public ::testing::TestWithParam<Case> {};

TEST_P(ProfileOrder, ProgramEqualsTheOrderWrittenOut) {
  const Case& c = GetParam();
  const Profile& p = find_profile(c.profile);
  Rng rng(std::hash<std::string>{}(c.profile));
  const auto uniform = [&] { return float(double(rng.next_u64() >> 11) * 0x1p-53); };
  for (int heads : c.heads) {
    int differs_from_exact = 0;
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<float> d(static_cast<size_t>(heads)), w(static_cast<size_t>(heads));
      for (int h = 0; h < heads; ++h) {
        // Dots of both signs with full fp32 significands; weights over a wide range
        // (cancellation); bf16 profiles get bf16 weights.
        d[size_t(h)] = std::ldexp(uniform() - 0.3f, int(rng.next_u64() % 12));
        w[size_t(h)] = std::ldexp(uniform() * 2 - 1, int(rng.next_u64() % 17) - 8);
        if (c.bf16) w[size_t(h)] = round_to_bf16(w[size_t(h)]);
      }
      const float s = std::ldexp(1.0f + uniform(), int(rng.next_u64() % 8) - 4);
      const float want = c.direct(d, w, s);
      const float got = test::reduce_one(p, d, w, &s);
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want))
          << c.profile << " H = " << heads << " trial " << trial << ": " << got << " vs " << want;
      differs_from_exact += std::bit_cast<uint32_t>(got) != std::bit_cast<uint32_t>(exact_direct(d, w, s));
    }
    // The orders are really different (except the exact profile itself).
    if (std::string(c.profile) != "exact") {
      EXPECT_GT(differs_from_exact, 0) << c.profile << " H = " << heads;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Profiles, ProfileOrder,
    ::testing::Values(Case{"exact", {8, 16, 32, 64}, exact_direct, false},
                      Case{"deepgemm_sm90", {8, 16, 32, 64}, deepgemm_sm90_direct, false},
                      Case{"deepgemm_sm100", {8, 16, 32, 64}, deepgemm_sm100_direct, false},
                      Case{"deepgemm_sm100_bf16", {8, 16, 32, 64}, deepgemm_sm100_bf16_direct, true},
                      Case{"aiter_gfx942_gluon", {32, 64}, aiter_direct, false},
                      Case{"dsa_gfx942", {32, 64}, aiter_direct, false},
                      Case{"vllm_triton_c4a", {32, 64}, vllm_c4a_direct, false},
                      // Our SM90 kernels write DeepGEMM's order (epilogue/head_sum.cuh).
                      Case{"dsa_sm90", {8, 16, 32, 64}, deepgemm_sm90_direct, false},
                      Case{"dsa_sm90_accurate", {8, 16, 32, 64}, deepgemm_sm90_direct, false}),
    [](const auto& info) { return std::string(info.param.profile); });

TEST(ProfileRegistry, NamesFindAndChecks) {
  const std::vector<std::string> names = profile_names();
  const std::vector<std::string> expected = {"exact", "deepgemm_sm90", "deepgemm_sm100", "deepgemm_sm100_bf16",
                                             "aiter_gfx942_gluon", "dsa_gfx942", "vllm_triton_c4a",
                                             "dsa_sm90", "dsa_sm90_accurate"};
  EXPECT_EQ(names, expected);
  for (const std::string& n : names) {
    const Profile& p = find_profile(n);
    EXPECT_EQ(p.name, n);
    EXPECT_FALSE(p.origin.empty());
    EXPECT_TRUE(p.build_reduction != nullptr);
    EXPECT_FALSE(p.elements.empty());
  }
  try {
    find_profile("deepgemm_sm80");
    ADD_FAILURE();
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "profile");
    EXPECT_NE(std::string(e.what()).find("deepgemm_sm90"), std::string::npos) << "lists the known names";
  }
  const Profile& sm90 = find_profile("deepgemm_sm90");
  EXPECT_TRUE(sm90.accepts(ElementFormat::e4m3fn));
  EXPECT_FALSE(sm90.accepts(ElementFormat::e4m3fnuz));
  EXPECT_THROW(sm90.require(ElementFormat::mxfp4), InvalidInput);
  EXPECT_NO_THROW(find_profile("deepgemm_sm100_bf16").require(ElementFormat::mxfp4));
  EXPECT_TRUE(find_profile("aiter_gfx942_gluon").accepts(ElementFormat::e4m3fnuz));
  EXPECT_EQ(find_profile("deepgemm_sm90").mma, mma::Model::sm90_wgmma_e4m3);
  EXPECT_EQ(find_profile("vllm_triton_c4a").mma, mma::Model::cdna3_mfma_f32_32x32x16_fp8);
}

TEST(ProfileRegistry, HeadCountsTheKernelsDoNotTake) {
  const auto rejects = [](const char* name, int heads) {
    try {
      ReductionProgram program(find_profile(name), heads);
      return false;
    } catch (const InvalidInput& e) {
      return e.argument() == "heads";
    }
  };
  EXPECT_TRUE(rejects("deepgemm_sm90", 12));
  EXPECT_TRUE(rejects("deepgemm_sm100", 6));
  EXPECT_TRUE(rejects("aiter_gfx942_gluon", 16));
  EXPECT_TRUE(rejects("dsa_gfx942", 16));
  EXPECT_TRUE(rejects("vllm_triton_c4a", 8));
  EXPECT_TRUE(rejects("exact", 0));
  EXPECT_FALSE(rejects("exact", 7));
}

TEST(ProfileRegistry, Bf16WeightsAreChecked) {
  const Profile& bf16 = find_profile("deepgemm_sm100_bf16");
  const std::vector<float> ok = {1.0f, -0.5f, 3.0f, 0x1p-100f};
  EXPECT_NO_THROW(bf16.require_weights(ok, 2));
  const std::vector<float> bad = {1.0f, -0.5f, 3.0f, 1.0f + 0x1p-10f};
  try {
    bf16.require_weights(bad, 2);
    ADD_FAILURE();
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "weights");
    EXPECT_NE(std::string(e.what()).find("weights[1][1]"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(find_profile("deepgemm_sm90").require_weights(bad, 2));
}

}  // namespace
}  // namespace dsa
