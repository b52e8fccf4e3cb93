#include "dsa/oracle/poison.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "dsa/error.hpp"
#include "dsa/oracle/float_bits.hpp"

namespace dsa::oracle {

void fill_poison(std::span<float> values, uint32_t bits) {
  std::fill(values.begin(), values.end(), float_from_bits(bits));
}
void fill_poison(std::span<int32_t> values, int32_t poison) { std::fill(values.begin(), values.end(), poison); }

namespace {

size_t entries(int64_t rows, int64_t cols, const char* name) {
  if (rows < 0 || cols < 0) throw InvalidInput(name, fmt::format("a poisoned buffer of [{}][{}]", rows, cols));
  return size_t(rows) * size_t(cols);
}

}  // namespace

Logits poisoned_logits(int64_t rows, int64_t width, uint32_t bits) {
  Logits l{rows, width, std::vector<float>(entries(rows, width, "logits"))};
  fill_poison(l.values, bits);
  return l;
}

TopkIndices poisoned_topk(int64_t rows, int32_t k) {
  return {rows, k, std::vector<int32_t>(entries(rows, k, "topk_indices"), kPoisonI32)};
}

CandidateBlocks poisoned_blocks(int64_t rows, int32_t slots, int32_t block_size) {
  return {rows, slots, block_size, std::vector<int32_t>(entries(rows, slots, "candidate_blocks"), kPoisonI32)};
}

SparseBlocks poisoned_sparse(int64_t rows, int32_t num_sparse, int32_t sparse_block_kv) {
  return {rows, num_sparse, sparse_block_kv, std::vector<int32_t>(entries(rows, num_sparse, "sparse_blocks"), kPoisonI32),
          std::vector<int32_t>(entries(rows, 1, "sparse_blocks"), kPoisonI32)};
}

namespace {

// Scans row r's columns [begin, end) for `is_poison`.
template <class IsPoison>
void scan_row(WrittenVerdict& v, int64_t r, int64_t begin, int64_t end, size_t listed, IsPoison&& is_poison) {
  int64_t found = 0;
  for (int64_t c = begin; c < end; ++c) {
    if (!is_poison(c)) continue;
    ++found;
    if (v.first_survivors.size() < listed) v.first_survivors.push_back({r, c});
  }
  v.entries_checked += end - begin;
  v.survivors += found;
  v.rows_with_survivors += found > 0;
}

}  // namespace

WrittenVerdict check_written(const IndexMatrix& out, std::string buffer, int32_t poison, int max_listed) {
  validate(out, buffer.c_str());
  WrittenVerdict v;
  v.buffer = std::move(buffer);
  v.poison_bits = uint32_t(poison);
  v.rows = out.rows;
  const size_t listed = size_t(std::max(max_listed, 0));
  for (int64_t r = 0; r < out.rows; ++r) {
    const int32_t* row = out.row(r);
    scan_row(v, r, 0, out.cols, listed, [&](int64_t c) { return row[c] == poison; });
  }
  v.passed = v.survivors == 0;
  return v;
}

WrittenVerdict check_written(const Logits& out, const RowBounds& bounds, std::string buffer, uint32_t poison_bits,
                             int max_listed) {
  if (out.rows < 0 || out.width < 0 || int64_t(out.values.size()) != out.rows * out.width)
    throw InvalidInput(buffer, fmt::format("{} values for shape [{}][{}]", out.values.size(), out.rows, out.width));
  check_row_bounds(out, bounds);
  WrittenVerdict v;
  v.buffer = std::move(buffer);
  v.poison_bits = poison_bits;
  v.rows = out.rows;
  const size_t listed = size_t(std::max(max_listed, 0));
  for (int64_t r = 0; r < out.rows; ++r) {
    const float* row = out.row(r);
    scan_row(v, r, bounds.start[size_t(r)], bounds.end[size_t(r)], listed,
             [&](int64_t c) { return float_bits(row[c]) == poison_bits; });
  }
  v.passed = v.survivors == 0;
  return v;
}

WrittenVerdict check_written(const Logits& out, std::string buffer, uint32_t poison_bits, int max_listed) {
  if (out.rows < 0 || out.width < 0 || int64_t(out.values.size()) != out.rows * out.width)
    throw InvalidInput(buffer, fmt::format("{} values for shape [{}][{}]", out.values.size(), out.rows, out.width));
  return check_written(out, full_bounds(out.rows, out.width), std::move(buffer), poison_bits, max_listed);
}

}  // namespace dsa::oracle
