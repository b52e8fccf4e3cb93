// Two selections of the same rows compared by what they chose: the relations
// between runs of top-k ops that SPEC 7 and 9 state (columns past the row
// rewritten, mask-then-top-k against the candidate top-k, a padded step's
// rows against each request alone). Per row the multiset of chosen values
// must agree, so ties at the cut may go either way; each side must first hold
// distinct indices inside its row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dsa/logits.hpp"
#include "dsa/oracle/rows.hpp"

namespace dsa::oracle {

struct ChoiceRowDiff {
  int64_t row = 0;
  int64_t start = 0, end = 0;
  std::string problem;  // a side's index outside the row, repeated, or poison (then no values compared)
  int64_t first_values = 0, first_minus_one = 0;
  int64_t second_values = 0, second_minus_one = 0;
  std::vector<float> only_first, only_second;  // chosen values on one side only (first 8)
  int64_t only_first_count = 0, only_second_count = 0;
};

struct ChoiceVerdict {
  std::string first, second;  // what the two selections are, for the report
  bool passed = true;
  bool above_neg_inf_only = false;
  int64_t rows = 0;
  int64_t rows_differing = 0;
  std::vector<ChoiceRowDiff> first_rows;  // row order, first max_listed
};

// above_neg_inf_only: compare only the chosen values above -inf and ignore the
// -1 counts (SPEC 7: where fewer than k candidate columns are visible, the
// masked top-k also returns -inf columns). Throws InvalidInput("indices") on
// different shapes and the row-bounds errors on bounds that do not fit `values`.
ChoiceVerdict check_same_choice(const IndexMatrix& first, std::string first_name, const IndexMatrix& second,
                                std::string second_name, const Logits& values, const RowBounds& bounds,
                                bool above_neg_inf_only = false, int max_listed = 10);

std::string summary_line(const ChoiceVerdict& v);
std::string format_table(const ChoiceVerdict& v);

}  // namespace dsa::oracle
