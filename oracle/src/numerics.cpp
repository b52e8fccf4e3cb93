#include "dsa/oracle/numerics.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/oracle/float_bits.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/topk.hpp"

namespace dsa::oracle {
namespace {

constexpr double kDoubleInf = std::numeric_limits<double>::infinity();

// Nearest rank: the smallest value with at least q of the entries at or below it.
template <class T>
double quantile(const std::vector<T>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t rank = size_t(std::ceil(q * double(sorted.size())));
  return double(sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1]);
}

template <class T>
Quantiles quantiles_of(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return {quantile(v, 0.5), quantile(v, 0.9), quantile(v, 0.99), v.empty() ? 0.0 : double(v.back())};
}

nlohmann::json number_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

nlohmann::json to_json(const Quantiles& q) {
  return {{"median", number_json(q.median)}, {"p90", number_json(q.p90)}, {"p99", number_json(q.p99)},
          {"max", number_json(q.max)}};
}

nlohmann::json to_json(const ErrorEntry& e) {
  return {{"where", e.where},
          {"row", e.row},
          {"col", e.col},
          {"actual", float_json(e.actual)},
          {"exact", float_json(e.exact)},
          {"actual_bits", fmt::format("0x{:08x}", float_bits(e.actual))},
          {"exact_bits", fmt::format("0x{:08x}", float_bits(e.exact))},
          {"exact_double", number_json(e.exact_double)},
          {"magnitude", number_json(e.magnitude)},
          {"ulps", e.ulps},
          {"rel", number_json(e.rel)}};
}

bool worse(const ErrorEntry& a, const ErrorEntry& b) { return a.ulps != b.ulps ? a.ulps > b.ulps : a.rel > b.rel; }

}  // namespace

std::string_view to_string(UlpUnit unit) { return unit == UlpUnit::bf16 ? "bf16" : "fp32"; }

int ulp_bucket(uint64_t ulps) { return int(std::bit_width(ulps)); }

std::string ulp_bucket_label(int bucket) {
  if (bucket <= 1) return std::to_string(bucket);
  auto short_number = [](uint64_t v) {
    if (v >= (uint64_t(1) << 30)) return fmt::format("{}G", v >> 30);
    if (v >= (uint64_t(1) << 20)) return fmt::format("{}M", v >> 20);
    if (v >= 1024) return fmt::format("{}k", v >> 10);
    return std::to_string(v);
  };
  const uint64_t lo = uint64_t(1) << (bucket - 1);
  return bucket >= 64 ? fmt::format("[{},)", short_number(lo)) : fmt::format("[{},{})", short_number(lo), short_number(lo << 1));
}

void ErrorStats::keep_worst(const ErrorEntry& e) {
  if (!row_worst_.empty() && row_worst_.back().row == e.row && row_worst_.back().where == e.where) {
    if (worse(e, row_worst_.back())) row_worst_.back() = e;
    return;
  }
  row_worst_.push_back(e);
}

void ErrorStats::add(int64_t row, int64_t col, float actual, float exact32, double exact_double, double magnitude) {
  ErrorEntry e;
  e.row = row;
  e.col = col;
  e.actual = actual;
  e.exact = unit_ == UlpUnit::bf16 ? round_to_bf16(exact32) : exact32;
  e.exact_double = exact_double;
  e.magnitude = magnitude;
  const bool nan_a = std::isnan(actual), nan_e = std::isnan(e.exact);
  if (nan_a && nan_e) {
    ++nan_matched_;
    return;
  }
  const bool finite = std::isfinite(actual) && std::isfinite(e.exact);
  if (nan_a || nan_e || (!finite && float_bits(actual) != float_bits(e.exact))) {
    e.ulps = std::numeric_limits<uint64_t>::max();
    e.rel = kDoubleInf;
    nonfinite_.push_back(e);
    return;
  }
  if (finite) {
    e.ulps = *(unit_ == UlpUnit::bf16 ? ulp_distance_bf16(actual, e.exact) : ulp_distance(actual, e.exact));
    const double diff = std::fabs(double(actual) - exact_double);
    e.rel = magnitude > 0 ? diff / magnitude : (diff == 0 ? 0.0 : kDoubleInf);
    abs_.push_back(std::fabs(double(actual) - double(e.exact)));
  } else {
    abs_.push_back(0);  // the same infinity
  }
  ulps_.push_back(e.ulps);
  rel_.push_back(e.rel);
  keep_worst(e);
}

void ErrorStats::merge(const ErrorStats& other, const std::string& where) {
  if (other.unit_ != unit_)
    throw InvalidInput("unit", fmt::format("cannot merge {} ulps into {} ulps", to_string(other.unit_), to_string(unit_)));
  ulps_.insert(ulps_.end(), other.ulps_.begin(), other.ulps_.end());
  rel_.insert(rel_.end(), other.rel_.begin(), other.rel_.end());
  abs_.insert(abs_.end(), other.abs_.begin(), other.abs_.end());
  nan_matched_ += other.nan_matched_;
  for (ErrorEntry e : other.nonfinite_) {
    if (e.where.empty()) e.where = where;
    nonfinite_.push_back(std::move(e));
  }
  for (ErrorEntry e : other.row_worst_) {
    if (e.where.empty()) e.where = where;
    row_worst_.push_back(std::move(e));
  }
}

ErrorSummary ErrorStats::summary(int max_listed) const {
  ErrorSummary s;
  s.unit = unit_;
  s.entries = int64_t(ulps_.size());
  s.exact_bits = std::count(ulps_.begin(), ulps_.end(), uint64_t(0));
  s.nan_matched = nan_matched_;
  s.nonfinite_mismatch = int64_t(nonfinite_.size());
  s.ulps = quantiles_of(ulps_);
  s.rel = quantiles_of(rel_);
  s.max_abs_error =
      nonfinite_.empty() ? (abs_.empty() ? 0.0 : *std::max_element(abs_.begin(), abs_.end())) : kDoubleInf;
  for (const uint64_t u : ulps_) {
    const size_t b = size_t(ulp_bucket(u));
    if (s.histogram.size() <= b) s.histogram.resize(b + 1, 0);
    ++s.histogram[b];
  }
  for (const auto& e : nonfinite_) {
    if (int64_t(s.worst.size()) >= max_listed) break;
    s.worst.push_back(e);
  }
  std::vector<ErrorEntry> rows = row_worst_;
  const size_t take = std::min(rows.size(), size_t(std::max<int64_t>(0, max_listed - int64_t(s.worst.size()))));
  std::partial_sort(rows.begin(), rows.begin() + take, rows.end(), worse);
  s.worst.insert(s.worst.end(), rows.begin(), rows.begin() + take);
  return s;
}

nlohmann::json to_json(const ErrorSummary& s) {
  nlohmann::json histogram = nlohmann::json::array(), worst = nlohmann::json::array();
  for (size_t b = 0; b < s.histogram.size(); ++b)
    histogram.push_back({{"ulps", ulp_bucket_label(int(b))}, {"entries", s.histogram[b]}});
  for (const auto& e : s.worst) {
    nlohmann::json j = to_json(e);
    if (e.ulps == std::numeric_limits<uint64_t>::max()) j["ulps"] = nullptr;
    worst.push_back(std::move(j));
  }
  return {{"unit", std::string(to_string(s.unit))},
          {"entries", s.entries},
          {"exact_bits", s.exact_bits},
          {"nan_matched", s.nan_matched},
          {"nonfinite_mismatch", s.nonfinite_mismatch},
          {"ulps", to_json(s.ulps)},
          {"rel", to_json(s.rel)},
          {"max_abs_error", number_json(s.max_abs_error)},
          {"histogram", std::move(histogram)},
          {"worst", std::move(worst)}};
}

EpsNeeded selection_eps_needed(const IndexMatrix& selection, const RowColumns& values) {
  validate(selection, "selection");
  if (int64_t(values.size()) != selection.rows)
    throw InvalidInput("values", fmt::format("{} rows of values for {} rows of selection", values.size(), selection.rows));
  EpsNeeded out;
  out.rows = selection.rows;
  for (int64_t r = 0; r < selection.rows; ++r) {
    const auto& cols = values[size_t(r)];
    const int64_t n = int64_t(cols.size()), k = selection.cols, valid = std::min(k, n);
    double need = 0;
    std::vector<char> chosen(size_t(n), 0);
    for (int64_t s = 0; s < k && need < kDoubleInf; ++s) {
      const int32_t p = selection.row(r)[s];
      if (s >= valid) {
        if (p != -1) need = kDoubleInf;
        continue;
      }
      const auto it = std::lower_bound(cols.begin(), cols.end(), int64_t(p),
                                       [](const PositionedValue& c, int64_t q) { return c.position < q; });
      if (p < 0 || it == cols.end() || it->position != p || chosen[size_t(it - cols.begin())]) {
        need = kDoubleInf;
        continue;
      }
      chosen[size_t(it - cols.begin())] = 1;
    }
    if (need < kDoubleInf && valid > 0) {
      std::vector<uint32_t> keys(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) keys[size_t(i)] = topk_order_key(cols[size_t(i)].value);
      std::vector<uint32_t> sorted = keys;
      std::nth_element(sorted.begin(), sorted.begin() + (valid - 1), sorted.end(), std::greater<>());
      const uint32_t cut_key = sorted[size_t(valid - 1)];
      float cut = 0;
      for (int64_t i = 0; i < n; ++i)
        if (keys[size_t(i)] == cut_key) cut = cols[size_t(i)].value;
      for (int64_t i = 0; i < n; ++i) {
        const bool below = keys[size_t(i)] < cut_key, above = keys[size_t(i)] > cut_key;
        if (!(chosen[size_t(i)] ? below : above)) continue;
        const float v = cols[size_t(i)].value;
        if (!std::isfinite(v) || !std::isfinite(cut)) {
          need = kDoubleInf;
          break;
        }
        need = std::max(need, std::fabs(double(v) - double(cut)));
      }
    }
    if (need > 0) {
      ++out.rows_needing_eps;
      if (need > out.eps || out.worst_row < 0) out.worst_row = r;
      out.eps = std::max(out.eps, need);
    }
  }
  return out;
}

nlohmann::json to_json(const EpsNeeded& e) {
  return {{"eps", number_json(e.eps)}, {"rows", e.rows}, {"rows_needing_eps", e.rows_needing_eps},
          {"worst_row", e.worst_row}};
}

std::string ulp_histogram_svg(const std::string& title, const std::vector<HistogramSeries>& series) {
  constexpr double kWidth = 760, kHeight = 380, kLeft = 64, kRight = 16, kTop = 56, kBottom = 64;
  size_t buckets = 1;
  double top = 0;
  for (const auto& s : series) {
    buckets = std::max(buckets, s.summary.histogram.size());
    for (const int64_t count : s.summary.histogram)
      if (s.summary.entries > 0) top = std::max(top, double(count) / double(s.summary.entries));
  }
  top = top > 0 ? std::min(1.0, std::ceil(top * 10) / 10) : 1.0;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const double group = plot_w / double(buckets), bar = group * 0.8 / double(std::max<size_t>(1, series.size()));
  auto escape = [](const std::string& s) {
    std::string out;
    for (const char c : s) {
      if (c == '<') out += "&lt;";
      else if (c == '>') out += "&gt;";
      else if (c == '&') out += "&amp;";
      else out += c;
    }
    return out;
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{3}</text>\n",
      kWidth, kHeight, kLeft, escape(title));
  for (int t = 0; t <= 4; ++t) {
    const double y = kTop + plot_h * (1 - t / 4.0);
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", kLeft, y,
                       kWidth - kRight, y);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.0f}%</text>\n", kLeft - 6, y + 4,
                       top * 100 * t / 4.0);
  }
  for (size_t b = 0; b < buckets; ++b) {
    const double x0 = kLeft + group * double(b) + group * 0.1;
    for (size_t i = 0; i < series.size(); ++i) {
      const auto& s = series[i].summary;
      const double fraction = b < s.histogram.size() && s.entries > 0 ? double(s.histogram[b]) / double(s.entries) : 0;
      const double h = plot_h * fraction / top;
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
                         "<title>{}: {} entries at {} ulp</title></rect>\n",
                         x0 + bar * double(i), kTop + plot_h - h, bar, h, series[i].color, escape(series[i].label),
                         b < s.histogram.size() ? s.histogram[b] : 0, ulp_bucket_label(int(b)));
    }
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"10\">{}</text>\n",
                       x0 + group * 0.4,
                       kTop + plot_h + 16, escape(ulp_bucket_label(int(b))));
  }
  const std::string unit = series.empty() ? "fp32" : std::string(to_string(series.front().summary.unit));
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"black\"/>\n", kLeft,
                     kTop + plot_h, kWidth - kRight);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">distance to the exact arithmetic ({} ulps)"
                     "</text>\n",
                     kLeft + plot_w / 2, kHeight - 18, unit);
  for (size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i].summary;
    const double y = 40, x = kLeft + 340.0 * double(i);
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", x, y - 10,
                       series[i].color);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}: median {:g}, max {:g} ulp ({} entries)</text>\n", x + 16,
                       y, escape(series[i].label), s.ulps.median, s.ulps.max, s.entries);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace dsa::oracle
