#include "dsa/oracle/choice_check.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsa/error.hpp"
#include "dsa/topk.hpp"
#include "shared_constants.hpp"

namespace dsa::oracle {
namespace {

constexpr size_t kShownValues = 8;

struct RowChoice {
  std::vector<uint32_t> keys;  // order keys of the chosen values, sorted
  int64_t minus_one = 0;
  std::string problem;
};

RowChoice row_choice(const int32_t* idx, int64_t k, const float* row, int64_t n, bool above_neg_inf_only) {
  RowChoice c;
  std::vector<int32_t> seen;
  for (int64_t s = 0; s < k; ++s) {
    const int32_t i = idx[s];
    if (i == -1) {
      ++c.minus_one;
      continue;
    }
    if (i < 0 || i >= n) {
      if (c.problem.empty()) c.problem = fmt::format("slot {} holds {}, outside the row's [0, {})", s, i, n);
      continue;
    }
    if (std::find(seen.begin(), seen.end(), i) != seen.end()) {
      if (c.problem.empty()) c.problem = fmt::format("slot {} repeats index {}", s, i);
      continue;
    }
    seen.push_back(i);
    if (above_neg_inf_only && row[i] == kNegInf) continue;
    c.keys.push_back(topk_order_key(row[i]));
  }
  std::sort(c.keys.begin(), c.keys.end());
  return c;
}

// The values of `keys` (a key is a value up to NaN payloads), the first kShownValues.
std::vector<float> values_of(const std::vector<uint32_t>& keys, const float* row, int64_t n) {
  std::vector<float> out;
  for (size_t i = 0; i < std::min(keys.size(), kShownValues); ++i) {
    float v = std::numeric_limits<float>::quiet_NaN();
    for (int64_t c = 0; c < n; ++c)
      if (topk_order_key(row[c]) == keys[i]) {
        v = row[c];
        break;
      }
    out.push_back(v);
  }
  return out;
}

}  // namespace

ChoiceVerdict check_same_choice(const IndexMatrix& first, std::string first_name, const IndexMatrix& second,
                                std::string second_name, const Logits& values, const RowBounds& bounds,
                                bool above_neg_inf_only, int max_listed) {
  validate(first, "indices");
  validate(second, "indices");
  if (first.rows != second.rows || first.cols != second.cols || first.rows != values.rows)
    throw InvalidInput("indices",
                       fmt::format("{} is [{}][{}] but {} is [{}][{}], for {} rows of values", first_name, first.rows,
                                   first.cols, second_name, second.rows, second.cols, values.rows));
  check_row_bounds(values, bounds);
  ChoiceVerdict v;
  v.first = std::move(first_name);
  v.second = std::move(second_name);
  v.above_neg_inf_only = above_neg_inf_only;
  v.rows = first.rows;
  for (int64_t r = 0; r < first.rows; ++r) {
    const int64_t start = bounds.start[size_t(r)], n = bounds.end[size_t(r)] - start;
    const float* row = values.row(r) + start;
    const RowChoice a = row_choice(first.row(r), first.cols, row, n, above_neg_inf_only);
    const RowChoice b = row_choice(second.row(r), second.cols, row, n, above_neg_inf_only);
    ChoiceRowDiff d;
    d.row = r;
    d.start = start;
    d.end = start + n;
    if (!a.problem.empty() || !b.problem.empty()) {
      d.problem = !a.problem.empty() ? v.first + ": " + a.problem : v.second + ": " + b.problem;
    } else if (a.keys == b.keys && (above_neg_inf_only || a.minus_one == b.minus_one)) {
      continue;
    } else {
      d.first_values = int64_t(a.keys.size()), d.first_minus_one = a.minus_one;
      d.second_values = int64_t(b.keys.size()), d.second_minus_one = b.minus_one;
      std::vector<uint32_t> only_a, only_b;
      std::set_difference(a.keys.begin(), a.keys.end(), b.keys.begin(), b.keys.end(), std::back_inserter(only_a));
      std::set_difference(b.keys.begin(), b.keys.end(), a.keys.begin(), a.keys.end(), std::back_inserter(only_b));
      d.only_first = values_of(only_a, row, n), d.only_first_count = int64_t(only_a.size());
      d.only_second = values_of(only_b, row, n), d.only_second_count = int64_t(only_b.size());
    }
    ++v.rows_differing;
    if (int64_t(v.first_rows.size()) < max_listed) v.first_rows.push_back(std::move(d));
  }
  v.passed = v.rows_differing == 0;
  return v;
}

std::string summary_line(const ChoiceVerdict& v) {
  const char* what = v.above_neg_inf_only ? "values above -inf" : "values and -1 slots";
  if (v.passed)
    return fmt::format("same choice: PASS  {} and {} choose the same {} in {} rows", v.first, v.second, what, v.rows);
  return fmt::format("same choice: FAIL  {} and {} choose different {} in {} of {} rows", v.first, v.second, what,
                     v.rows_differing, v.rows);
}

std::string format_table(const ChoiceVerdict& v) {
  std::string out = summary_line(v) + "\n";
  auto shown = [](const std::vector<float>& values, int64_t count) {
    return fmt::format("[{}{}]", fmt::join(values, " "),
                       count > int64_t(values.size()) ? fmt::format(" ... ({} in all)", count) : "");
  };
  for (const auto& d : v.first_rows) {
    if (!d.problem.empty()) {
      out += fmt::format("  row {} (window [{}, {})): {}\n", d.row, d.start, d.end, d.problem);
      continue;
    }
    out += fmt::format(
        "  row {} (window [{}, {})): {} chose {} values and {} x -1, {} chose {} values and {} x -1; "
        "values only in {}: {}; only in {}: {}\n",
        d.row, d.start, d.end, v.first, d.first_values, d.first_minus_one, v.second, d.second_values,
        d.second_minus_one, v.first, shown(d.only_first, d.only_first_count), v.second,
        shown(d.only_second, d.only_second_count));
  }
  return out;
}

}  // namespace dsa::oracle
