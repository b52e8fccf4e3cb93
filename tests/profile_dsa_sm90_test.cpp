// The profiles of our own SM90 kernels: dsa_sm90 is deepgemm_sm90's arithmetic; dsa_sm90_accurate
// promotes every k32 wgmma result into fp32 (each slice from zero, one RN add per step), written
// out here directly with the wgmma model, and it is really a different (closer) arithmetic.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "dsa/logits.hpp"
#include "dsa/mma/models.hpp"
#include "dsa/profile.hpp"
#include "dsa/synthetic.hpp"

namespace dsa {
namespace {

DecodeProblem step(uint64_t seed, int32_t head_dim) {
  Rng rng(seed);
  SyntheticDecodeConfig c;
  c.batch = 2;
  c.next_n = 2;
  c.heads = 32;
  c.head_dim = head_dim;
  c.seq_lens = {70, 150};
  return make_decode_problem(c, rng);
}

TEST(DsaSm90Profile, StandardIsDeepGemmSm90) {
  const DecodeProblem p = step(1, 128);
  const Logits a = decode_logits(p, find_profile("dsa_sm90")).logits;
  const Logits b = decode_logits(p, find_profile("deepgemm_sm90")).logits;
  ASSERT_EQ(a.values.size(), b.values.size());
  for (size_t i = 0; i < a.values.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(a.values[i]), std::bit_cast<uint32_t>(b.values[i])) << i;
  EXPECT_EQ(find_profile("dsa_sm90").accumulation, mma::Accumulation::chained);
}

// same_arithmetic: the registry names two datapaths twice, our kernels' profiles copying the kernels they
// come from (dsa_sm90 = deepgemm_sm90, dsa_gfx942 = aiter_gfx942_gluon); any part of a profile that
// changes a bit makes two profiles different.
TEST(DsaSm90Profile, SameArithmeticIsTheTwinAndNothingElse) {
  const std::vector<std::string> names = profile_names();
  const auto pair = [](const std::string& a, const std::string& b, const char* x, const char* y) {
    return (a == x && b == y) || (a == y && b == x);
  };
  for (const std::string& a : names) {
    for (const std::string& b : names) {
      const bool twins = pair(a, b, "dsa_sm90", "deepgemm_sm90") || pair(a, b, "dsa_gfx942", "aiter_gfx942_gluon");
      EXPECT_EQ(same_arithmetic(find_profile(a), find_profile(b)), a == b || twins) << a << " / " << b;
    }
  }
  const Profile& base = find_profile("dsa_sm90");
  const auto differs = [&](const char* what, auto&& change) {
    Profile p = base;
    change(p);
    EXPECT_FALSE(same_arithmetic(base, p)) << what;
    EXPECT_FALSE(same_arithmetic(p, base)) << what;
  };
  differs("accumulation", [](Profile& p) { p.accumulation = mma::Accumulation::promoted; });
  differs("model", [](Profile& p) { p.mma = mma::Model::exact; });
  differs("formats", [](Profile& p) { p.elements.push_back(ElementFormat::e4m3fnuz); });
  differs("scale before relu", [](Profile& p) { p.head_stage.scale_before_relu = true; });
  differs("nan propagation", [](Profile& p) { p.head_stage.relu_propagates_nan = true; });
  differs("nan bits", [](Profile& p) { p.nan_bits = 0xFFC00000u; });
  differs("logits precision", [](Profile& p) { p.logits = Precision::bf16; });
  differs("K scale", [](Profile& p) { p.applies_k_scale = false; });
  // Another program at one H only (the exact profile's at H 64): the heads are all compared.
  differs("program at H 64", [](Profile& p) {
    p.build_reduction = [](int heads) {
      return heads == 64 ? find_profile("exact").build_reduction(heads) : find_profile("dsa_sm90").build_reduction(heads);
    };
  });
  differs("D order", [](Profile& p) { p.dim_order = find_profile("dsa_gfx942").dim_order; });
  Profile renamed = base;
  renamed.name = "renamed";
  renamed.origin = "elsewhere";
  EXPECT_TRUE(same_arithmetic(base, renamed)) << "names and origins are not arithmetic";
}

// One head's dot the accurate way: slice s of 32 codes is one wgmma from zero; RN adds in order.
float promoted_dot(const uint8_t* q, const uint8_t* k, int head_dim) {
  float acc = 0.0f;
  for (int s = 0; s < head_dim / 32; ++s) {
    const float d = mma::instruction(mma::Model::sm90_wgmma_e4m3, q + 32 * s, k + 32 * s, 0.0f, false);
    acc = s == 0 ? d : acc + d;
  }
  return acc;
}

TEST(DsaSm90Profile, AccurateDotsArePromotedPerInstruction) {
  for (int32_t head_dim : {128, 64}) {
    const DecodeProblem p = step(2 + head_dim, head_dim);
    const Profile& accurate = find_profile("dsa_sm90_accurate");
    const Logits got = decode_logits(p, accurate).logits;
    // The same head sum over directly promoted dots.
    const ReductionProgram program(accurate, p.heads);
    const auto lens = visible_lens(p);
    int64_t differs_from_chained = 0, compared = 0;
    const Logits chained = decode_logits(p, find_profile("dsa_sm90")).logits;
    for (int64_t row = 0; row < p.rows(); ++row) {
      const int64_t b = row / p.next_n;
      const uint8_t* q = p.q.data() + size_t(row) * p.heads * head_dim;
      for (int64_t n = 0; n < lens[size_t(row)]; ++n) {
        const int32_t page = p.block_table[size_t(b * p.max_pages + n / p.cache.block_size)];
        const int32_t slot = int32_t(n % p.cache.block_size);
        const uint8_t* base = p.cache.bytes.data() + size_t(page) * p.cache.page_bytes();
        const uint8_t* k = base + p.cache.value_offset(slot, 0);
        float scale;
        std::memcpy(&scale, base + p.cache.scale_offset(slot), 4);
        std::vector<float> dots(size_t(p.heads));
        for (int32_t h = 0; h < p.heads; ++h) dots[size_t(h)] = promoted_dot(q + h * head_dim, k, head_dim);
        float want;
        program.run(dots.data(), p.weights.data() + size_t(row) * p.heads, &scale, 1, &want);
        ASSERT_EQ(std::bit_cast<uint32_t>(got.at(row, n)), std::bit_cast<uint32_t>(want))
            << "D " << head_dim << " row " << row << " entry " << n;
        differs_from_chained += got.at(row, n) != chained.at(row, n);
        ++compared;
      }
    }
    EXPECT_GT(compared, 200);
    EXPECT_GT(differs_from_chained, 0) << "D " << head_dim << ": promotion changes some logits";
  }
}

TEST(DsaSm90Profile, AccurateIsCloserToTheExactSum) {
  const DecodeProblem p = step(9, 128);
  LogitsOptions with_double;
  with_double.with_double = true;
  const LogitsResult chained = decode_logits(p, find_profile("dsa_sm90"), with_double);
  const Logits accurate = decode_logits(p, find_profile("dsa_sm90_accurate")).logits;
  double err_chained = 0, err_accurate = 0;
  const auto lens = visible_lens(p);
  for (int64_t row = 0; row < p.rows(); ++row)
    for (int64_t n = 0; n < lens[size_t(row)]; ++n) {
      const double exact = chained.exact_double[size_t(row * p.logits_width + n)];
      err_chained += std::abs(chained.logits.at(row, n) - exact);
      err_accurate += std::abs(accurate.at(row, n) - exact);
    }
  EXPECT_LT(err_accurate, err_chained);
}

}  // namespace
}  // namespace dsa
