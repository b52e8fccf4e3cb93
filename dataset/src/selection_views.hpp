// What the selections of a golden case read, for a check that compares two
// sides (a baseline and a new kernel) or measures one against the exact
// arithmetic: the values each side's top-k and candidate selection chose
// among, as the oracle's RowColumns (oracle/candidate_views.hpp), per op as
// check_case reads them.
#pragma once

#include <optional>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/oracle/candidate_views.hpp"

namespace dsa::dataset::detail {

// The logits-like outputs a side's later stages read: its own where it wrote
// them, else `fallback`'s (the golden or baseline file's), else the case's
// given logits; dense logits limited to each row's window (-inf elsewhere: a
// kernel may leave the rest unwritten).
GoldenOutputs values_read(const GoldenCase& golden, const GoldenOutputs& own, const GoldenOutputs& fallback);

// The columns the case's top-k chooses among (positions: relative to the row
// start, or to the candidate positions); nullopt when the values it needs are absent.
std::optional<oracle::RowColumns> topk_columns(const GoldenCase& golden, const GoldenOutputs& values);

// The block scores of SPEC 7 over [0, E_r) a candidate selection reads;
// nullopt without dense logits.
std::optional<Logits> block_scores(const GoldenCase& golden, const GoldenOutputs& values, int32_t block_size);

// The row windows of the case ([0, L_r) or [ks, ke)).
RowBounds case_bounds(const GoldenCase& golden);

}  // namespace dsa::dataset::detail
