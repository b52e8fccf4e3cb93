// Argument checks shared by the CPU twins' IndexerOps entry points: the same
// InvalidInput messages as the reference, raised before any parallel region.
#pragma once

#include <cstdint>
#include <string>

#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/indexer_ops.hpp"
#include "dsa/logits.hpp"
#include "dsa/topk.hpp"

namespace dsa::optimized::detail {

// The reference's own check, so both raise the same message.
using dsa::check_row_bounds;

inline void check_topk_output(const TopkIndices& out, int64_t rows) { require_output("topk_indices", out, rows); }

// Whether a call has enough columns to pay for a parallel region (on a busy
// machine a region costs more than a few thousand short rows).
inline bool worth_threads(const RowBounds& bounds) {
  if (bounds.rows() < 2) return false;
  int64_t columns = 0;
  for (int64_t r = 0; r < bounds.rows(); ++r) columns += bounds.end[size_t(r)] - bounds.start[size_t(r)];
  return columns >= (int64_t(1) << 16);
}

}  // namespace dsa::optimized::detail
