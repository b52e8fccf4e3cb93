#include "dsa/oracle/determinism_check.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "dsa/error.hpp"

namespace dsa::oracle {

DeterminismVerdict check_determinism(const IndexMatrix& first, const IndexMatrix& second, int max_listed) {
  validate(first, "first run");
  validate(second, "second run");
  if (first.rows != second.rows || first.cols != second.cols)
    throw InvalidInput("second run", fmt::format("shape [{}][{}] differs from the first run's [{}][{}]", second.rows,
                                                 second.cols, first.rows, first.cols));
  const size_t listed = size_t(std::max(max_listed, 0));
  DeterminismVerdict v;
  v.rows = first.rows;
  v.k = first.cols;
  std::vector<int32_t> a(size_t(first.cols)), b(size_t(first.cols));
  for (int64_t r = 0; r < first.rows; ++r) {
    a.assign(first.row(r), first.row(r) + first.cols);
    b.assign(second.row(r), second.row(r) + second.cols);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a == b) continue;
    DeterminismRowDiff diff;
    diff.row = r;
    std::vector<int32_t> only;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only));
    diff.differing = int64_t(only.size());
    diff.only_first.assign(only.begin(), only.begin() + ptrdiff_t(std::min(listed, only.size())));
    only.clear();
    std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only));
    diff.only_second.assign(only.begin(), only.begin() + ptrdiff_t(std::min(listed, only.size())));
    ++v.rows_differing;
    v.differing_rows.push_back(std::move(diff));
  }
  v.passed = v.rows_differing == 0;
  auto& rows = v.differing_rows;
  const size_t keep = std::min(listed, rows.size());
  std::partial_sort(rows.begin(), rows.begin() + ptrdiff_t(keep), rows.end(), [](const auto& x, const auto& y) {
    return x.differing != y.differing ? x.differing > y.differing : x.row < y.row;
  });
  rows.resize(keep);
  return v;
}

}  // namespace dsa::oracle
