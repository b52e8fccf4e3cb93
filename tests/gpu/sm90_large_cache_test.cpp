// The SM90 logits kernels on pages past 2 GiB of their K cache, and on logits rows past 2 GiB of
// their output (with the selection's top-k over them). A serving engine's cache holds tens of
// GB, so a page's byte offset passes 2^31 from the 254,201st page of 8448 bytes on; computed in 32
// bits it wraps, and vLLM #52109 found AITER's paged logits on gfx942 scoring every such page exactly
// 0.0 (the zeros then won ties in the top-k: a silently random selection). The other GPU tests stage
// caches of a few MB; here the adapters stage the same steps from a page base just below the 2 GiB
// boundary (cuda::set_sm90_page_base): a few pages below it, one across it, the rest past it. The
// logits do not depend on where a page lies (page_permutation_invariance), so the reference of the
// step as drawn is the expected answer, bit for bit.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/logits.hpp"
#include "dsa/optimized/cuda/cuda_ops.hpp"
#include "dsa/optimized/cuda/select_ops.hpp"
#include "dsa/optimized/cuda/sm90_logits.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/rows.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "dsa/profile.hpp"
#include "dsa/synthetic.hpp"
#include "gpu/gpu_test_support.hpp"

namespace dsa {
namespace {

using cuda::Sm90Variant;
using gpu_testing::describe;
using gpu_testing::PageBase;
using gpu_testing::poisoned;

constexpr int64_t kTwoGiB = int64_t(1) << 31;

// The first page of the staged cache: two whole pages below 2^31 bytes, then the page across it.
int32_t page_base_below_2gib(const DecodeProblem& p) {
  const int64_t page_bytes = int64_t(p.cache.page_bytes());
  return int32_t(kTwoGiB / page_bytes - 2);
}

DecodeProblem draw(int32_t head_dim, int32_t next_n, uint64_t seed) {
  Rng rng(seed);
  SyntheticDecodeConfig c;
  c.batch = 4;
  c.next_n = next_n;
  c.heads = 64;
  c.head_dim = head_dim;
  c.seq_lens = {int32_t(1 + rng.uniform_int(0, 63)), 64 * 3 + next_n, int32_t(900 + rng.uniform_int(0, 300)),
                int32_t(2000 + rng.uniform_int(0, 200))};
  return make_decode_problem(c, rng);
}

// The compact entries the kernels must write: candidate blocks' entries below the row's length.
int64_t defined_entries(const CandidateBlocks& c, const std::vector<int64_t>& lens) {
  int64_t n = 0;
  for (int64_t r = 0; r < c.rows; ++r)
    for (int32_t slot = 0; slot < c.slots; ++slot)
      for (int32_t t = 0; t < c.block_size; ++t)
        n += c.row(r)[slot] >= 0 && int64_t(c.row(r)[slot]) * c.block_size + t < lens[size_t(r)];
  return n;
}

TEST(Sm90LargeCache, PagesPast2GiBGiveTheReferencesLogitsAndSelection) {
  REQUIRE_SM90();
  for (const Sm90Variant v : {Sm90Variant::standard, Sm90Variant::accurate})
    for (const int32_t head_dim : {128, 64})
      for (const int32_t next_n : {1, 2}) {
        const std::string what = std::string(v == Sm90Variant::accurate ? "accurate" : "standard") + " D " +
                                 std::to_string(head_dim) + " next_n " + std::to_string(next_n);
        const Profile& profile = find_profile(cuda::profile_of(v));
        const DecodeProblem p = draw(head_dim, next_n, 500 + uint64_t(head_dim) + uint64_t(next_n));
        const int32_t base = page_base_below_2gib(p);
        const int64_t page_bytes = int64_t(p.cache.page_bytes());
        ASSERT_LT(int64_t(base + 2) * page_bytes, kTwoGiB) << what;
        ASSERT_GT(int64_t(base + p.cache.num_pages) * page_bytes, kTwoGiB + 8 * page_bytes)
            << what << ": the step's pages must reach well past 2 GiB";
        const auto lens = visible_lens(p);
        const CandidateBlocks c = gpu_testing::draw_candidates(p, 160, 7 + uint64_t(next_n));
        ASSERT_GT(defined_entries(c, lens), 1000) << what << ": too few candidate entries below the rows' lengths";
        auto ops = cuda::make_cuda_sm90_ops(v);
        const PageBase staged(base);

        Logits dense = poisoned(p.rows(), p.logits_width);
        ops->decode_logits(p, profile, dense);
        oracle::LogitsCheckOptions clean;
        clean.clean = true;
        clean.poison_bits = oracle::kPoisonF32Bits;
        const auto dv = oracle::check_logits(dense, decode_logits(p, profile).logits, lens, clean);
        EXPECT_TRUE(dv.passed) << what << ", dense: " << describe(dv);

        const Logits expected_compact = dsa::compact_candidate_logits(p, profile, c);
        oracle::LogitsCheckOptions options;
        options.poison_bits = oracle::kPoisonF32Bits;
        const auto check_compact = [&](const Logits& compact, const std::string& op) {
          const oracle::CompactViews views = oracle::compact_views(compact, expected_compact, c, lens);
          const auto verdict = oracle::check_logits(views.actual, views.expected,
                                                    std::vector<int64_t>(size_t(p.rows()), views.actual.width), options);
          EXPECT_TRUE(verdict.passed) << what << ", " << op << ": " << describe(verdict);
        };
        Logits compact = poisoned(p.rows(), int64_t(c.slots) * c.block_size);
        ops->compact_candidate_logits(p, profile, c, compact);
        check_compact(compact, "compact");

        for (const bool two_kernels : {false, true}) {
          const std::string op = two_kernels ? "candidate_logits_top_k (two kernels)" : "candidate_logits_top_k";
          std::optional<gpu_testing::TwoKernels> path;
          if (two_kernels) path.emplace();
          Logits fused = poisoned(p.rows(), int64_t(c.slots) * c.block_size);
          TopkIndices chosen = oracle::poisoned_topk(p.rows(), 64);
          ops->candidate_logits_top_k(p, profile, c, fused, chosen);
          check_compact(fused, op);
          const oracle::WrittenVerdict written = oracle::check_written(oracle::view(chosen), "topk_indices");
          EXPECT_TRUE(written.passed) << what << ", " << op << ": " << written.survivors << " entries left unwritten";
          const oracle::SelectionVerdict sv =
              oracle::check_topk_among(oracle::view(chosen), oracle::compact_columns(fused, c, lens));
          EXPECT_TRUE(sv.passed) << what << ", " << op << ":\n" << oracle::format_table(sv);
        }
      }
}

// Logits rows past 2 GiB of the output buffer: 530 rows of max_model_len 2^20 (4 MB a row), as a
// serving step of 512 rows or more at a context of 1M writes them. A row's offset computed in 32 bits
// wraps there, and AITER #4244 found its gfx942 paged logits dropping those rows' stores (a buffer
// store past 2^31 bytes), the rows left as they were. Then cuda_select's top-k over the same buffer.
TEST(Sm90LargeCache, LogitsRowsPast2GiBAreWrittenAndRanked) {
  REQUIRE_SM90();
  Rng rng(2026);
  SyntheticDecodeConfig config;
  config.batch = 530;
  config.next_n = 1;
  config.heads = 64;
  config.head_dim = 128;
  config.logits_width = int64_t(1) << 20;
  for (int32_t b = 0; b < config.batch; ++b) config.seq_lens.push_back(int32_t(rng.uniform_int(1, 300)));
  const DecodeProblem p = make_decode_problem(config, rng);
  ASSERT_GT(p.rows() * p.logits_width * int64_t(sizeof(float)), kTwoGiB + 8 * (p.logits_width * 4))
      << "the last rows must lie past 2 GiB of the logits";
  const Profile& profile = find_profile(cuda::profile_of(Sm90Variant::standard));
  const auto lens = visible_lens(p);

  Logits dense = poisoned(p.rows(), p.logits_width);
  cuda::make_cuda_sm90_ops(Sm90Variant::standard)->decode_logits(p, profile, dense);
  oracle::LogitsCheckOptions clean;
  clean.clean = true;  // -inf past each row's length: the whole 2 GiB written
  clean.poison_bits = oracle::kPoisonF32Bits;
  const auto verdict = oracle::check_logits(dense, decode_logits(p, profile).logits, lens, clean);
  EXPECT_TRUE(verdict.passed) << describe(verdict);

  RowBounds bounds;
  for (const int64_t len : lens) bounds.start.push_back(0), bounds.end.push_back(len);
  TopkIndices chosen = oracle::poisoned_topk(p.rows(), 64);
  cuda::make_cuda_select_ops()->topk(dense, bounds, chosen);
  const oracle::WrittenVerdict written = oracle::check_written(oracle::view(chosen), "topk_indices");
  EXPECT_TRUE(written.passed) << written.survivors << " top-k entries left unwritten";
  const oracle::SelectionVerdict sv = oracle::check_topk(oracle::view(chosen), dense, bounds);
  EXPECT_TRUE(sv.passed) << oracle::format_table(sv);
}

// The staging knob itself refuses what no cache can be.
TEST(Sm90LargeCache, ANegativePageBaseIsRefused) {
  EXPECT_THROW(cuda::set_sm90_page_base(-1), InvalidInput);
  EXPECT_EQ(cuda::sm90_page_base(), 0);
}

}  // namespace
}  // namespace dsa
