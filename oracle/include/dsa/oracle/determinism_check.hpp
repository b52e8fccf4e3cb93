// Determinism (SPEC 9): two runs on the same input choose the same set in
// every row. The selection rule accepts any tie-break; this check is what
// catches a kernel whose tie-break changes between runs (different top-k on
// different tensor-parallel ranks, AITER #4376).
#pragma once

#include <cstdint>
#include <vector>

#include "dsa/oracle/rows.hpp"

namespace dsa::oracle {

struct DeterminismRowDiff {
  int64_t row = 0;
  std::vector<int32_t> only_first;   // entries of run 1 absent from run 2 (first max_listed)
  std::vector<int32_t> only_second;  // and the reverse
  int64_t differing = 0;             // |only_first| counted fully
};

struct DeterminismVerdict {
  bool passed = true;
  int64_t rows = 0;
  int64_t k = 0;
  int64_t rows_differing = 0;
  std::vector<DeterminismRowDiff> differing_rows;  // most differences first, max_listed
};

// Rows are compared as multisets of their k entries (-1 included), so the
// order inside a row is free. Throws InvalidInput on different shapes.
DeterminismVerdict check_determinism(const IndexMatrix& first, const IndexMatrix& second, int max_listed = 10);

}  // namespace dsa::oracle
