// How the oracle reads a row through its candidate blocks (SPEC 7): the
// columns a candidate top-k chooses among, the compact layout and which of its
// entries are defined, and the top-k rule over a row's own columns. Every
// harness (the fuzzer's properties, the golden checker) judges through these,
// so that "a candidate column" means one thing everywhere.
//
// Positions count from the row start (decode rows 0, prefill rows ks) and a
// row of length len has positions [0, len). Compact column c*S + t of a row
// holds position block_c * S + t of its slot c; it is defined when the slot is
// live (block >= 0) and the position is below len. Kernels may leave the other
// compact entries as they like.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/logits.hpp"
#include "dsa/oracle/rows.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "dsa/sparse_sm100.hpp"

namespace dsa::oracle {

// One value a top-k over a row's own columns may choose: where it lies in the row, and its value.
struct PositionedValue {
  int64_t position = 0;
  float value = 0;
};
// Per row, ascending positions, each at most once.
using RowColumns = std::vector<std::vector<PositionedValue>>;

// The position compact column `col` of `row` scores, or -1 for a column of an empty slot.
int64_t compact_position(const CandidateBlocks& candidates, int64_t row, int64_t col);
// A live slot's column at a position below len: the entries a compact kernel must write.
bool compact_defined(const CandidateBlocks& candidates, int64_t row, int64_t col, int64_t len);

// Row r's candidate columns: the positions of its live blocks below len, ascending.
std::vector<int64_t> candidate_positions(const CandidateBlocks& candidates, int64_t row, int64_t len);

// The columns a candidate top-k reads in a dense row: values.row(r)[start_r + p]
// for each candidate position p of [0, end_r - start_r). Throws InvalidInput on
// shapes that do not match ("row_bounds", "candidate_blocks").
RowColumns candidate_columns(const Logits& values, const RowBounds& bounds, const CandidateBlocks& candidates);
// The defined entries of compact rows (lens[r] positions per row), by position.
RowColumns compact_columns(const Logits& compact, const CandidateBlocks& candidates, std::span<const int64_t> lens);
// SM100 sparse rows: columns [0, end_r), each at the position it scores (row_ks[r] the row's ks).
RowColumns sparse_columns(const Logits& sparse_logits, const SparseBlocks& sparse, std::span<const int64_t> row_ks);

// The top-k rule of SPEC 9 over each row's own columns: indices are positions;
// n is the row's column count; a chosen position that is none of the row's
// columns counts as out of range. Missing and extra entries are reported as
// positions, not as places among the columns.
SelectionVerdict check_topk_among(const IndexMatrix& indices, const RowColumns& columns,
                                  const SelectionCheckOptions& options = {});

// Compact rows seen by the logits rule where they are defined and nowhere
// else: `actual` and `expected` with every undefined entry -inf on both sides,
// and `written` (for check_written) with 0 there, so that only the defined
// entries can show surviving poison. Throws InvalidInput("compact_logits")
// when a shape does not match the candidates.
struct CompactViews {
  Logits actual, expected, written;
};
CompactViews compact_views(const Logits& actual, const Logits& expected, const CandidateBlocks& candidates,
                           std::span<const int64_t> lens);
Logits compact_written_view(const Logits& actual, const CandidateBlocks& candidates, std::span<const int64_t> lens);
// What a candidate mask must leave (SPEC 7): inside each row's [start, end),
// -inf at every column that is not one of its candidate columns; outside it
// -inf as well (full: vLLM's apply_candidate_mask) or the values as they were
// (strided: the gfx942 launch). Every entry of the result is defined.
Logits expected_candidate_mask(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                               CandidateMask variant);

// What compact rows must hold if they equal the dense logits: values.row(r)[start_r + p]
// at each defined entry, -inf elsewhere (lens = end - start).
Logits compact_from_dense(const Logits& dense, const RowBounds& bounds, const CandidateBlocks& candidates);

}  // namespace dsa::oracle
