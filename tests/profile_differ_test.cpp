// Profiles give different bits where their datapaths differ (cancellation in
// the head sum, dot products the wgmma truncates) and the same value where
// they cannot differ (exact dot products, one head with a nonzero weight,
// power-of-two weight and scale): on per-head values through the reduction
// programs, and end to end through decode_logits.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dsa/formats.hpp"
#include "dsa/kcache.hpp"
#include "dsa/logits.hpp"
#include "dsa/profile.hpp"
#include "dsa/rng.hpp"
#include "profile_test_support.hpp"

namespace dsa {
namespace {

const std::vector<std::string> kAll = {"exact",          "deepgemm_sm90",      "deepgemm_sm100",
                                       "deepgemm_sm100_bf16", "aiter_gfx942_gluon", "dsa_gfx942",
                                       "vllm_triton_c4a"};

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

TEST(ProfilesDiffer, CancellationInTheHeadSumWorkedByHand) {
  // d_h = 1 for all 64 heads; w_0 = 2^24, w_2 = 1, w_8 = -2^24, the rest 0; s = 1.
  //  exact (0, 1, 2, ...): 2^24 + 1 rounds back to 2^24 (tie to even), - 2^24 = 0.
  //  aiter: heads 0 and 2 share lane group 0 (same loss), head 8 is group 2: 0.
  //  deepgemm_sm90: heads 0 and 8 are lane 0's even partial and cancel first;
  //    head 2 is lane 1's: 1. deepgemm_sm100(_bf16): heads 0, 8 in chain 0, head 2 in chain 2: 1.
  //  vllm: 2^24 and -2^24 meet at butterfly distance 8, head 2 joins at 2: 1.
  std::vector<float> d(64, 1.0f), w(64, 0.0f);
  w[0] = 0x1p24f;
  w[2] = 1.0f;
  w[8] = -0x1p24f;
  const float s = 1.0f;
  const std::vector<std::pair<std::string, float>> expected = {
      {"exact", 0.0f},          {"aiter_gfx942_gluon", 0.0f}, {"dsa_gfx942", 0.0f}, {"deepgemm_sm90", 1.0f},
      {"deepgemm_sm100", 1.0f}, {"deepgemm_sm100_bf16", 1.0f}, {"vllm_triton_c4a", 1.0f}};
  for (const auto& [name, value] : expected)
    EXPECT_EQ(bits(test::reduce_one(find_profile(name), d, w, &s)), bits(value)) << name;
}

TEST(ProfilesDiffer, OneHeadPowerOfTwoWeightAndScaleAgreeEverywhere) {
  Rng rng(17);
  for (int trial = 0; trial < 500; ++trial) {
    const int heads = (trial % 2) ? 64 : 32;
    std::vector<float> d(static_cast<size_t>(heads)), w(static_cast<size_t>(heads), 0.0f);
    for (auto& v : d) v = std::ldexp(float(int(rng.next_u64() % 511) - 255), int(rng.next_u64() % 20) - 10);
    const size_t h = rng.next_u64() % size_t(heads);
    w[h] = std::ldexp((rng.next_u64() & 1) ? -1.0f : 1.0f, int(rng.next_u64() % 16) - 8);
    const float s = std::ldexp(1.0f, int(rng.next_u64() % 16) - 8);
    const float want = w[h] * std::max(d[h], 0.0f) * s;  // exact: 8 significant bits times powers of two
    for (const std::string& name : kAll)
      ASSERT_EQ(test::reduce_one(find_profile(name), d, w, &s), want) << name << " trial " << trial;
  }
}

// ---- End to end through decode_logits.

struct TinyDecode {
  DecodeProblem p;
  // q code of (head, d) and K code of (entry, d) from the values given.
  TinyDecode(ElementFormat e, int heads, int entries, float (*q_value)(int, int), float (*k_value)(int, int),
             const std::vector<float>& weights, float (*scale)(int)) {
    const int D = 128, B = 64, pages = (entries + B - 1) / B;
    const Fp8Format f = fp8_of(e);
    p.batch = 1;
    p.next_n = 1;
    p.heads = heads;
    p.head_dim = D;
    p.element = e;
    for (int h = 0; h < heads; ++h)
      for (int d = 0; d < D; ++d) p.q.push_back(float_to_fp8(f, q_value(h, d)));
    p.weights = weights;
    p.seq_lens = {entries};
    p.max_pages = pages;
    for (int i = 0; i < pages; ++i) p.block_table.push_back(pages - 1 - i);  // pages in reverse
    p.logits_width = entries;
    p.cache = make_kcache(CacheLayout::block_flat, e, pages, B, D);
    for (int n = 0; n < entries; ++n) {
      uint8_t* page = p.cache.bytes.data() + size_t(p.block_table[size_t(n / B)]) * p.cache.page_bytes();
      for (int d = 0; d < D; ++d) page[p.cache.value_offset(n % B, d)] = float_to_fp8(f, k_value(n, d));
      const float s = scale(n);
      std::memcpy(page + p.cache.scale_offset(n % B), &s, 4);
    }
  }
};

// Small integers: every q.k is an integer below 2^11, exact in every model.
float small_q(int h, int d) { return float((h * 7 + d * 3) % 7 - 3); }
float small_k(int n, int d) { return float((n * 5 + d * 11) % 9 - 4); }
float pow2_scale(int n) { return std::ldexp(1.0f, n % 5 - 2); }

TEST(ProfilesDiffer, ExactDotsOneHeadAgreeThroughDecodeLogits) {
  std::vector<float> w(64, 0.0f);
  w[37] = -0.25f;  // relu'd dots of both signs; a negative weight
  for (ElementFormat e : {ElementFormat::e4m3fn, ElementFormat::e4m3fnuz}) {
    const TinyDecode t(e, 64, 200, small_q, small_k, w, pow2_scale);
    std::vector<std::string> names;
    for (const std::string& n : kAll)
      if (find_profile(n).accepts(e) && find_profile(n).reduce == Precision::fp32) names.push_back(n);
    ASSERT_GE(names.size(), 3u);
    const Logits first = decode_logits(t.p, find_profile(names[0])).logits;
    int nonzero = 0;
    for (int64_t n = 0; n < 200; ++n) nonzero += first.at(0, n) != 0.0f;
    EXPECT_GT(nonzero, 50) << "the test must not pass on zeros";
    for (const std::string& name : names) {
      const Logits other = decode_logits(t.p, find_profile(name)).logits;
      for (int64_t n = 0; n < 200; ++n)
        ASSERT_EQ(other.at(0, n), first.at(0, n)) << name << " vs " << names[0] << " at " << n;
    }
  }
}

// bf16 profiles agree too when each dot has at most 8 significant bits: one
// nonzero element per head.
float sparse_q(int h, int d) { return d == h % 128 ? float(h % 5 + 1) : 0.0f; }

TEST(ProfilesDiffer, SingleProductDotsAgreeWithTheBf16Profile) {
  std::vector<float> w(64, 0.0f);
  w[5] = 2.0f;
  const TinyDecode t(ElementFormat::e4m3fn, 64, 130, sparse_q, small_k, w, pow2_scale);
  const Logits exact = decode_logits(t.p, find_profile("exact")).logits;
  for (const char* name : {"deepgemm_sm90", "deepgemm_sm100", "deepgemm_sm100_bf16"}) {
    const Logits other = decode_logits(t.p, find_profile(name)).logits;
    for (int64_t n = 0; n < 130; ++n) ASSERT_EQ(other.at(0, n), exact.at(0, n)) << name << " at " << n;
  }
}

float random_weight_row_seeded(int h) { return std::ldexp(float((h * 2654435761u) % 1000) / 500.0f - 1.0f, h % 9 - 4); }

TEST(ProfilesDiffer, OrdersDifferThroughDecodeLogits) {
  std::vector<float> w(64);
  for (int h = 0; h < 64; ++h) w[size_t(h)] = random_weight_row_seeded(h);
  const TinyDecode t(ElementFormat::e4m3fn, 64, 256, small_q, small_k, w, +[](int n) { return 0.75f + n / 512.0f; });
  const Logits exact = decode_logits(t.p, find_profile("exact")).logits;
  const Logits sm90 = decode_logits(t.p, find_profile("deepgemm_sm90")).logits;
  const Logits sm100 = decode_logits(t.p, find_profile("deepgemm_sm100")).logits;
  int differ90 = 0, differ100 = 0;
  for (int64_t n = 0; n < 256; ++n) {
    differ90 += bits(sm90.at(0, n)) != bits(exact.at(0, n));
    differ100 += bits(sm100.at(0, n)) != bits(sm90.at(0, n));
  }
  EXPECT_GT(differ90, 0);
  EXPECT_GT(differ100, 0);
}

TEST(ProfilesDiffer, WgmmaTruncatesASmallTermTheExactDotKeeps) {
  // Head 0: q = (256, 2^-6, 0, ...), every K = (1, 2^-6, 0, ...). The exact dot is
  // 256 + 2^-12 (an fp32 value); the wgmma aligns to 2^8 and keeps 13 bits below:
  // 2^-12 < 2^-5 is truncated away. One head, w = 1, s = 1.
  std::vector<float> w(64, 0.0f);
  w[0] = 1.0f;
  const TinyDecode t(
      ElementFormat::e4m3fn, 64, 64, +[](int h, int d) { return h == 0 && d < 2 ? (d == 0 ? 256.0f : 0x1p-6f) : 0.0f; },
      +[](int, int d) { return d == 0 ? 1.0f : d == 1 ? 0x1p-6f : 0.0f; }, w, +[](int) { return 1.0f; });
  const Logits exact = decode_logits(t.p, find_profile("exact")).logits;
  const Logits sm90 = decode_logits(t.p, find_profile("deepgemm_sm90")).logits;
  const Logits sm100 = decode_logits(t.p, find_profile("deepgemm_sm100")).logits;
  for (int64_t n = 0; n < 64; ++n) {
    EXPECT_EQ(exact.at(0, n), 256.0f + 0x1p-12f);
    EXPECT_EQ(sm90.at(0, n), 256.0f);
    EXPECT_EQ(sm100.at(0, n), 256.0f + 0x1p-12f);  // 25 bits keep it
  }
}

}  // namespace
}  // namespace dsa
