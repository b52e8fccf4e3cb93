// The kernels' host+device pieces that need no GPU, checked on the CPU: the visible length the
// kernels compute from the raw lengths (1-D, 2-D, compressed, padded rows of both rules) equals the
// reference's, and the shared-memory layout fits the H200's 227 KB with a deep ring.
#include <gtest/gtest.h>

#include <vector>

#include "dsa/problem.hpp"
#include "dsa/rng.hpp"
#include "dsa_cuda/kernels/logits_params.cuh"


namespace dsa {
namespace {

TEST(Sm90KernelLengths, VisibleLenEqualsTheReference) {
  Rng rng(11);
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    DecodeProblem p;
    p.batch = int32_t(rng.uniform_int(1, 4));
    p.next_n = int32_t(rng.uniform_int(1, 4));
    p.seq_lens_2d = rng.bernoulli(0.3);
    p.compress_ratio = rng.bernoulli(0.3) ? 4 : 1;
    for (int64_t i = 0; i < (p.seq_lens_2d ? p.rows() : p.batch); ++i)
      p.seq_lens.push_back(int32_t(rng.uniform_int(0, 300)));
    if (rng.bernoulli(0.3)) {
      for (int32_t b = 0; b < p.batch; ++b) p.decode_lens.push_back(int32_t(rng.uniform_int(0, p.next_n)));
      p.padded_lengths = rng.bernoulli(0.5) ? PaddedLengths::causal : PaddedLengths::vllm_padded;
    }
    cuda::kernels::LogitsParams k{};
    k.seq_lens = p.seq_lens.data();
    k.decode_lens = p.decode_lens.empty() ? nullptr : p.decode_lens.data();
    k.batch = p.batch, k.next_n = p.next_n, k.compress_ratio = p.compress_ratio;
    k.seq_lens_2d = p.seq_lens_2d, k.vllm_padded = p.padded_lengths == PaddedLengths::vllm_padded;
    for (int64_t r = 0; r < p.rows(); ++r, ++checked)
      ASSERT_EQ(cuda::kernels::visible_len(k, int32_t(r / p.next_n), int32_t(r % p.next_n)), visible_len(p, r))
          << "trial " << trial << " row " << r;
  }
  EXPECT_GT(checked, 1000);
}

TEST(Sm90KernelLayout, TheRingFitsBesideTwoQBuffers) {
  constexpr uint32_t kH200Optin = 232448;  // sharedMemPerBlockOptin of an H100/H200
  for (int heads : {32, 64})
    for (int head_dim : {64, 128})
      for (int rows = 1; rows * heads <= 256; ++rows) {
        const cuda::kernels::LogitsSmem two(heads, head_dim, rows, 2);
        EXPECT_LE(two.total, kH200Optin) << heads << " " << head_dim << " " << rows;
        EXPECT_EQ(two.tile_offset % 1024, 0u) << "tiles are 1024-aligned for the 128-byte swizzle";
        EXPECT_EQ(two.scale_offset % 128, 0u);
      }
  // D 128, one query row: 24 stages of 8 KB in flight per SM, for three or four pipelines.
  EXPECT_EQ(cuda::kernels::ring_length(64, 128, 1, kH200Optin, 3), 24);
  EXPECT_EQ(cuda::kernels::ring_length(64, 128, 1, kH200Optin, 4), 24);
}

// Each stage serves one pipeline (loader warp i % M, math warpgroup i % M, M = 3 or 4): the ring's
// length is a multiple of M for every shape the kernels take, deep enough for a step of two units
// per warpgroup.
TEST(Sm90KernelLayout, EveryStageBelongsToOnePipeline) {
  constexpr uint32_t kH200Optin = 232448;
  for (int pipelines : {3, cuda::kernels::kMaxMathWarpgroups})
    for (int heads : {32, 64})
      for (int head_dim : {64, 128})
        for (int rows = 1; rows * heads <= 256; ++rows) {
          const int32_t stages = cuda::kernels::ring_length(heads, head_dim, rows, kH200Optin, pipelines);
          ASSERT_GT(stages, 0) << pipelines << " " << heads << " " << head_dim << " " << rows;
          EXPECT_EQ(stages % pipelines, 0) << pipelines << " " << heads << " " << head_dim << " " << rows;
          EXPECT_GE(stages, 3 * pipelines);
          EXPECT_LE(cuda::kernels::LogitsSmem(heads, head_dim, rows, stages).total, kH200Optin);
        }
  EXPECT_EQ(cuda::kernels::ring_length(64, 128, 1, 1024, 3), 0) << "nothing fits: refused by the launch";
}

}  // namespace
}  // namespace dsa
