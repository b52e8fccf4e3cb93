#include "dsa/oracle/rows.hpp"

#include <fmt/format.h>

#include "dsa/error.hpp"

namespace dsa::oracle {

RowBounds decode_bounds(std::span<const int64_t> visible_lens) {
  RowBounds bounds;
  bounds.start.assign(visible_lens.size(), 0);
  bounds.end.reserve(visible_lens.size());
  for (size_t r = 0; r < visible_lens.size(); ++r) {
    if (visible_lens[r] < 0)
      throw InvalidInput("visible_lens", fmt::format("row {} has negative length {}", r, visible_lens[r]));
    bounds.end.push_back(visible_lens[r]);
  }
  return bounds;
}

RowBounds prefill_bounds(std::span<const int32_t> ks, std::span<const int32_t> ke) {
  if (ks.size() != ke.size())
    throw InvalidInput("ke", fmt::format("{} entries for {} rows of ks", ke.size(), ks.size()));
  RowBounds bounds;
  for (size_t r = 0; r < ks.size(); ++r) {
    if (ks[r] < 0 || ke[r] < ks[r])
      throw InvalidInput("ks", fmt::format("row {} has ks = {}, ke = {}", r, ks[r], ke[r]));
    bounds.start.push_back(ks[r]);
    bounds.end.push_back(ke[r]);
  }
  return bounds;
}

RowBounds full_bounds(int64_t rows, int64_t width) {
  return {std::vector<int64_t>(size_t(rows), 0), std::vector<int64_t>(size_t(rows), width)};
}

std::vector<int64_t> lengths(const RowBounds& bounds) {
  if (bounds.start.size() != bounds.end.size())
    throw InvalidInput("row_bounds", fmt::format("{} starts but {} ends", bounds.start.size(), bounds.end.size()));
  std::vector<int64_t> lens(bounds.end.size());
  for (size_t r = 0; r < lens.size(); ++r) lens[r] = bounds.end[r] - bounds.start[r];
  return lens;
}

void validate(const IndexMatrix& m, const char* name) {
  if (m.rows < 0 || m.cols <= 0)
    throw InvalidInput(name, fmt::format("shape [{}][{}] needs rows >= 0 and cols > 0", m.rows, m.cols));
  if (int64_t(m.values.size()) != m.rows * m.cols)
    throw InvalidInput(name, fmt::format("{} values for shape [{}][{}]", m.values.size(), m.rows, m.cols));
}

}  // namespace dsa::oracle
