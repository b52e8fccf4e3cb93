#include "dsa/oracle/candidate_views.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "dsa/error.hpp"
#include "shared_constants.hpp"

namespace dsa::oracle {
namespace {

void check_candidate_rows(const CandidateBlocks& candidates, int64_t rows) {
  candidates.validate();
  if (candidates.rows != rows)
    throw InvalidInput("candidate_blocks",
                       fmt::format("{} rows of candidate blocks for {} rows", candidates.rows, rows));
}

void check_lens(std::span<const int64_t> lens, int64_t rows) {
  if (int64_t(lens.size()) != rows)
    throw InvalidInput("lens", fmt::format("{} row lengths for {} rows", lens.size(), rows));
}

void check_compact_shape(const Logits& compact, const CandidateBlocks& candidates, const char* name) {
  const int64_t width = int64_t(candidates.slots) * candidates.block_size;
  if (compact.rows != candidates.rows || compact.width != width ||
      int64_t(compact.values.size()) != compact.rows * width)
    throw InvalidInput(name, fmt::format("shape [{}][{}] ({} values); the candidate blocks need [{}][{}]", compact.rows,
                                         compact.width, compact.values.size(), candidates.rows, width));
}

void sort_by_position(std::vector<PositionedValue>& row) {
  std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.position < b.position; });
}

}  // namespace

int64_t compact_position(const CandidateBlocks& candidates, int64_t row, int64_t col) {
  const int64_t S = candidates.block_size;
  const int64_t block = candidates.row(row)[col / S];
  return block < 0 ? -1 : block * S + col % S;
}

bool compact_defined(const CandidateBlocks& candidates, int64_t row, int64_t col, int64_t len) {
  const int64_t p = compact_position(candidates, row, col);
  return p >= 0 && p < len;
}

std::vector<int64_t> candidate_positions(const CandidateBlocks& candidates, int64_t row, int64_t len) {
  std::vector<int64_t> positions;
  for (int32_t s = 0; s < candidates.slots; ++s) {
    const int64_t block = candidates.row(row)[s];
    if (block < 0) continue;
    for (int64_t p = block * candidates.block_size; p < std::min(len, (block + 1) * candidates.block_size); ++p)
      positions.push_back(p);
  }
  std::sort(positions.begin(), positions.end());
  return positions;
}

RowColumns candidate_columns(const Logits& values, const RowBounds& bounds, const CandidateBlocks& candidates) {
  check_row_bounds(values, bounds);
  check_candidate_rows(candidates, values.rows);
  RowColumns columns(size_t(values.rows));
  for (int64_t r = 0; r < values.rows; ++r) {
    const int64_t start = bounds.start[size_t(r)];
    for (const int64_t p : candidate_positions(candidates, r, bounds.end[size_t(r)] - start))
      columns[size_t(r)].push_back({p, values.at(r, start + p)});
  }
  return columns;
}

RowColumns compact_columns(const Logits& compact, const CandidateBlocks& candidates, std::span<const int64_t> lens) {
  candidates.validate();
  check_compact_shape(compact, candidates, "compact_logits");
  check_lens(lens, compact.rows);
  RowColumns columns(size_t(compact.rows));
  for (int64_t r = 0; r < compact.rows; ++r) {
    for (int64_t col = 0; col < compact.width; ++col)
      if (compact_defined(candidates, r, col, lens[size_t(r)]))
        columns[size_t(r)].push_back({compact_position(candidates, r, col), compact.at(r, col)});
    sort_by_position(columns[size_t(r)]);
  }
  return columns;
}

RowColumns sparse_columns(const Logits& sparse_logits, const SparseBlocks& sparse, std::span<const int64_t> row_ks) {
  if (sparse_logits.rows != sparse.rows || sparse_logits.width != sparse.width() ||
      int64_t(sparse.end.size()) != sparse.rows || int64_t(row_ks.size()) != sparse.rows)
    throw InvalidInput("sparse_logits",
                       fmt::format("shape [{}][{}] for {} sparse rows of width {} ({} ends, {} ks)", sparse_logits.rows,
                                   sparse_logits.width, sparse.rows, sparse.width(), sparse.end.size(), row_ks.size()));
  RowColumns columns(size_t(sparse.rows));
  for (int64_t r = 0; r < sparse.rows; ++r) {
    const int64_t end = sparse.end[size_t(r)];
    if (end < 0 || end > sparse.width())
      throw InvalidInput("sparse_end", fmt::format("row {} has end {} outside [0, {}]", r, end, sparse.width()));
    for (int64_t col = 0; col < end; ++col)
      columns[size_t(r)].push_back({sparse_column_position(sparse, row_ks, r, col), sparse_logits.at(r, col)});
    sort_by_position(columns[size_t(r)]);
  }
  return columns;
}

SelectionVerdict check_topk_among(const IndexMatrix& indices, const RowColumns& columns,
                                  const SelectionCheckOptions& options) {
  validate(indices, "topk indices");
  if (int64_t(columns.size()) != indices.rows)
    throw InvalidInput("topk indices",
                       fmt::format("{} rows of indices for {} rows of columns", indices.rows, columns.size()));
  // The rule runs on the columns gathered in position order; each chosen
  // position becomes its place among them, and a position that is not one of
  // them a place past every row (out of range).
  constexpr int32_t kNotAColumn = std::numeric_limits<int32_t>::max();
  size_t widest = 0;
  for (const auto& row : columns) widest = std::max(widest, row.size());
  Logits gathered{indices.rows, int64_t(widest), std::vector<float>(size_t(indices.rows) * widest, kNegInf)};
  std::vector<int32_t> places(indices.values.begin(), indices.values.end());
  RowBounds bounds{std::vector<int64_t>(size_t(indices.rows), 0), std::vector<int64_t>(size_t(indices.rows))};
  for (int64_t r = 0; r < indices.rows; ++r) {
    const auto& row = columns[size_t(r)];
    for (size_t i = 0; i < row.size(); ++i) gathered.row(r)[i] = row[i].value;
    bounds.end[size_t(r)] = int64_t(row.size());
    for (int64_t s = 0; s < indices.cols; ++s) {
      int32_t& idx = places[size_t(r * indices.cols + s)];
      if (idx < 0) continue;  // -1, or poison: the rule reports it
      const auto it = std::lower_bound(row.begin(), row.end(), int64_t(idx),
                                       [](const PositionedValue& c, int64_t p) { return c.position < p; });
      idx = (it != row.end() && it->position == idx) ? int32_t(it - row.begin()) : kNotAColumn;
    }
  }
  SelectionVerdict v = check_topk({places, indices.rows, indices.cols}, gathered, bounds, options);
  // Back from places among the columns to the positions the kernel wrote.
  for (auto& issue : v.failed_rows) {
    const auto& row = columns[size_t(issue.row)];
    for (auto* list : {&issue.missing, &issue.extra})
      for (int32_t& i : *list) i = int32_t(row[size_t(i)].position);
  }
  return v;
}

CompactViews compact_views(const Logits& actual, const Logits& expected, const CandidateBlocks& candidates,
                           std::span<const int64_t> lens) {
  candidates.validate();
  check_compact_shape(actual, candidates, "compact_logits");
  check_compact_shape(expected, candidates, "expected compact_logits");
  check_lens(lens, actual.rows);
  CompactViews v{actual, expected, actual};
  for (int64_t r = 0; r < actual.rows; ++r)
    for (int64_t col = 0; col < actual.width; ++col) {
      if (compact_defined(candidates, r, col, lens[size_t(r)])) continue;
      v.actual.row(r)[col] = v.expected.row(r)[col] = kNegInf;
      v.written.row(r)[col] = 0;
    }
  return v;
}

Logits compact_written_view(const Logits& actual, const CandidateBlocks& candidates, std::span<const int64_t> lens) {
  candidates.validate();
  check_compact_shape(actual, candidates, "compact_logits");
  check_lens(lens, actual.rows);
  Logits written = actual;
  for (int64_t r = 0; r < actual.rows; ++r)
    for (int64_t col = 0; col < actual.width; ++col)
      if (!compact_defined(candidates, r, col, lens[size_t(r)])) written.row(r)[col] = 0;
  return written;
}

Logits expected_candidate_mask(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                               CandidateMask variant) {
  check_row_bounds(logits, bounds);
  check_candidate_rows(candidates, logits.rows);
  Logits out = logits;
  for (int64_t r = 0; r < logits.rows; ++r) {
    const int64_t start = bounds.start[size_t(r)], end = bounds.end[size_t(r)];
    float* row = out.row(r);
    std::vector<uint8_t> keep(size_t(end - start), 0);
    for (const int64_t p : candidate_positions(candidates, r, end - start)) keep[size_t(p)] = 1;
    for (int64_t n = start; n < end; ++n)
      if (!keep[size_t(n - start)]) row[n] = kNegInf;
    if (variant == CandidateMask::full) {
      std::fill(row, row + start, kNegInf);
      std::fill(row + end, row + logits.width, kNegInf);
    }
  }
  return out;
}

Logits compact_from_dense(const Logits& dense, const RowBounds& bounds, const CandidateBlocks& candidates) {
  check_row_bounds(dense, bounds);
  check_candidate_rows(candidates, dense.rows);
  const int64_t width = int64_t(candidates.slots) * candidates.block_size;
  Logits out{dense.rows, width, std::vector<float>(size_t(dense.rows * width), kNegInf)};
  for (int64_t r = 0; r < out.rows; ++r) {
    const int64_t start = bounds.start[size_t(r)], len = bounds.end[size_t(r)] - start;
    for (int64_t col = 0; col < width; ++col)
      if (compact_defined(candidates, r, col, len))
        out.row(r)[col] = dense.at(r, start + compact_position(candidates, r, col));
  }
  return out;
}

}  // namespace dsa::oracle
