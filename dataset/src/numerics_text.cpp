// The numerics report as a table, as JSON and as an SVG histogram.
#include <cmath>

#include <fmt/format.h>

#include "dsa/dataset/numerics.hpp"

namespace dsa::dataset {
namespace {

using oracle::ErrorSummary;
using oracle::UlpUnit;

std::string ulps_text(double v) { return std::isinf(v) ? "inf" : fmt::format("{:.0f}", v); }
std::string number_text(double v) { return std::isinf(v) ? "inf" : fmt::format("{:.3g}", v); }

std::string row_of(const std::string& name, const char* side, const ErrorSummary& s) {
  const double exact = s.entries ? 100.0 * double(s.exact_bits) / double(s.entries) : 0.0;
  std::string line = fmt::format("  {:<52} {:<8} {:>8} {:>6.1f}% {:>6} {:>6} {:>8} {:>10} {:>10} {:>10}", name, side,
                                 s.entries, exact, ulps_text(s.ulps.median), ulps_text(s.ulps.p99),
                                 ulps_text(s.ulps.max), number_text(s.rel.median), number_text(s.rel.max),
                                 number_text(s.max_abs_error));
  if (s.nonfinite_mismatch) line += fmt::format("  {} NaN/inf against a number", s.nonfinite_mismatch);
  if (s.nan_matched) line += fmt::format("  ({} NaN matched)", s.nan_matched);
  return line + "\n";
}

nlohmann::json side_json(const std::optional<ErrorSummary>& s) { return s ? oracle::to_json(*s) : nlohmann::json(); }
nlohmann::json eps_json(const std::optional<oracle::EpsNeeded>& e) { return e ? oracle::to_json(*e) : nlohmann::json(); }
nlohmann::json opt_number(const std::optional<double>& v) {
  if (!v) return nullptr;
  if (std::isinf(*v)) return "inf";
  return *v;
}

// The unit most of the report speaks in: fp32 when any fp32 logits were measured.
UlpUnit main_unit(const NumericsReport& r) {
  return r.overall_current(UlpUnit::fp32) || r.overall_baseline(UlpUnit::fp32) ? UlpUnit::fp32 : UlpUnit::bf16;
}

std::string worst_table(const char* side, const ErrorSummary& s) {
  if (s.worst.empty()) return {};
  std::string out = fmt::format("worst rows ({}):\n  {:<52} {:>6} {:>7} {:>15} {:>15} {:>10} {:>10} {:>10}\n", side,
                                "case/output", "row", "col", "value", "exact", "bits", "ulps", "rel");
  for (const auto& e : s.worst)
    out += fmt::format("  {:<52} {:>6} {:>7} {:>15.9g} {:>15.9g} 0x{:08x} {:>10} {:>10}\n", e.where, e.row, e.col,
                       e.actual, e.exact, std::bit_cast<uint32_t>(e.actual),
                       e.ulps == std::numeric_limits<uint64_t>::max() ? "-" : std::to_string(e.ulps), number_text(e.rel));
  return out;
}

}  // namespace

std::string NumericsReport::headline() const {
  const UlpUnit unit = main_unit(*this);
  const auto b = overall_baseline(unit), c = overall_current(unit);
  const std::string u = std::string(oracle::to_string(unit)) + " ulp";
  if (!c) return "no logits were measured";
  if (!b)
    return fmt::format("the worst error is {} {} and the median {} (relative error against the sum of absolute terms: "
                       "worst {}, median {})",
                       ulps_text(c->ulps.max), u, ulps_text(c->ulps.median), number_text(c->rel.max),
                       number_text(c->rel.median));
  return fmt::format(
      "the change moved the worst error from {} to {} {} and the median from {} to {} (relative error against the sum "
      "of absolute terms: worst {} -> {}, median {} -> {})",
      ulps_text(b->ulps.max), ulps_text(c->ulps.max), u, ulps_text(b->ulps.median), ulps_text(c->ulps.median),
      number_text(b->rel.max), number_text(c->rel.max), number_text(b->rel.median), number_text(c->rel.median));
}

std::string NumericsReport::to_text() const {
  std::string out =
      "numerics: the distance to the exact arithmetic (profile `exact`); rel = |value - exact| / the sum of the "
      "absolute terms\n";
  out += fmt::format("  {:<52} {:<8} {:>8} {:>7} {:>6} {:>6} {:>8} {:>10} {:>10} {:>10}\n", "case/output", "side",
                     "entries", "0 ulp", "median", "p99", "max ulp", "rel median", "rel max", "abs max");
  for (const auto& c : cases_) {
    if (!c.note.empty()) out += fmt::format("  {:<52} not measured: {}\n", c.file, c.note);
    for (const auto& o : c.outputs) {
      const std::string name = c.file + "/" + o.output;
      if (o.baseline) out += row_of(name, "baseline", *o.baseline);
      if (o.current) out += row_of(o.baseline ? "" : name, "new", *o.current);
    }
  }
  for (const UlpUnit unit : {UlpUnit::fp32, UlpUnit::bf16}) {
    const auto b = overall_baseline(unit), c = overall_current(unit);
    const std::string name = fmt::format("overall ({} ulps)", oracle::to_string(unit));
    if (b) out += row_of(name, "baseline", *b);
    if (c) out += row_of(b ? "" : name, "new", *c);
  }
  const UlpUnit unit = main_unit(*this);
  if (const auto c = overall_current(unit)) out += worst_table("new", *c);
  if (const auto b = overall_baseline(unit)) out += worst_table("baseline", *b);
  auto tolerance = [&](bool baseline) -> std::string {
    const auto s = baseline ? overall_baseline(unit) : overall_current(unit);
    return s ? number_text(s->max_abs_error) : "-";
  };
  auto eps = [&](bool baseline) -> std::string {
    const auto e = eps_needed(baseline);
    return e ? number_text(*e) : "-";
  };
  out += fmt::format("tolerances needed against the exact arithmetic: logits --tolerance {} (baseline {}); selection "
                     "eps {} (baseline {})\n",
                     tolerance(false), tolerance(true), eps(false), eps(true));
  out += headline() + "\n";
  return out;
}

nlohmann::json NumericsReport::to_json() const {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : cases_) {
    nlohmann::json outputs = nlohmann::json::array(), selections = nlohmann::json::array();
    for (const auto& o : c.outputs)
      outputs.push_back({{"output", o.output},
                         {"unit", std::string(oracle::to_string(o.unit))},
                         {"baseline", side_json(o.baseline)},
                         {"new", side_json(o.current)}});
    for (const auto& s : c.selections)
      selections.push_back({{"output", s.output}, {"baseline", eps_json(s.baseline)}, {"new", eps_json(s.current)}});
    cases.push_back({{"file", c.file}, {"op", c.op}, {"note", c.note}, {"outputs", std::move(outputs)},
                     {"selections", std::move(selections)}});
  }
  nlohmann::json overall = nlohmann::json::object();
  for (const UlpUnit unit : {UlpUnit::fp32, UlpUnit::bf16}) {
    const auto b = overall_baseline(unit), c = overall_current(unit);
    if (b || c) overall[std::string(oracle::to_string(unit))] = {{"baseline", side_json(b)}, {"new", side_json(c)}};
  }
  return {{"schema", kNumericsSchema},
          {"reference", "exact"},
          {"has_baseline", has_baseline_},
          {"headline", headline()},
          {"overall", std::move(overall)},
          {"eps_needed", {{"baseline", opt_number(eps_needed(true))}, {"new", opt_number(eps_needed(false))}}},
          {"cases", std::move(cases)}};
}

std::string NumericsReport::to_svg() const {
  const UlpUnit unit = main_unit(*this);
  std::vector<oracle::HistogramSeries> series;
  if (const auto b = overall_baseline(unit)) series.push_back({"baseline", *b, "#7f8fa6"});
  if (const auto c = overall_current(unit)) series.push_back({"new", *c, "#e1701a"});
  return oracle::ulp_histogram_svg(fmt::format("Distance to the exact arithmetic over {} cases", cases_.size()), series);
}

}  // namespace dsa::dataset
