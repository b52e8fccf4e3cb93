#include "dsa/oracle/logits_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "dsa/error.hpp"
#include "dsa/oracle/float_bits.hpp"

namespace dsa::oracle {
namespace {

void validate_shape(const Logits& l, const char* name) {
  if (l.rows < 0 || l.width < 0 || int64_t(l.values.size()) != l.rows * l.width)
    throw InvalidInput(name, fmt::format("{} values for shape [{}][{}]", l.values.size(), l.rows, l.width));
}

bool within_tolerance(float a, float e, const LogitsTolerance& t) {
  if (!std::isfinite(a) || !std::isfinite(e)) return false;  // equal bits were handled before
  const double diff = std::fabs(double(a) - double(e));
  if (diff <= t.abs + t.rel * std::fabs(double(e))) return true;
  return *ulp_distance(a, e) <= t.ulps;
}

}  // namespace

const char* LogitsMismatch::kind() const {
  if (never_written) return "never written";
  if (inf_vs_finite) return actual == actual && std::isinf(actual) ? "inf, expected finite" : "finite, expected inf";
  if (!ulps) return "NaN vs number";
  return "differs";
}

LogitsVerdict check_logits(const Logits& actual, const Logits& expected, const RowBounds& bounds,
                           const LogitsCheckOptions& options) {
  validate_shape(actual, "actual logits");
  validate_shape(expected, "expected logits");
  if (actual.rows != expected.rows || actual.width != expected.width)
    throw InvalidInput("actual logits", fmt::format("shape [{}][{}] differs from the expected [{}][{}]", actual.rows,
                                                    actual.width, expected.rows, expected.width));
  check_row_bounds(actual, bounds);
  if (options.tolerance) {
    const auto& t = *options.tolerance;
    if (!(t.abs >= 0) || !(t.rel >= 0) || !std::isfinite(t.abs) || !std::isfinite(t.rel))
      throw InvalidInput("tolerance", fmt::format("abs = {}, rel = {} must be finite and >= 0", t.abs, t.rel));
  }

  LogitsVerdict v;
  v.clean = options.clean;
  v.tolerance_mode = options.tolerance.has_value();
  v.rows = actual.rows;
  const size_t listed = size_t(std::max(options.max_listed, 0));
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  std::vector<LogitsRowSummary> failing;

  for (int64_t r = 0; r < actual.rows; ++r) {
    const int64_t begin = bounds.start[size_t(r)], end = bounds.end[size_t(r)];
    const int64_t c_begin = options.clean ? 0 : begin;
    const int64_t c_end = options.clean ? actual.width : end;
    LogitsRowSummary row{.row = r};
    bool row_has_nan = false;
    for (int64_t c = c_begin; c < c_end; ++c) {
      const bool inside = c >= begin && c < end;
      const float a = actual.at(r, c);
      const float e = inside ? expected.at(r, c) : kNegInf;
      const bool a_poison = options.poison_bits && float_bits(a) == *options.poison_bits;
      const bool a_nan = std::isnan(a) && !a_poison;
      ++v.entries_compared;
      if (inside && (a_nan || std::isnan(e))) row_has_nan = true;

      bool match = false;
      if (a_poison) {
        match = false;
      } else if (a_nan && std::isnan(e)) {
        match = true;
        ++v.nan_matched;
      } else if (float_bits(a) == float_bits(e)) {
        match = true;
      } else if (inside && options.tolerance) {
        match = within_tolerance(a, e, *options.tolerance);
      }
      if (match) continue;

      ++v.mismatches;
      LogitsMismatch m;
      m.row = r, m.col = c, m.actual = a, m.expected = e, m.outside_window = !inside;
      m.never_written = a_poison;
      m.inf_vs_finite = !a_poison && ((std::isinf(a) && std::isfinite(e)) || (std::isfinite(a) && std::isinf(e)));
      v.never_written += m.never_written ? 1 : 0;
      v.inf_vs_finite += m.inf_vs_finite ? 1 : 0;
      m.ulps = ulp_distance(a, e);
      if (options.bf16_ulps) m.bf16_ulps = ulp_distance_bf16(a, e);
      if (m.never_written || m.inf_vs_finite) {
        // Not a distance: a huge ulp count would hide what happened.
      } else if (m.ulps) {
        v.max_ulps = std::max(v.max_ulps, *m.ulps);
        row.max_ulps = std::max(row.max_ulps, *m.ulps);
      } else {
        ++v.nan_vs_number;
        row.nan_vs_number = true;
      }
      if (std::isfinite(a) && std::isfinite(e))
        v.max_abs_diff = std::max(v.max_abs_diff, std::fabs(double(a) - double(e)));
      if (row.mismatches++ == 0) row.first_col = c;
      if (v.first_mismatches.size() < listed) v.first_mismatches.push_back(m);
    }
    if (row_has_nan) {
      if (v.rows_with_nan.size() < listed) v.rows_with_nan.push_back(r);
      ++v.rows_with_nan_count;
    }
    if (row.mismatches > 0) failing.push_back(row);
  }

  v.rows_with_mismatch = int64_t(failing.size());
  v.passed = v.mismatches == 0;
  // Worst first: NaN against a number, then the most mismatches, then the largest distance.
  const auto worse = [](const LogitsRowSummary& x, const LogitsRowSummary& y) {
    if (x.nan_vs_number != y.nan_vs_number) return x.nan_vs_number;
    if (x.mismatches != y.mismatches) return x.mismatches > y.mismatches;
    if (x.max_ulps != y.max_ulps) return x.max_ulps > y.max_ulps;
    return x.row < y.row;
  };
  const size_t keep = std::min(listed, failing.size());
  std::partial_sort(failing.begin(), failing.begin() + ptrdiff_t(keep), failing.end(), worse);
  failing.resize(keep);
  v.worst_rows = std::move(failing);
  return v;
}

LogitsVerdict check_logits(const Logits& actual, const Logits& expected, std::span<const int64_t> visible_lens,
                           const LogitsCheckOptions& options) {
  return check_logits(actual, expected, decode_bounds(visible_lens), options);
}

}  // namespace dsa::oracle
