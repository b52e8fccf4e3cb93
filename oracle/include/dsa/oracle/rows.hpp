// How the comparators see rows: the column range [start, end) each row reads,
// as the dsa::RowBounds that IndexerOps takes (one type for the judge and the
// judged), and a read-only view of any [rows][cols] int32 index buffer (top-k
// indices, candidate blocks, a harness's raw output).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/topk.hpp"

namespace dsa::oracle {

// Decode rows read [0, L_r) (SPEC 4). Throws InvalidInput("visible_lens") for a negative length.
RowBounds decode_bounds(std::span<const int64_t> visible_lens);
// Prefill rows read [ks, ke) and their top-k indices count from ks (SPEC 6).
// Throws InvalidInput("ks"/"ke") on mismatched sizes or a reversed range.
RowBounds prefill_bounds(std::span<const int32_t> ks, std::span<const int32_t> ke);
// Every row [0, width).
RowBounds full_bounds(int64_t rows, int64_t width);
// The row lengths end - start.
std::vector<int64_t> lengths(const RowBounds& bounds);

struct IndexMatrix {
  std::span<const int32_t> values;  // row-major [rows][cols]
  int64_t rows = 0;
  int64_t cols = 0;
  const int32_t* row(int64_t r) const { return values.data() + r * cols; }
};

inline IndexMatrix view(const TopkIndices& t) { return {t.indices, t.rows, t.k}; }
inline IndexMatrix view(const CandidateBlocks& b) { return {b.blocks, b.rows, b.slots}; }

// Throws InvalidInput(name) unless values.size() == rows * cols, rows >= 0, cols > 0.
void validate(const IndexMatrix& m, const char* name);

}  // namespace dsa::oracle
