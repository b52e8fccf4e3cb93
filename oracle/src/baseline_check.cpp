#include "dsa/oracle/baseline_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsa/error.hpp"
#include "dsa/oracle/float_bits.hpp"
#include "dsa/topk.hpp"
#include "shared_constants.hpp"

namespace dsa::oracle {
namespace {

bool same_value(float a, float b) { return (std::isnan(a) && std::isnan(b)) || float_bits(a) == float_bits(b); }

bool same_columns(const std::vector<PositionedValue>& a, const std::vector<PositionedValue>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].position != b[i].position || !same_value(a[i].value, b[i].value)) return false;
  return true;
}

// What one row chose: its valid positions (sorted) and their values' order
// keys (sorted); a position that is none of the row's columns gets a key of
// its own, so that it can never look like a tie.
struct BaselineChoice {
  std::vector<int64_t> positions;
  std::vector<uint64_t> keys;
  int64_t minus_one = 0;
  bool same_set(const BaselineChoice& o) const { return positions == o.positions && minus_one == o.minus_one; }
  bool same_values(const BaselineChoice& o) const { return keys == o.keys && minus_one == o.minus_one; }
};

const PositionedValue* find_column(const std::vector<PositionedValue>& columns, int64_t position) {
  const auto it = std::lower_bound(columns.begin(), columns.end(), position,
                                   [](const PositionedValue& c, int64_t p) { return c.position < p; });
  return it != columns.end() && it->position == position ? &*it : nullptr;
}

BaselineChoice choice_of(const int32_t* slots, int64_t k, const std::vector<PositionedValue>& columns) {
  BaselineChoice c;
  for (int64_t s = 0; s < k; ++s) {
    if (slots[s] == -1) {
      ++c.minus_one;
      continue;
    }
    c.positions.push_back(slots[s]);
    const PositionedValue* col = find_column(columns, slots[s]);
    c.keys.push_back(col ? uint64_t(topk_order_key(col->value)) : (uint64_t(1) << 40) + uint64_t(uint32_t(slots[s])));
  }
  std::sort(c.positions.begin(), c.positions.end());
  std::sort(c.keys.begin(), c.keys.end());
  return c;
}

// v*: the k'-th largest value of the row (-inf for an empty row).
float cut_of(const std::vector<PositionedValue>& columns, int64_t k) {
  const int64_t valid = std::min<int64_t>(k, int64_t(columns.size()));
  if (valid == 0) return kNegInf;
  std::vector<std::pair<uint32_t, float>> keyed;
  keyed.reserve(columns.size());
  for (const auto& c : columns) keyed.emplace_back(topk_order_key(c.value), c.value);
  std::nth_element(keyed.begin(), keyed.begin() + (valid - 1), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  return keyed[size_t(valid - 1)].second;
}

SelectionChangeRow change_row(int64_t r, const BaselineChoice& n, const BaselineChoice& b, float cut, int max_listed) {
  SelectionChangeRow row;
  row.row = r;
  row.cut = cut;
  std::vector<int64_t> only_new, only_base;
  std::set_difference(n.positions.begin(), n.positions.end(), b.positions.begin(), b.positions.end(),
                      std::back_inserter(only_new));
  std::set_difference(b.positions.begin(), b.positions.end(), n.positions.begin(), n.positions.end(),
                      std::back_inserter(only_base));
  row.only_new_count = int64_t(only_new.size());
  row.only_baseline_count = int64_t(only_base.size());
  only_new.resize(std::min<size_t>(only_new.size(), size_t(max_listed)));
  only_base.resize(std::min<size_t>(only_base.size(), size_t(max_listed)));
  row.only_new = std::move(only_new);
  row.only_baseline = std::move(only_base);
  return row;
}

std::string positions_text(const std::vector<int64_t>& p, int64_t count) {
  std::string s = fmt::format("{}", fmt::join(p, " "));
  if (count > int64_t(p.size())) s += fmt::format(" ... ({} in all)", count);
  return s.empty() ? "-" : s;
}

}  // namespace

RowColumns window_columns(const Logits& values, const RowBounds& bounds) {
  check_row_bounds(values, bounds);
  RowColumns columns(size_t(values.rows));
  for (int64_t r = 0; r < values.rows; ++r) {
    const int64_t start = bounds.start[size_t(r)], end = bounds.end[size_t(r)];
    auto& row = columns[size_t(r)];
    row.reserve(size_t(end - start));
    for (int64_t c = start; c < end; ++c) row.push_back({c - start, values.at(r, c)});
  }
  return columns;
}

RowColumns live_block_columns(const Logits& block_scores) {
  RowColumns columns(size_t(block_scores.rows));
  for (int64_t r = 0; r < block_scores.rows; ++r)
    for (int64_t c = 0; c < block_scores.width; ++c)
      if (block_scores.at(r, c) != kNegInf) columns[size_t(r)].push_back({c, block_scores.at(r, c)});
  return columns;
}

SelectionChangeVerdict compare_selection_to_baseline(const IndexMatrix& new_sel, const RowColumns& new_values,
                                                     const IndexMatrix& baseline_sel, const RowColumns& baseline_values,
                                                     std::string what, int max_listed) {
  validate(new_sel, what.c_str());
  validate(baseline_sel, "baseline");
  if (new_sel.rows != baseline_sel.rows || new_sel.cols != baseline_sel.cols ||
      int64_t(new_values.size()) != new_sel.rows || int64_t(baseline_values.size()) != new_sel.rows)
    throw InvalidInput("baseline", fmt::format("{} is [{}][{}] with {} rows of values, the baseline's [{}][{}] with {}",
                                               what, new_sel.rows, new_sel.cols, new_values.size(), baseline_sel.rows,
                                               baseline_sel.cols, baseline_values.size()));
  SelectionChangeVerdict v;
  v.what = std::move(what);
  v.rows = new_sel.rows;
  v.k = new_sel.cols;
  for (int64_t r = 0; r < v.rows; ++r) {
    const auto& nv = new_values[size_t(r)];
    const auto& bv = baseline_values[size_t(r)];
    const BaselineChoice n = choice_of(new_sel.row(r), v.k, nv), b = choice_of(baseline_sel.row(r), v.k, bv);
    if (!same_columns(nv, bv)) {
      ++v.rows_values_differ;
      v.rows_values_differ_same_set += n.same_set(b);
      continue;
    }
    ++v.rows_values_equal;
    if (n.same_set(b)) {
      ++v.rows_identical;
      continue;
    }
    const float cut = cut_of(nv, v.k);
    if (n.same_values(b)) {
      ++v.rows_tie_changes;
      if (int64_t(v.tie_changes.size()) < max_listed) v.tie_changes.push_back(change_row(r, n, b, cut, max_listed));
      continue;
    }
    ++v.rows_changed;
    const IndexMatrix one{baseline_sel.values.subspan(size_t(r * v.k), size_t(v.k)), 1, v.k};
    const bool broken = !check_topk_among(one, RowColumns{bv}).passed;
    v.rows_changed_baseline_broken += broken;
    if (int64_t(v.changes.size()) < max_listed) {
      v.changes.push_back(change_row(r, n, b, cut, max_listed));
      v.changes.back().baseline_breaks_rule = broken;
    }
  }
  v.passed = v.rows_changed == 0;
  return v;
}

std::string summary_line(const SelectionChangeVerdict& v) {
  std::string s = fmt::format("{} vs baseline: {}  ", v.what, v.passed ? "PASS" : "FAIL");
  if (!v.passed) {
    s += fmt::format("{} of {} rows with the baseline's values chose other values", v.rows_changed, v.rows_values_equal);
    if (v.rows_changed_baseline_broken)
      s += fmt::format(" ({} where the baseline's own set breaks the rule: a fix? re-record the baseline)",
                       v.rows_changed_baseline_broken);
    s += "; ";
  }
  s += fmt::format("{} rows with the baseline's values: {} same set, {} differ only among ties at the cut", v.rows_values_equal,
                   v.rows_identical, v.rows_tie_changes);
  if (v.rows_tie_changes) s += " (legal: a tie-break change)";
  if (v.rows_values_differ)
    s += fmt::format("; {} rows with other values, not compared by set ({} chose the same set all the same)",
                     v.rows_values_differ, v.rows_values_differ_same_set);
  return s;
}

std::string format_table(const SelectionChangeVerdict& v) {
  std::string out = summary_line(v) + "\n";
  if (v.changes.empty() && v.tie_changes.empty()) return out;
  out += fmt::format("  {:>7} {:>12} {:>15}  {}\n", "row", "change", "cut", "positions only new | only baseline");
  auto rows = [&](const std::vector<SelectionChangeRow>& list, const char* kind) {
    for (const auto& r : list)
      out += fmt::format("  {:>7} {:>12} {:>15.9g}  {} | {}{}\n", r.row, kind, r.cut,
                         positions_text(r.only_new, r.only_new_count),
                         positions_text(r.only_baseline, r.only_baseline_count),
                         r.baseline_breaks_rule ? "  (the baseline breaks the rule)" : "");
  };
  rows(v.changes, "values");
  rows(v.tie_changes, "ties");
  return out;
}

nlohmann::json to_json(const SelectionChangeVerdict& v) {
  auto rows = [](const std::vector<SelectionChangeRow>& list) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& r : list)
      a.push_back({{"row", r.row},
                   {"cut", float_json(r.cut)},
                   {"only_new", r.only_new},
                   {"only_baseline", r.only_baseline},
                   {"only_new_count", r.only_new_count},
                   {"only_baseline_count", r.only_baseline_count},
                   {"baseline_breaks_rule", r.baseline_breaks_rule}});
    return a;
  };
  return {{"output", v.what},
          {"rows", v.rows},
          {"k", v.k},
          {"rows_values_equal", v.rows_values_equal},
          {"rows_identical", v.rows_identical},
          {"rows_tie_changes", v.rows_tie_changes},
          {"rows_changed", v.rows_changed},
          {"rows_changed_baseline_broken", v.rows_changed_baseline_broken},
          {"rows_values_differ", v.rows_values_differ},
          {"rows_values_differ_same_set", v.rows_values_differ_same_set},
          {"changes", rows(v.changes)},
          {"tie_changes", rows(v.tie_changes)}};
}

Report::Entry baseline_entry(std::string label, const SelectionChangeVerdict& v) {
  return {std::move(label), "baseline_selection", v.passed, summary_line(v), format_table(v), to_json(v)};
}

}  // namespace dsa::oracle
