// The one launch of candidate_logits_top_k (the compact logits kernel whose blocks rank the rows they
// complete, epilogue/rank_compact_rows.cuh) on the GPU, through cuda_sm90's IndexerOps: the same
// array whichever block completes a row (one, three or every SM's block), the same array as the
// two-kernel path where the launch does not take the step (more rows than a block can list), its
// counts left zero for the next launch (a second run identical), rows of no entry all -1, and the
// selection the rule's over its own compact logits, every entry written.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/logits.hpp"
#include "dsa/optimized/cuda/cuda_ops.hpp"
#include "dsa/optimized/cuda/sm90_logits.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/rows.hpp"
#include "dsa/profile.hpp"
#include "dsa/synthetic.hpp"
#include "gpu/gpu_test_support.hpp"

namespace dsa {
namespace {

using cuda::Sm90Variant;
using gpu_testing::GridLimit;
using gpu_testing::TwoKernels;

// `batch` requests at next_n, lengths up to 1600 (some below next_n: rows of no entry), and for
// every row `slots` candidate blocks of 8 (gpu_testing::draw_candidates), some past L_r.
struct Step {
  DecodeProblem problem;
  CandidateBlocks candidates;
};
Step draw(int32_t batch, int32_t next_n, int32_t slots, uint64_t seed) {
  Rng rng(seed);
  SyntheticDecodeConfig c;
  c.batch = batch;
  c.next_n = next_n;
  c.heads = 64;
  c.head_dim = 128;
  for (int32_t b = 0; b < batch; ++b)
    c.seq_lens.push_back(b % 7 == 3 ? int32_t(rng.uniform_int(0, next_n - 1)) : int32_t(rng.uniform_int(300, 1600)));
  Step s{make_decode_problem(c, rng), {}};
  s.candidates = gpu_testing::draw_candidates(s.problem, slots, seed + 1000);
  return s;
}

// The step as the adapter stages it, for the launch's own choice of path (it reads the shape only).
bool one_launch(const Step& s) {
  cuda::DeviceDecodeStep d;
  d.batch = s.problem.batch;
  d.next_n = s.problem.next_n;
  d.num_pages = 1;
  return cuda::sm90_candidate_logits_top_k_is_one_launch(d, s.candidates.slots, s.candidates.block_size);
}

struct Outputs {
  Logits compact;
  TopkIndices chosen;
};
// cuda_sm90's candidate_logits_top_k on at most `blocks` blocks (0: one per SM), from poisoned outputs;
// the compact logits and the selection checked as the fused launch's work must be.
Outputs run(const Step& s, Sm90Variant v, int32_t k, int32_t blocks, const std::string& what, bool two = false) {
  const Profile& profile = find_profile(cuda::profile_of(v));
  Outputs out{gpu_testing::poisoned(s.problem.rows(), int64_t(s.candidates.slots) * s.candidates.block_size),
              oracle::poisoned_topk(s.problem.rows(), k)};
  {
    const GridLimit limit(blocks);
    std::optional<TwoKernels> path;
    if (two) path.emplace();
    cuda::make_cuda_sm90_ops(v)->candidate_logits_top_k(s.problem, profile, s.candidates, out.compact, out.chosen);
  }
  const auto lens = visible_lens(s.problem);
  const oracle::WrittenVerdict written = oracle::check_written(oracle::view(out.chosen), "topk_indices");
  EXPECT_TRUE(written.passed) << what << ": " << written.survivors << " entries left unwritten";
  const oracle::SelectionVerdict sv =
      oracle::check_topk_among(oracle::view(out.chosen), oracle::compact_columns(out.compact, s.candidates, lens));
  EXPECT_TRUE(sv.passed) << what << ":\n" << oracle::format_table(sv);
  for (int64_t r = 0; r < s.problem.rows(); ++r) {
    if (lens[size_t(r)] != 0) continue;
    EXPECT_TRUE(std::all_of(out.chosen.row(r), out.chosen.row(r) + k, [](int32_t i) { return i == -1; }))
        << what << ": row " << r << " has no entry, yet chose one";
  }
  return out;
}

TEST(Sm90CandidateLaunch, EveryBlockThatCompletesARowRanksItTheSame) {
  REQUIRE_SM90();
  for (const Sm90Variant v : {Sm90Variant::standard, Sm90Variant::accurate})
    for (const int32_t next_n : {1, 2}) {
      const Step s = draw(20, next_n, 200, 40 + uint64_t(next_n));  // rows of 1600 entries, 25 units
      ASSERT_TRUE(one_launch(s));
      for (const int32_t k : {1, 64, 512, 2000}) {
        const std::string what = std::string(v == Sm90Variant::accurate ? "accurate" : "standard") + " next_n " +
                                 std::to_string(next_n) + " k " + std::to_string(k);
        const Outputs every = run(s, v, k, 0, what + ", a block per SM");
        for (const int32_t blocks : {1, 3}) {
          const GridLimit probe(blocks);
          ASSERT_TRUE(one_launch(s)) << blocks << " blocks";
        }
        for (const int32_t blocks : {1, 3}) {
          const Outputs few = run(s, v, k, blocks, what + ", " + std::to_string(blocks) + " blocks");
          EXPECT_EQ(few.chosen.indices, every.chosen.indices) << what << ", " << blocks << " blocks";
        }
        // The counts were left zero: the next launch ranks every row again, identically.
        EXPECT_EQ(run(s, v, k, 0, what + ", again").chosen.indices, every.chosen.indices) << what << ", again";
      }
    }
}

// The two kernels write the one launch's array, on the same step: 80 rows of 800 entries on a block
// per SM, on 3 and on 7 blocks (the one launch), and on one block, whose range reaches more rows than
// it can list (the two kernels by the launch's own choice).
TEST(Sm90CandidateLaunch, TheTwoKernelPathWritesTheOneLaunchsArray) {
  REQUIRE_SM90();
  const Step s = draw(80, 1, 100, 77);
  ASSERT_TRUE(one_launch(s));
  {
    const TwoKernels path;
    ASSERT_FALSE(one_launch(s));
  }
  for (const int32_t k : {1, 300, 900}) {
    const std::string what = "k " + std::to_string(k);
    const Outputs two = run(s, Sm90Variant::standard, k, 0, what + ", two kernels", /*two=*/true);
    for (const int32_t blocks : {0, 3, 7, 1}) {
      {
        const GridLimit probe(blocks);
        ASSERT_EQ(one_launch(s), blocks != 1) << blocks << " blocks";
      }
      const Outputs one = run(s, Sm90Variant::standard, k, blocks, what + ", " + std::to_string(blocks) + " blocks");
      EXPECT_EQ(one.chosen.indices, two.chosen.indices) << what << ", " << blocks << " blocks";
    }
  }
}

// Rows past the launch's 16384 entries take the two kernels.
TEST(Sm90CandidateLaunch, RowsPastOneTileTakeTheTwoKernels) {
  REQUIRE_SM90();
  Step s = draw(2, 1, 2049, 5);  // 16392 candidate entries
  EXPECT_FALSE(one_launch(s));
  run(s, Sm90Variant::standard, 512, 0, "2049 slots of 8");
  s = draw(2, 1, 2048, 6);
  EXPECT_TRUE(one_launch(s));
  run(s, Sm90Variant::standard, 512, 0, "2048 slots of 8");
}

}  // namespace
}  // namespace dsa
