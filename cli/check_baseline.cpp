// `dsa-oracle check --baseline BASE (--impl NEW | --outputs DIR)`: a new
// version of a kernel held to the outputs its previous version recorded, and
// the numerics report where they are not bit-identical (docs/regression.md).
#include <memory>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "check_baseline.hpp"
#include "dsa/dataset/baseline.hpp"
#include "dsa/dataset/safetensors.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/implementations.hpp"
#include "exit_codes.hpp"

namespace dsa::cli {
namespace {

void write_text(const std::string& path, const std::string& text) {
  dataset::write_file_atomically(path, std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

dataset::NumericsMode numerics_mode(const std::string& s) {
  if (s == "all") return dataset::NumericsMode::all;
  if (s == "none") return dataset::NumericsMode::none;
  if (s == "differing") return dataset::NumericsMode::differing;
  throw InvalidInput("numerics", "'" + s + "' is not one of differing, all, none");
}

// Rows whose sets moved among ties pass, but a reviewer wants them named.
void print_tie_changes(const dataset::CaseCheck& c) {
  for (const auto& e : c.report.entries()) {
    if (e.check != "baseline_selection" || !e.passed || e.details.value("rows_tie_changes", int64_t(0)) == 0) continue;
    const size_t first = e.table.find('\n');
    if (first == std::string::npos) continue;
    fmt::print("      tie-break changes in {}:\n", e.label);
    std::string rest = e.table.substr(first + 1);
    for (size_t at = 0; at < rest.size();) {
      const size_t nl = std::min(rest.find('\n', at), rest.size());
      fmt::print("      {}\n", rest.substr(at, nl - at));
      at = nl + 1;
    }
  }
}

}  // namespace

int check_baseline_command(const CheckCliOptions& o) {
  if (o.impl.empty() == o.outputs.empty())
    throw InvalidInput("outputs", "give exactly one of --outputs DIR (the new version's outputs, made elsewhere) and "
                                  "--impl NAME (run the new version in process)");
  dataset::BaselineCheckOptions options;
  options.check.tolerance = o.tolerance;
  options.numerics = numerics_mode(o.numerics);
  if ((!o.numerics_json.empty() || !o.svg.empty()) && options.numerics == dataset::NumericsMode::none)
    throw InvalidInput("numerics", "--numerics none writes no numerics report (--numerics-json, --svg)");
  dataset::BaselineCheck result;
  if (o.impl.empty()) {
    result = dataset::check_baseline_outputs(o.baseline, o.outputs, options);
  } else {
    const std::unique_ptr<IndexerOps> impl = fuzz::make_implementation(o.impl);  // refuses one that cannot run here
    result = dataset::check_baseline(o.baseline, *impl, fuzz::implementation_contract(o.impl), options);
  }
  const dataset::BaselineInfo& b = result.baseline.info;
  fmt::print("baseline: {} ({}), recorded on {} at {} from {}\n\n", b.impl, b.version, b.machine, b.date, b.source);
  for (size_t i = 0; i < result.set.cases.size(); ++i) {
    const auto& c = result.set.cases[i];
    print_case(c, o.quiet);
    print_tie_changes(c);
    if (!result.not_compared[i].empty())
      fmt::print("    (not in the baseline, not compared: {})\n", fmt::join(result.not_compared[i], ", "));
  }
  const size_t not_recorded = result.baseline.cases.size() - result.baseline.count("recorded");
  if (not_recorded)
    fmt::print("\n{} cases of the baseline's source were not recorded (baseline.json says why): they are not checked\n",
               not_recorded);
  const auto& set = result.set;
  const auto report = set.report();
  fmt::print("\n{} cases against the baseline: {} passed, {} failed, {} bad input, {} not run; {} checks, {} failed ({}); "
             "{} rows changed only among ties at the cut (legal)\n",
             set.cases.size(), set.count(dataset::CaseStatus::passed), set.count(dataset::CaseStatus::failed),
             set.count(dataset::CaseStatus::bad_input), set.count(dataset::CaseStatus::not_run), report.entries().size(),
             report.failed_count(), o.tolerance ? fmt::format("tolerance {:g}", *o.tolerance) : std::string("bit-exact"),
             result.rows_tie_changes);
  if (set.checked_nothing())
    fmt::print("nothing was checked{}: that is not a pass (exit 1)\n",
               o.impl.empty() ? std::string() : ": " + o.impl + " takes none of this baseline's cases");
  if (!result.numerics.empty())
    fmt::print("\n{}", result.numerics.to_text());
  else if (options.numerics == dataset::NumericsMode::differing)
    fmt::print("no numerics report: no case's logits differ from the baseline's (--numerics all measures every case)\n");
  // Written even when empty, so that a script finds the file it asked for.
  if (!o.numerics_json.empty()) write_text(o.numerics_json, result.numerics.to_json().dump(2) + "\n");
  if (!o.svg.empty()) write_text(o.svg, result.numerics.to_svg());
  if (!o.json.empty()) write_text(o.json, result.to_json().dump(2) + "\n");
  return result.exit_code();
}

}  // namespace dsa::cli
