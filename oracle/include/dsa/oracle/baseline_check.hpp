// A selection held to a baseline (`dsa-oracle check --baseline`): the top-k
// indices or candidate blocks a new kernel chose, against those its previous
// version chose on the same case.
//
// Rows are compared by set only where the values the two selections read are
// identical (bitwise, any NaN equal to any NaN): there the oracle's rule admits
// several sets only among the ties at the cut, so two legal sets differ only
// there. Per such row the change is
//   - none: the same set;
//   - a tie change: the two sets choose the same multiset of values but other
//     indices among the ties at the cut. Legal (the rule accepts any tie-break),
//     so it passes, but it is reported apart: a reviewer wants to see a
//     tie-break that moved (tensor-parallel ranks running both versions would
//     disagree);
//   - a change: the values chosen differ. One of the two breaks the rule; when
//     it is the baseline's, the change may be a fix (the report says so).
// Rows whose values differ are not compared by set (the rule on the new
// kernel's own values judges them); whether they chose the same set all the
// same is counted, for information.
//
// Values are read through RowColumns (candidate_views.hpp): the positions a
// row's selection chooses among, with their values; selections hold positions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsa/logits.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/rows.hpp"

namespace dsa::oracle {

// Every column of each row's window [start, end), positions counted from start.
RowColumns window_columns(const Logits& values, const RowBounds& bounds);
// Each row's blocks scoring above -inf (the only ones a candidate selection may
// choose), positions the block ids: the candidate-block rule is then the top-k
// rule among them (k' = min(C, live blocks)).
RowColumns live_block_columns(const Logits& block_scores);

struct SelectionChangeRow {
  int64_t row = 0;
  float cut = 0;  // v*, the k'-th largest of the (identical) values
  std::vector<int64_t> only_new, only_baseline;  // positions, the first max_listed
  int64_t only_new_count = 0, only_baseline_count = 0;
  bool baseline_breaks_rule = false;  // a change only: the baseline's own set breaks the rule
};

struct SelectionChangeVerdict {
  std::string what;  // "topk_indices" or "candidate_blocks"
  bool passed = true;
  int64_t rows = 0;
  int64_t k = 0;
  int64_t rows_values_equal = 0;  // compared by set
  int64_t rows_identical = 0;
  int64_t rows_tie_changes = 0;   // legal, reported apart
  int64_t rows_changed = 0;       // failures
  int64_t rows_changed_baseline_broken = 0;  // of those, the baseline's own set breaks the rule
  int64_t rows_values_differ = 0;            // not compared by set
  int64_t rows_values_differ_same_set = 0;   // of those, the same set all the same
  std::vector<SelectionChangeRow> tie_changes, changes;  // the first max_listed of each
};

// new_sel and baseline_sel: [rows][k] positions (-1 empty), each read from its
// own columns. Throws InvalidInput("baseline") when the shapes differ.
SelectionChangeVerdict compare_selection_to_baseline(const IndexMatrix& new_sel, const RowColumns& new_values,
                                                     const IndexMatrix& baseline_sel, const RowColumns& baseline_values,
                                                     std::string what, int max_listed = 10);

std::string summary_line(const SelectionChangeVerdict& v);
std::string format_table(const SelectionChangeVerdict& v);
nlohmann::json to_json(const SelectionChangeVerdict& v);
// A report entry of check "baseline_selection".
Report::Entry baseline_entry(std::string label, const SelectionChangeVerdict& v);

}  // namespace dsa::oracle
