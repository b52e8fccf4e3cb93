// The top-k twins (cpu_radix_topk, cpu_persistent_topk) under the oracle's
// top-k rule and "every entry written", on every value kind that breaks radix
// selects, lengths around k, prefill-style bounds, and configurations scaled
// down so that small rows reach every pass and every path.
#include <gtest/gtest.h>

#include <functional>

#include "dsa/error.hpp"
#include "dsa/optimized/persistent_topk.hpp"
#include "dsa/optimized/radix_topk.hpp"
#include "dsa/oracle/determinism_check.hpp"
#include "twins_test_support.hpp"

namespace dsa::optimized {
namespace {

using namespace dsa::twins_testing;

struct Twin {
  std::string label;
  std::function<std::unique_ptr<IndexerOps>()> make;
};

// The real configurations, and ones scaled so that rows of tens of columns
// overflow the bounded buffers and take the radix paths.
std::vector<Twin> twins() {
  return {
      {"radix", [] { return make_cpu_radix_topk(); }},
      {"radix_capacity_1", [] { return make_cpu_radix_topk({.final_capacity = 1, .num_sms = 3}); }},
      {"radix_capacity_5", [] { return make_cpu_radix_topk({.final_capacity = 5, .num_sms = 1}); }},
      {"persistent", [] { return make_cpu_persistent_topk(); }},
      {"persistent_scaled",
       [] { return make_cpu_persistent_topk({.num_blocks = 2, .radix_min_len = 40, .candidate_capacity = 6}); }},
      {"persistent_one_block",
       [] { return make_cpu_persistent_topk({.num_blocks = 1, .radix_min_len = 20, .candidate_capacity = 3}); }},
  };
}

void expect_correct_on(const Twin& twin, const std::vector<int64_t>& lens, int64_t width, int k, RowKind kind,
                       uint64_t seed, int64_t start = 0) {
  Rng rng(seed);
  const TopkCase c = make_case(lens, width, kind, rng, start);
  auto ops = twin.make();
  const TopkIndices t = run_topk(*ops, c.logits, c.bounds, k);
  EXPECT_TRUE(topk_correct(t, c.logits, c.bounds)) << twin.label << ", " << to_string(kind) << ", k " << k
                                                   << ", seed " << seed;
}

TEST(TwinTopk, LengthsAroundKOnEveryValueKind) {
  for (const Twin& twin : twins())
    for (const RowKind kind : kAllRowKinds)
      for (const int k : {1, 7, 32}) {
        const std::vector<int64_t> lens = {0, 1, k - 1, k, k + 1, 2 * k, 3 * k + 5, 97, 300, 64};
        expect_correct_on(twin, lens, 320, k, kind, 1000 + uint64_t(k) * 31 + uint64_t(kind));
      }
}

TEST(TwinTopk, PrefillBoundsCountFromTheRowStart) {
  for (const Twin& twin : twins())
    for (const RowKind kind : {RowKind::normal, RowKind::quantized, RowKind::nan_heavy})
      expect_correct_on(twin, {50, 17, 120, 0, 3}, 200, 16, kind, 77 + uint64_t(kind), 37);
}

TEST(TwinTopk, LongRowsTakeTheRealPaths) {
  // 40000 columns: top_k_per_row's real 2048-entry buffer, persistent_topk's radix path.
  for (const Twin& twin : twins())
    for (const RowKind kind : {RowKind::normal, RowKind::quantized, RowKind::one_coarse_bin, RowKind::nan_heavy})
      expect_correct_on(twin, {40000, 20000, 2049}, 40000, 2048, kind, 5 + uint64_t(kind));
}

TEST(TwinTopk, ManyRandomRows) {
  // Random lengths and kinds, many rows per call (rows share SMs and blocks).
  Rng pick(2024);
  for (const Twin& twin : twins())
    for (int trial = 0; trial < 40; ++trial) {
      const int k = int(pick.uniform_int(1, 40));
      std::vector<int64_t> lens;
      for (int r = 0; r < 37; ++r) lens.push_back(pick.uniform_int(0, 150));
      const RowKind kind = kAllRowKinds[pick.uniform_int(0, std::size(kAllRowKinds) - 1)];
      expect_correct_on(twin, lens, 150, k, kind, pick.next_u64());
    }
}

TEST(TwinTopk, TwoLaunchesChooseTheSameSets) {
  for (const Twin& twin : twins()) {
    Rng rng(9);
    const TopkCase c = make_case({200, 150, 90, 33}, 200, RowKind::quantized, rng);
    auto ops = twin.make();
    const TopkIndices first = run_topk(*ops, c.logits, c.bounds, 20);
    const TopkIndices second = run_topk(*ops, c.logits, c.bounds, 20);
    auto fresh = twin.make();
    const TopkIndices third = run_topk(*fresh, c.logits, c.bounds, 20);
    EXPECT_TRUE(oracle::check_determinism(oracle::view(first), oracle::view(second)).passed) << twin.label;
    EXPECT_TRUE(oracle::check_determinism(oracle::view(first), oracle::view(third)).passed) << twin.label;
  }
}

TEST(TwinTopk, TiesAtTheCutGoToTheFirstInScanOrder) {
  // Ten equal values, k = 4: the GPU's first-come order is scan order here.
  for (const Twin& twin : twins()) {
    Logits l{1, 10, std::vector<float>(10, 0.25f)};
    l.values[7] = 1.0f;
    const RowBounds b{{0}, {10}};
    auto ops = twin.make();
    const TopkIndices t = run_topk(*ops, l, b, 4);
    std::vector<int32_t> got(t.indices);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2, 7})) << twin.label;
  }
}

TEST(TwinTopk, RejectsBadCalls) {
  auto ops = make_cpu_radix_topk();
  Logits l{2, 8, std::vector<float>(16, 0.0f)};
  TopkIndices out{2, 4, std::vector<int32_t>(8)};
  EXPECT_THROW(ops->topk(l, RowBounds{{0, 0}, {8, 9}}, out), InvalidInput);
  EXPECT_THROW(ops->topk(l, RowBounds{{0}, {8}}, out), InvalidInput);
  TopkIndices zero_k{2, 0, {}};
  EXPECT_THROW(ops->topk(l, RowBounds{{0, 0}, {8, 8}}, zero_k), InvalidInput);
  EXPECT_THROW(make_cpu_radix_topk({.final_capacity = 0}), InvalidInput);
  EXPECT_THROW(make_cpu_persistent_topk({.num_blocks = 0}), InvalidInput);
  // The top-k twins take no other op.
  DecodeProblem p;
  EXPECT_THROW(ops->decode_logits(p, find_profile("exact"), l), Unsupported);
  CandidateBlocks blocks;
  EXPECT_THROW(make_cpu_persistent_topk()->candidate_select(l, RowBounds{{0, 0}, {8, 8}}, blocks), Unsupported);
}

}  // namespace
}  // namespace dsa::optimized
