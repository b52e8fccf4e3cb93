// How the comparators see rows: the column window a row reads, and a
// read-only view of any [rows][cols] int32 index buffer (top-k indices,
// candidate blocks, a harness's raw output).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dsa/topk.hpp"

namespace dsa::oracle {

// Columns [begin, end) of a logits row. Decode rows are [0, L_r) (SPEC 4);
// prefill rows are [ks, ke) and their top-k indices count from ks (SPEC 6).
struct RowWindow {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// Decode windows [0, len_r).
std::vector<RowWindow> decode_windows(std::span<const int64_t> visible_lens);
// Prefill windows [ks_r, ke_r). Throws InvalidInput("ks"/"ke") on mismatched sizes.
std::vector<RowWindow> prefill_windows(std::span<const int32_t> ks, std::span<const int32_t> ke);

struct IndexMatrix {
  std::span<const int32_t> values;  // row-major [rows][cols]
  int64_t rows = 0;
  int64_t cols = 0;
  const int32_t* row(int64_t r) const { return values.data() + r * cols; }
};

inline IndexMatrix view(const TopkIndices& t) { return {t.indices, t.rows, t.k}; }

// Throws InvalidInput(name) unless values.size() == rows * cols, rows >= 0, cols > 0.
void validate(const IndexMatrix& m, const char* name);

}  // namespace dsa::oracle
