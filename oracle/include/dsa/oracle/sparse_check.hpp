// The SM100 sparse form's block ids and row ends (SPEC 7): both are fixed by
// the candidate blocks and the row lengths, so a kernel's must equal the
// reference's, entry for entry (no tie or order is free here).
#pragma once

#include <cstdint>
#include <vector>

#include "dsa/sparse_sm100.hpp"

namespace dsa::oracle {

struct SparseRowDiff {
  int64_t row = 0;
  int64_t first_slot = -1;  // the first slot whose id differs; -1 when only the end does
  int32_t actual_id = 0, expected_id = 0;
  int32_t actual_end = 0, expected_end = 0;
  int64_t slots_differing = 0;
};

struct SparseBlocksVerdict {
  bool passed = true;
  int64_t rows = 0;
  int64_t num_sparse = 0;
  int64_t rows_differing = 0;
  int64_t ids_differing = 0;  // over all rows
  int64_t ends_differing = 0;
  std::vector<SparseRowDiff> first_rows;  // row order, first max_listed
};

// Throws InvalidInput("sparse_blocks") when the shapes differ (rows, num_sparse,
// SBK, or the sizes of ids and end) and, for `expected`, when they disagree with its rows.
SparseBlocksVerdict check_sparse_blocks(const SparseBlocks& actual, const SparseBlocks& expected, int max_listed = 10);

}  // namespace dsa::oracle
