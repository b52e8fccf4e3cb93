// A fixed-seed fuzz campaign of each CUDA logits implementation against its own profile, on the GPU:
// random decode steps inside the kernels' contract (H 32/64, D 64/128, next_n 1..4, 1-D and 2-D
// lengths, compressed and padded rows of both rules, page-edge and empty rows, shuffled pages, tie-
// heavy values, weights that overflow the head sum into inf and NaN), each judged bit for bit with
// "every entry written"; compact candidate logits against the reference and the dense kernel; and
// prefill windows. DSA_GPU_FUZZ_CASES sets the number of decode steps (default 30).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/logits.hpp"
#include "dsa/optimized/cuda/cuda_ops.hpp"
#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/oracle/float_bits.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/profile.hpp"
#include "dsa/synthetic.hpp"

namespace dsa {
namespace {

using cuda::Sm90Variant;

int64_t campaign_cases() {
  const char* env = std::getenv("DSA_GPU_FUZZ_CASES");
  return env ? std::max<int64_t>(1, std::atoll(env)) : 30;
}

Logits poison(int64_t rows, int64_t width) {
  Logits l{rows, width, std::vector<float>(size_t(rows * width))};
  oracle::fill_poison(l.values);
  return l;
}

bool same_bits_or_nan(float a, float b) { return oracle::float_bits(a) == oracle::float_bits(b) || (a != a && b != b); }

DecodeProblem draw_step(Rng& rng, std::string& what) {
  SyntheticDecodeConfig c;
  c.heads = rng.bernoulli(0.5) ? 64 : 32;
  c.head_dim = rng.bernoulli(0.6) ? 128 : 64;
  c.next_n = int32_t(rng.uniform_int(1, c.heads == 64 ? 4 : 4));
  c.batch = int32_t(rng.uniform_int(1, 6));
  c.compress_ratio = rng.bernoulli(0.2) ? 4 : 1;
  const ValueDistribution kinds[] = {ValueDistribution::normal, ValueDistribution::normal, ValueDistribution::few_levels,
                                     ValueDistribution::constant};
  c.q_values = kinds[rng.uniform_int(0, 3)];
  c.k_values = kinds[rng.uniform_int(0, 3)];
  c.ue8m0_scale = rng.bernoulli(0.3);
  c.shuffle_pages = rng.bernoulli(0.8);
  for (int32_t b = 0; b < c.batch; ++b) {
    const int64_t edges[] = {0, 1, 63, 64, 65, 127, 128, 129};
    const int64_t entries = rng.bernoulli(0.3) ? edges[rng.uniform_int(0, 7)] : rng.uniform_int(0, 2500);
    c.seq_lens.push_back(int32_t(entries * c.compress_ratio + rng.uniform_int(0, c.compress_ratio - 1) + c.next_n));
  }
  const bool padded = c.compress_ratio == 1 && rng.bernoulli(0.2);
  if (padded)
    for (int32_t b = 0; b < c.batch; ++b) c.decode_lens.push_back(int32_t(rng.uniform_int(1, c.next_n)));
  DecodeProblem p = make_decode_problem(c, rng);
  if (padded && rng.bernoulli(0.5)) p.padded_lengths = PaddedLengths::vllm_padded;
  if (!padded && c.compress_ratio == 1 && rng.bernoulli(0.3)) {
    p.seq_lens_2d = true;
    std::vector<int32_t> lens;
    for (int32_t b = 0; b < p.batch; ++b)
      for (int32_t j = 0; j < p.next_n; ++j) lens.push_back(int32_t(rng.uniform_int(0, c.seq_lens[size_t(b)])));
    p.seq_lens = lens;
  }
  if (rng.bernoulli(0.1))
    for (float& w : p.weights) w *= 0x1p100f;  // the head sum overflows: inf and inf - inf = NaN
  what = "H " + std::to_string(p.heads) + " D " + std::to_string(p.head_dim) + " next_n " + std::to_string(p.next_n) +
         " B " + std::to_string(p.batch) + (p.seq_lens_2d ? " 2-D" : " 1-D") + " ratio " +
         std::to_string(p.compress_ratio) + (padded ? " padded" : "");
  return p;
}

CandidateBlocks draw_candidates(Rng& rng, const DecodeProblem& p) {
  CandidateBlocks c;
  const int32_t sizes[] = {8, 8, 16, 32, 64};
  c.block_size = sizes[rng.uniform_int(0, 4)];
  c.rows = p.rows();
  c.slots = int32_t(rng.uniform_int(1, 40));
  c.blocks.assign(size_t(c.rows * c.slots), -1);
  const int32_t blocks = int32_t((p.logits_width + c.block_size - 1) / c.block_size);
  for (int64_t r = 0; r < c.rows && blocks > 0; ++r) {
    std::vector<int32_t> ids(static_cast<size_t>(blocks));
    for (int32_t i = 0; i < blocks; ++i) ids[size_t(i)] = i;
    for (int32_t i = blocks - 1; i > 0; --i) std::swap(ids[size_t(i)], ids[size_t(rng.uniform_int(0, i))]);
    for (int32_t slot = 0; slot < c.slots && slot < blocks; ++slot)
      if (rng.uniform_int(0, 4) != 0) c.row(r)[slot] = ids[size_t(slot)];
  }
  return c;
}

class Sm90Campaign : public ::testing::TestWithParam<Sm90Variant> {};

TEST_P(Sm90Campaign, FixedSeedAgainstTheProfile) {
  if (!cuda::sm90_available()) GTEST_SKIP() << "no sm_90 GPU";
  const Sm90Variant v = GetParam();
  const Profile& profile = find_profile(cuda::profile_of(v));
  auto ops = cuda::make_cuda_sm90_ops(v);
  Rng rng(20261201 + int(v));
  int64_t steps = 0, logits = 0, compact_entries = 0, nan_logits = 0, rejected = 0;
  for (int64_t i = 0; i < campaign_cases(); ++i) {
    std::string what;
    DecodeProblem p;
    Logits expected;
    try {  // a draw the reference refuses is redrawn (the kernel is then never asked)
      p = draw_step(rng, what);
      expected = decode_logits(p, profile).logits;
    } catch (const InvalidInput& e) {
      ++rejected;
      ASSERT_LT(rejected, 5 * campaign_cases()) << "the generator keeps drawing invalid steps: " << e.what();
      --i;
      continue;
    }
    SCOPED_TRACE("case " + std::to_string(i) + ": " + what);
    Logits dense = poison(p.rows(), p.logits_width);
    ops->decode_logits(p, profile, dense);
    oracle::LogitsCheckOptions options;
    options.clean = true;
    options.poison_bits = oracle::kPoisonF32Bits;
    const auto lens = visible_lens(p);
    const auto verdict = oracle::check_logits(dense, expected, lens, options);
    ASSERT_TRUE(verdict.passed) << verdict.mismatches << " mismatches, first "
                                << (verdict.first_mismatches.empty() ? std::string("-")
                                                                     : std::to_string(verdict.first_mismatches[0].row) +
                                                                           "/" +
                                                                           std::to_string(verdict.first_mismatches[0].col));
    logits += verdict.entries_compared;
    nan_logits += verdict.nan_matched;
    const CandidateBlocks cand = draw_candidates(rng, p);
    const Logits want = dsa::compact_candidate_logits(p, profile, cand);
    Logits compact = poison(p.rows(), int64_t(cand.slots) * cand.block_size);
    ops->compact_candidate_logits(p, profile, cand, compact);
    for (int64_t r = 0; r < p.rows(); ++r)
      for (int32_t slot = 0; slot < cand.slots; ++slot) {
        const int32_t id = cand.row(r)[slot];
        for (int32_t t = 0; t < cand.block_size && id >= 0; ++t) {
          const int64_t pos = int64_t(id) * cand.block_size + t, col = int64_t(slot) * cand.block_size + t;
          if (pos >= lens[size_t(r)]) continue;
          ASSERT_TRUE(same_bits_or_nan(compact.at(r, col), want.at(r, col)) &&
                      oracle::float_bits(compact.at(r, col)) == oracle::float_bits(dense.at(r, pos)))
              << "compact row " << r << " slot " << slot << " entry " << pos << " (S " << cand.block_size << ")";
          ++compact_entries;
        }
      }
    ++steps;
  }
  int64_t prefill_entries = 0;
  for (int i = 0; i < 6; ++i) {
    SyntheticPrefillConfig c;
    c.heads = rng.bernoulli(0.5) ? 64 : 32;
    c.head_dim = rng.bernoulli(0.5) ? 128 : 64;
    c.rows = int32_t(rng.uniform_int(1, 13));
    c.num_k = rng.uniform_int(c.rows, 900);
    PrefillProblem p = make_prefill_problem(c, rng);
    for (int32_t r = 0; r < p.rows; ++r) {
      p.ks[size_t(r)] = int32_t(rng.uniform_int(0, p.num_k - 1));
      p.ke[size_t(r)] = int32_t(rng.uniform_int(p.ks[size_t(r)], p.num_k));
    }
    const Logits expected = prefill_logits(p, profile).logits;
    Logits actual = poison(p.rows, p.num_k);
    ops->prefill_logits(p, profile, actual);
    RowBounds windows;
    for (int32_t r = 0; r < p.rows; ++r) windows.start.push_back(p.ks[size_t(r)]), windows.end.push_back(p.ke[size_t(r)]);
    oracle::LogitsCheckOptions options;
    options.poison_bits = oracle::kPoisonF32Bits;
    const auto verdict = oracle::check_logits(actual, expected, windows, options);
    ASSERT_TRUE(verdict.passed) << "prefill case " << i << ": " << verdict.mismatches << " mismatches";
    prefill_entries += verdict.entries_compared;
  }
  std::printf("campaign %s (seed %d): %lld decode steps (%lld invalid draws redrawn), %lld logits (%lld NaN) and "
              "%lld compact entries bit for bit, %lld prefill logits\n",
              std::string(cuda::profile_of(v)).c_str(), 20261201 + int(v), (long long)steps, (long long)rejected,
              (long long)logits, (long long)nan_logits, (long long)compact_entries, (long long)prefill_entries);
  EXPECT_GT(logits, 1000);
  EXPECT_GT(compact_entries, 100);
}

INSTANTIATE_TEST_SUITE_P(Variants, Sm90Campaign, ::testing::Values(Sm90Variant::standard, Sm90Variant::accurate),
                         [](const auto& info) { return std::string(cuda::profile_of(info.param)); });

}  // namespace
}  // namespace dsa
