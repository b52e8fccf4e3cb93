// The gather stage of cpu_compact_candidates: a row's candidate pages are
// staged once (as a GPU kernel loads them into shared memory), then each
// candidate column's entry is read out of its staged page by the layout's own
// addressing, into dense [columns][D] codes with their scales. Written apart
// from the reference's gather_tokens, so that compact = dense checks it.
#pragma once

#include <cstdint>
#include <vector>

#include "dsa/optimized/compact_candidates.hpp"
#include "dsa/problem.hpp"

namespace dsa::optimized::detail {

struct GatheredColumns {
  int64_t count = 0;
  std::vector<uint8_t> codes;         // fp8 [count][D]; mxfp4 [count][D/2] packed e2m1
  std::vector<float> scales;          // fp8 [count]
  std::vector<uint8_t> block_scales;  // mxfp4 [count][D/32]
};

// The entries at `positions` (visible positions of row `row`, any order) of
// the row's request, in the order given. The problem must be validated;
// candidate_block_size is read only by the defects.
GatheredColumns gather_columns(const DecodeProblem& problem, int64_t row, const std::vector<int64_t>& positions,
                               int32_t candidate_block_size, const CompactCandidatesDefects& defects);

}  // namespace dsa::optimized::detail
