// What the GPU test files share: the skip where no sm_90 GPU is (the test reports skipped, never
// passed), the SM90 kernels on fewer persistent blocks, and random candidate blocks for a step.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/logits.hpp"
#include "dsa/oracle/float_bits.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/sm90_logits.hpp"
#include "dsa/problem.hpp"
#include "dsa/rng.hpp"

#define REQUIRE_SM90()                                                                                  \
  do {                                                                                                  \
    if (!::dsa::cuda::sm90_available())                                                                 \
      GTEST_SKIP() << "no sm_90 GPU: "                                                                  \
                   << (::dsa::cuda::device_info().present ? ::dsa::cuda::device_info().name             \
                                                          : ::dsa::cuda::device_info().why_absent);     \
  } while (0)

namespace dsa::gpu_testing {

// The SM90 logits kernels on at most `blocks` persistent blocks while it lives (cuda::set_sm90_grid_limit).
class GridLimit {
 public:
  explicit GridLimit(int32_t blocks) { cuda::set_sm90_grid_limit(blocks); }
  ~GridLimit() { cuda::set_sm90_grid_limit(0); }
  GridLimit(const GridLimit&) = delete;
  GridLimit& operator=(const GridLimit&) = delete;
};

// sm90_candidate_logits_top_k on its two kernels while it lives (cuda::set_sm90_candidate_two_kernels).
class TwoKernels {
 public:
  TwoKernels() { cuda::set_sm90_candidate_two_kernels(true); }
  ~TwoKernels() { cuda::set_sm90_candidate_two_kernels(false); }
  TwoKernels(const TwoKernels&) = delete;
  TwoKernels& operator=(const TwoKernels&) = delete;
};

// The adapters stage steps' pages from page `first_page` of a larger device cache while it lives
// (cuda::set_sm90_page_base).
class PageBase {
 public:
  explicit PageBase(int32_t first_page) { cuda::set_sm90_page_base(first_page); }
  ~PageBase() { cuda::set_sm90_page_base(0); }
  PageBase(const PageBase&) = delete;
  PageBase& operator=(const PageBase&) = delete;
};

// A logits buffer filled with the oracle's poison, for a kernel to write.
inline Logits poisoned(int64_t rows, int64_t width) {
  Logits l{rows, width, std::vector<float>(size_t(rows * width))};
  oracle::fill_poison(l.values);
  return l;
}

// A logits verdict's counts and first mismatches, values and bits, for the log of a GPU run.
inline std::string describe(const oracle::LogitsVerdict& v) {
  std::string s = std::to_string(v.mismatches) + " mismatches of " + std::to_string(v.entries_compared) + " in " +
                  std::to_string(v.rows_with_mismatch) + " rows";
  for (const auto& m : v.first_mismatches)
    s += "; [" + std::to_string(m.row) + "][" + std::to_string(m.col) + "] got " + std::to_string(m.actual) + " (bits " +
         std::to_string(oracle::float_bits(m.actual)) + ") want " + std::to_string(m.expected) + " (" +
         std::to_string(oracle::float_bits(m.expected)) + ")";
  return s;
}

// Every row takes a random subset of its blocks of 8, in random order, one slot in six empty (and every
// slot past the row's blocks).
inline CandidateBlocks draw_candidates(const DecodeProblem& p, int32_t slots, uint64_t seed) {
  Rng rng(seed);
  CandidateBlocks c;
  c.rows = p.rows();
  c.slots = slots;
  c.block_size = 8;
  c.blocks.assign(size_t(c.rows * c.slots), -1);
  const int32_t blocks = int32_t((p.logits_width + 7) / 8);
  for (int64_t r = 0; r < c.rows; ++r) {
    std::vector<int32_t> ids(static_cast<size_t>(blocks));
    for (int32_t i = 0; i < blocks; ++i) ids[size_t(i)] = i;
    for (int32_t i = blocks - 1; i > 0; --i) std::swap(ids[size_t(i)], ids[size_t(rng.uniform_int(0, i))]);
    for (int32_t slot = 0; slot < c.slots && slot < blocks; ++slot)
      if (rng.uniform_int(0, 5) != 0) c.row(r)[slot] = ids[size_t(slot)];
  }
  return c;
}

}  // namespace dsa::gpu_testing
