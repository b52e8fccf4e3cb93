// The SM90 logits kernels (cuda_sm90, cuda_sm90_accurate) against the reference under their own
// profiles, bit for bit, on the GPU. Without an sm_90 GPU every test that needs one reports
// skipped; the refusal on such a machine is itself tested.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/logits.hpp"
#include "dsa/optimized/cuda/cuda_ops.hpp"
#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/sm90_logits.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/float_bits.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/rows.hpp"
#include "dsa/profile.hpp"
#include "dsa/synthetic.hpp"
#include "gpu/gpu_test_support.hpp"

namespace dsa {
namespace {

using cuda::Sm90Variant;
using gpu_testing::describe;
using gpu_testing::draw_candidates;
using gpu_testing::GridLimit;
using gpu_testing::poisoned;

struct Shape {
  int32_t heads, head_dim, next_n;
  bool two_d;
  Sm90Variant variant;
};

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  const Shape& s = info.param;
  return "H" + std::to_string(s.heads) + "_D" + std::to_string(s.head_dim) + "_n" + std::to_string(s.next_n) +
         (s.two_d ? "_2d" : "_1d") + (s.variant == Sm90Variant::accurate ? "_accurate" : "");
}

DecodeProblem draw_step(const Shape& s, uint64_t seed) {
  Rng rng(seed);
  SyntheticDecodeConfig c;
  c.batch = 3;
  c.next_n = s.next_n;
  c.heads = s.heads;
  c.head_dim = s.head_dim;
  // Page edges, a row shorter than next_n, and one spanning many pages.
  c.seq_lens = {int32_t(1 + rng.uniform_int(0, 63)), 64 * 5 + s.next_n, int32_t(700 + rng.uniform_int(0, 300))};
  DecodeProblem p = make_decode_problem(c, rng);
  if (s.two_d) {
    // 2-D lengths as given per row, not rising within a request, within the entries the cache holds.
    p.seq_lens_2d = true;
    std::vector<int32_t> lens;
    for (int32_t b = 0; b < p.batch; ++b)
      for (int32_t j = 0; j < p.next_n; ++j) lens.push_back(int32_t(rng.uniform_int(0, c.seq_lens[size_t(b)])));
    p.seq_lens = lens;
  }
  return p;
}

const Profile& kernel_profile(Sm90Variant v) { return find_profile(cuda::profile_of(v)); }

class Sm90Decode : public ::testing::TestWithParam<Shape> {};

TEST_P(Sm90Decode, DenseEqualsProfileBitForBitAndWritesEveryEntry) {
  REQUIRE_SM90();
  const Shape s = GetParam();
  const Profile& profile = kernel_profile(s.variant);
  for (uint64_t seed : {1u, 2u}) {
    const DecodeProblem p = draw_step(s, 1000 * seed + s.heads + s.head_dim + s.next_n);
    const Logits expected = decode_logits(p, profile).logits;
    Logits actual = poisoned(p.rows(), p.logits_width);
    cuda::make_cuda_sm90_ops(s.variant)->decode_logits(p, profile, actual);
    oracle::LogitsCheckOptions options;
    options.clean = true;  // the adapter runs the clean kernel: -inf past each row, as the reference
    options.poison_bits = oracle::kPoisonF32Bits;
    const auto lens = visible_lens(p);
    const auto verdict = oracle::check_logits(actual, expected, lens, options);
    EXPECT_TRUE(verdict.passed) << "seed " << seed << ": " << describe(verdict);
  }
}

TEST_P(Sm90Decode, CompactEqualsDenseBitForBit) {
  REQUIRE_SM90();
  const Shape s = GetParam();
  const Profile& profile = kernel_profile(s.variant);
  const DecodeProblem p = draw_step(s, 77 + s.heads + s.next_n);
  auto ops = cuda::make_cuda_sm90_ops(s.variant);
  Logits dense = poisoned(p.rows(), p.logits_width);
  ops->decode_logits(p, profile, dense);
  const CandidateBlocks c = draw_candidates(p, 37, 5);
  Logits compact = poisoned(p.rows(), int64_t(c.slots) * c.block_size);
  ops->compact_candidate_logits(p, profile, c, compact);
  const Logits expected = dsa::compact_candidate_logits(p, profile, c);
  const auto lens = visible_lens(p);
  int64_t compared = 0;
  for (int64_t r = 0; r < p.rows(); ++r)
    for (int32_t slot = 0; slot < c.slots; ++slot)
      for (int32_t t = 0; t < c.block_size; ++t) {
        const int32_t id = c.row(r)[slot];
        const int64_t pos = int64_t(id) * c.block_size + t, col = int64_t(slot) * c.block_size + t;
        if (id < 0 || pos >= lens[size_t(r)]) continue;
        const uint32_t a = oracle::float_bits(compact.at(r, col)), b = oracle::float_bits(dense.at(r, pos));
        ASSERT_EQ(a, b) << "row " << r << " slot " << slot << " entry " << pos << ": compact differs from dense";
        ASSERT_TRUE(a == oracle::float_bits(expected.at(r, col)) || (a != a && expected.at(r, col) != expected.at(r, col)))
            << "row " << r << " slot " << slot << " entry " << pos << ": differs from the reference";
        ++compared;
      }
  EXPECT_GT(compared, 50);
}

// The fused launch's work: its compact logits are the reference's where defined, and its top-k is
// the rule's over its own compact logits, every entry written (k past a row's live entries: -1 tail),
// the same on a second run.
TEST_P(Sm90Decode, CandidateLogitsTopkAreTheReferencesAndWriteEveryEntry) {
  REQUIRE_SM90();
  const Shape s = GetParam();
  const Profile& profile = kernel_profile(s.variant);
  const DecodeProblem p = draw_step(s, 91 + s.heads + s.head_dim + s.next_n);
  const CandidateBlocks c = draw_candidates(p, 61, 9);
  const auto lens = visible_lens(p);
  auto ops = cuda::make_cuda_sm90_ops(s.variant);
  for (const int32_t k : {1, 17, 200}) {
    Logits compact = poisoned(p.rows(), int64_t(c.slots) * c.block_size);
    TopkIndices chosen = oracle::poisoned_topk(p.rows(), k);
    ops->candidate_logits_top_k(p, profile, c, compact, chosen);
    const Logits expected = dsa::compact_candidate_logits(p, profile, c);
    const oracle::CompactViews views = oracle::compact_views(compact, expected, c, lens);
    oracle::LogitsCheckOptions options;
    options.poison_bits = oracle::kPoisonF32Bits;
    const auto lv = oracle::check_logits(views.actual, views.expected, std::vector<int64_t>(size_t(p.rows()), views.actual.width),
                                         options);
    EXPECT_TRUE(lv.passed) << "k " << k << ": compact logits: " << describe(lv);
    const oracle::WrittenVerdict written = oracle::check_written(oracle::view(chosen), "topk_indices");
    EXPECT_TRUE(written.passed) << "k " << k << ": " << written.survivors << " top-k entries left unwritten";
    const oracle::SelectionVerdict sv = oracle::check_topk_among(oracle::view(chosen), oracle::compact_columns(compact, c, lens));
    EXPECT_TRUE(sv.passed) << "k " << k << ":\n" << oracle::format_table(sv);
    TopkIndices again = oracle::poisoned_topk(p.rows(), k);
    Logits compact_again = poisoned(p.rows(), int64_t(c.slots) * c.block_size);
    ops->candidate_logits_top_k(p, profile, c, compact_again, again);
    EXPECT_EQ(chosen.indices, again.indices) << "k " << k << ": a second run chose differently";
  }
}

// Both variants at every shape: the accurate one chains row pairs at next_n >= 2, so its loops for more than
// two rows and for 2-D lengths are its own kernels.
std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (Sm90Variant v : {Sm90Variant::standard, Sm90Variant::accurate})
    for (int32_t h : {64, 32})
      for (int32_t d : {128, 64})
        for (int32_t n : {1, 2, 3, 4})
          for (bool two_d : {false, true})
            if (n * h <= 256) out.push_back({h, d, n, two_d, v});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Sm90Decode, ::testing::ValuesIn(shapes()), shape_name);

// The kernels on one or two persistent blocks: each block takes a hundred units or more, so its ring
// of stages (about 25) wraps several times, its math warpgroups take units in pairs, and a request
// is split between blocks mid-way, as on the large shapes of the benchmark (the small steps of the
// other tests leave every block at most one unit).
// The kernel's logits of `p` on at most `blocks` blocks against its profile, bit for bit (clean:
// -inf past each row's length), from a poisoned buffer.
::testing::AssertionResult bit_exact_on_blocks(Sm90Variant v, const DecodeProblem& p, int32_t blocks) {
  const Profile& profile = kernel_profile(v);
  const Logits expected = decode_logits(p, profile).logits;
  Logits actual = poisoned(p.rows(), p.logits_width);
  {
    const GridLimit limit(blocks);
    cuda::make_cuda_sm90_ops(v)->decode_logits(p, profile, actual);
  }
  oracle::LogitsCheckOptions options;
  options.clean = true;
  options.poison_bits = oracle::kPoisonF32Bits;
  const auto verdict = oracle::check_logits(actual, expected, visible_lens(p), options);
  if (verdict.passed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "on " << blocks << " blocks: " << describe(verdict);
}

TEST(Sm90FewBlocks, RingWrapsAndPairedUnitsStayBitExact) {
  REQUIRE_SM90();
  for (Sm90Variant v : {Sm90Variant::standard, Sm90Variant::accurate})
    for (int32_t next_n : {1, 2})
      for (int32_t blocks : {1, 2}) {
        Rng rng(31 + next_n + 10 * blocks);
        SyntheticDecodeConfig c;
        c.batch = 2;
        c.next_n = next_n;
        c.heads = 64;
        c.head_dim = 128;
        c.seq_lens = {int32_t(3800 + rng.uniform_int(0, 63)), int32_t(3000 + rng.uniform_int(0, 63))};
        EXPECT_TRUE(bit_exact_on_blocks(v, make_decode_problem(c, rng), blocks))
            << (v == Sm90Variant::accurate ? "accurate" : "standard") << " next_n " << next_n;
      }
}

// Many short requests on one or three blocks: a block walks dozens of segments of one to six units,
// so the two Q buffers are refilled over and over while the loaders run ahead (with four math
// warpgroups loader warp 0 loads each segment's Q, also of segments where it has no unit).
TEST(Sm90FewBlocks, ManyShortRequestsRefillTheQBuffers) {
  REQUIRE_SM90();
  for (Sm90Variant v : {Sm90Variant::standard, Sm90Variant::accurate})
    for (int32_t next_n : {1, 2})
      for (int32_t blocks : {1, 3}) {
        Rng rng(71 + next_n + 10 * blocks);
        SyntheticDecodeConfig c;
        c.batch = 40;
        c.next_n = next_n;
        c.heads = 64;
        c.head_dim = 128;
        for (int32_t b = 0; b < c.batch; ++b) c.seq_lens.push_back(int32_t(next_n + rng.uniform_int(0, 380)));
        EXPECT_TRUE(bit_exact_on_blocks(v, make_decode_problem(c, rng), blocks))
            << (v == Sm90Variant::accurate ? "accurate" : "standard") << " next_n " << next_n;
      }
}

TEST(Sm90FewBlocks, NegativeLimitIsInvalidInput) {
  EXPECT_THROW(cuda::set_sm90_grid_limit(-1), InvalidInput);
}

TEST(Sm90Prefill, EqualsProfileBitForBit) {
  REQUIRE_SM90();
  for (Sm90Variant v : {Sm90Variant::standard, Sm90Variant::accurate})
    for (int32_t h : {64, 32}) {
      Rng rng(9 + h);
      SyntheticPrefillConfig c;
      c.rows = 11;
      c.heads = h;
      c.head_dim = 128;
      c.num_k = 1000;
      PrefillProblem p = make_prefill_problem(c, rng);
      for (int32_t r = 0; r < p.rows; ++r) {  // windows with ks > 0, not aligned to 64
        p.ks[size_t(r)] = int32_t(rng.uniform_int(0, 300));
        p.ke[size_t(r)] = int32_t(rng.uniform_int(p.ks[size_t(r)], p.num_k));
      }
      const Profile& profile = kernel_profile(v);
      const Logits expected = prefill_logits(p, profile).logits;
      Logits actual = poisoned(p.rows, p.num_k);
      cuda::make_cuda_sm90_ops(v)->prefill_logits(p, profile, actual);
      RowBounds windows;
      for (int32_t r = 0; r < p.rows; ++r) windows.start.push_back(p.ks[size_t(r)]), windows.end.push_back(p.ke[size_t(r)]);
      oracle::LogitsCheckOptions options;
      options.poison_bits = oracle::kPoisonF32Bits;
      const auto verdict = oracle::check_logits(actual, expected, windows, options);
      EXPECT_TRUE(verdict.passed) << "H " << h << ": " << describe(verdict);
    }
}

TEST(Sm90Refusals, WhatTheKernelsCannotTakeIsUnsupported) {
  REQUIRE_SM90();
  auto ops = cuda::make_cuda_sm90_ops(Sm90Variant::standard);
  const Profile& profile = find_profile("dsa_sm90");
  auto refused = [&](DecodeProblem p, const Profile& prof) {
    Logits out = poisoned(p.rows(), p.logits_width);
    EXPECT_THROW(ops->decode_logits(p, prof, out), Unsupported);
  };
  Rng rng(3);
  SyntheticDecodeConfig c;
  c.batch = 2;
  c.seq_lens = {100, 200};
  c.heads = 16;
  refused(make_decode_problem(c, rng), profile);  // H 16
  c.heads = 64;
  c.block_size = 32;
  refused(make_decode_problem(c, rng), profile);  // pages of 32
  c.block_size = 64;
  c.next_n = 5;
  c.seq_lens = {100, 200};
  refused(make_decode_problem(c, rng), profile);  // next_n * H > 256
  c.next_n = 1;
  refused(make_decode_problem(c, rng), find_profile("exact"));  // another arithmetic
  // The fused launch's own limits: k and the output's shape are named, not guessed.
  const DecodeProblem p = make_decode_problem(c, rng);
  const CandidateBlocks cand = draw_candidates(p, 8, 1);
  Logits compact = poisoned(p.rows(), int64_t(cand.slots) * cand.block_size);
  TopkIndices no_k{p.rows(), 0, {}};
  EXPECT_THROW(ops->candidate_logits_top_k(p, profile, cand, compact, no_k), InvalidInput);
  TopkIndices short_rows = oracle::poisoned_topk(p.rows() - 1, 4);
  EXPECT_THROW(ops->candidate_logits_top_k(p, profile, cand, compact, short_rows), InvalidInput);
}

TEST(Sm90Refusals, NoGpuIsUnsupportedNotAWrongAnswer) {
  if (cuda::sm90_available()) GTEST_SKIP() << "an sm_90 GPU is present";
  Rng rng(4);
  SyntheticDecodeConfig c;
  c.batch = 1;
  c.seq_lens = {130};
  const DecodeProblem p = make_decode_problem(c, rng);
  Logits out = poisoned(p.rows(), p.logits_width);
  const std::vector<float> before = out.values;
  try {
    cuda::make_cuda_sm90_ops(Sm90Variant::standard)->decode_logits(p, find_profile("dsa_sm90"), out);
    ADD_FAILURE() << "a machine without an sm_90 GPU must refuse";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("cuda_sm90"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::memcmp(before.data(), out.values.data(), before.size() * 4), 0) << "nothing written";
  const CandidateBlocks cand = draw_candidates(p, 4, 2);
  Logits compact = poisoned(p.rows(), int64_t(cand.slots) * cand.block_size);
  TopkIndices chosen = oracle::poisoned_topk(p.rows(), 8);
  EXPECT_THROW(cuda::make_cuda_sm90_ops(Sm90Variant::standard)
                   ->candidate_logits_top_k(p, find_profile("dsa_sm90"), cand, compact, chosen),
               Unsupported);
}

}  // namespace
}  // namespace dsa
