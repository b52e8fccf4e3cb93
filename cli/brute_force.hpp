// An independent brute-force check of the reference for `dsa-oracle run`: plain
// loops written apart from the reference's code (its own fp8 decoding from the
// bit fields, its own page walk, its own full sort), following the `exact`
// profile's documented order.
#pragma once

#include <cstdint>
#include <vector>

#include "dsa/problem.hpp"

namespace dsa::cli {

struct BruteForceRow {
  std::vector<float> logits;    // [0, L_r)
  std::vector<int32_t> topk;    // k slots
};

// Row `row` of a decode problem with a block-flat fp8 cache (the `run` cases).
BruteForceRow brute_force_row(const DecodeProblem& p, int64_t row, int k);

}  // namespace dsa::cli
