// The selection rule (SPEC 9) shared by top-k indices and candidate blocks.
//
// Per row, with n candidates (the window's columns, or the row's blocks),
// k' valid slots and v* the k'-th largest value under the SPEC order (-inf
// lowest, -0 == +0, NaN above +inf, all NaNs equal):
//   - slots [0, k') hold k' distinct indices in [0, n), in any order;
//   - slots [k', k) hold -1;
//   - {i : v_i > v*} is inside the chosen set, which is inside {i : v_i >= v*}.
// Top-k: k' = min(k, n). Candidate blocks: k' = min(C, live blocks), live
// meaning a score above -inf. With a tolerance eps > 0 the set rule becomes:
// chosen values >= v* - eps and unchosen values <= v* + eps (infinities and
// NaN still compare by the order alone).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dsa/logits.hpp"
#include "dsa/oracle/rows.hpp"

namespace dsa::oracle {

struct SelectionCheckOptions {
  double eps = 0.0;     // absolute tolerance; 0 is the exact rule
  int max_listed = 10;  // rows named in the report, and indices named per row
};

// One row that broke the rule. Index lists hold the first max_listed
// entries; the counts are complete.
struct SelectionRowIssue {
  int64_t row = 0;
  int64_t candidates = 0;  // n
  int64_t expected_valid = 0;  // k'
  float cut = 0;           // v* (meaningless when expected_valid == 0)
  int64_t ties_at_cut = 0;       // entries whose value equals v*
  int64_t ties_chosen = 0;       // of those, how many were chosen
  bool has_nan = false;
  int64_t missing_count = 0;     // above the cut (beyond eps) but not chosen
  int64_t extra_count = 0;       // chosen but below the cut (beyond eps)
  int64_t duplicate_count = 0;   // a slot repeating an index already seen in the row
  int64_t out_of_range_count = 0;  // a slot outside [0, n) and not -1
  int64_t wrong_tail_count = 0;  // -1 among the first k' slots, or a valid index after them
  std::vector<int32_t> missing, extra;                  // indices
  std::vector<int64_t> duplicate_slots, out_of_range_slots, wrong_tail_slots;  // slots
  int64_t problems() const {
    return missing_count + extra_count + duplicate_count + out_of_range_count + wrong_tail_count;
  }
};

struct SelectionVerdict {
  std::string check;  // "topk" or "candidate_blocks"
  bool passed = true;
  double eps = 0.0;
  int64_t rows = 0;
  int64_t k = 0;  // slots per row (k, or C for candidate blocks)
  int64_t rows_failed = 0;
  // Totals over all rows.
  int64_t missing = 0, extra = 0, duplicates = 0, out_of_range = 0, wrong_tail = 0;
  int64_t ties_at_cut = 0, ties_chosen = 0;
  int64_t rows_split_at_cut = 0;  // rows whose cut fell inside a group of ties (the tie-break mattered)
  int64_t rows_with_nan_count = 0;
  std::vector<int64_t> rows_with_nan;     // first max_listed
  std::vector<SelectionRowIssue> failed_rows;  // most problems first, max_listed
};

// Top-k of each row's [start, end) of `values` (the logits the top-k read).
// Indices count from the row's start. indices.rows == values.rows == bounds.rows().
SelectionVerdict check_topk(const IndexMatrix& indices, const Logits& values, const RowBounds& bounds,
                            const SelectionCheckOptions& options = {});
// Decode rows: [0, visible_lens[r]).
SelectionVerdict check_topk(const IndexMatrix& indices, const Logits& values, std::span<const int64_t> visible_lens,
                            const SelectionCheckOptions& options = {});

// Candidate blocks: scores [rows][num_blocks] (blocks past a row are -inf);
// blocks.cols = C slots per row, each a block index in [0, num_blocks) or -1.
SelectionVerdict check_candidate_blocks(const IndexMatrix& blocks, const Logits& block_scores,
                                        const SelectionCheckOptions& options = {});

// The block scores of SPEC 7, computed by the oracle on its own: block c of a
// row covers columns [start + c*S, start + (c+1)*S) clipped to the row; its
// score is the max of its logits (NaN propagates); the block holding the newest
// entry (end - 1) gets +inf; blocks past the row are -inf; an empty row has
// only -inf. Output width: num_blocks = ceil(max row length / S) unless given
// (num_blocks >= that). Decode rows use [0, E_r), prefill [ks, ke).
Logits candidate_block_scores(const Logits& logits, int64_t block_size, const RowBounds& bounds,
                              int64_t num_blocks = -1);

}  // namespace dsa::oracle
