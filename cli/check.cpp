// `dsa-oracle check`: judges a kernel's outputs for a golden set, read from
// an outputs folder (--outputs) or made in process by an implementation of
// the table (--impl); or one golden file against one outputs file; with
// --baseline, against a baseline set instead (check_baseline.cpp).
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "check_baseline.hpp"
#include "command_registry.hpp"
#include "dsa/dataset/check.hpp"
#include "dsa/dataset/safetensors.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/implementations.hpp"

namespace dsa::cli {

void print_case(const dataset::CaseCheck& c, bool quiet) {
  fmt::print("{:<48} {:<26} {}\n", c.file, c.op, dataset::to_string(c.status));
  if (c.status == dataset::CaseStatus::bad_input || c.status == dataset::CaseStatus::not_run) {
    fmt::print("    {}\n", c.error);
    return;
  }
  if (!c.from_golden.empty()) fmt::print("    (read from the golden file, not judged: {})\n", fmt::join(c.from_golden, ", "));
  for (const auto& e : c.report.entries()) {
    if (e.passed && quiet) continue;
    fmt::print("    {}\n", e.summary);
    if (!e.passed && !e.table.empty()) {
      // The table's first line repeats the summary.
      const size_t first = e.table.find('\n');
      if (first != std::string::npos && first + 1 < e.table.size()) {
        std::string rest = e.table.substr(first + 1);
        size_t at = 0;
        while (at < rest.size()) {
          const size_t nl = std::min(rest.find('\n', at), rest.size());
          fmt::print("      {}\n", rest.substr(at, nl - at));
          at = nl + 1;
        }
      }
    }
  }
}

namespace {

int check(const CheckCliOptions& o) {
  if (o.golden.empty() == o.baseline.empty())
    throw InvalidInput("golden", "give exactly one of --golden DIR (judge by the oracle's rules against the reference) "
                                 "and --baseline DIR (hold to a recorded baseline)");
  if (!o.baseline.empty()) return check_baseline_command(o);
  if (o.impl.empty() == o.outputs.empty())
    throw InvalidInput("outputs", "give exactly one of --outputs DIR (outputs made elsewhere) and --impl NAME (run an "
                                  "implementation in process)");
  dataset::CheckOptions options;
  options.tolerance = o.tolerance;
  for (const std::string& op : o.ops) options.ops.push_back(std::string(dataset::to_string(dataset::parse_golden_op(op))));
  dataset::SetCheck result;
  if (o.impl.empty()) {
    // A lone golden file (e.g. `dsa-oracle reference`'s output for a case the fuzzer kept) against one outputs file.
    result = std::filesystem::is_regular_file(o.golden) ? dataset::check_golden_file(o.golden, o.outputs, options)
                                                        : dataset::check_golden_set(o.golden, o.outputs, options);
  } else {
    const std::unique_ptr<IndexerOps> impl = fuzz::make_implementation(o.impl);  // refuses one that cannot run here
    result = dataset::check_implementation(o.golden, *impl, fuzz::implementation_contract(o.impl), options);
  }
  for (const auto& c : result.cases) print_case(c, o.quiet);
  const auto report = result.report();
  fmt::print("\n{} cases: {} passed, {} failed, {} bad input, {} not run; {} checks, {} failed ({})\n",
             result.cases.size(), result.count(dataset::CaseStatus::passed), result.count(dataset::CaseStatus::failed),
             result.count(dataset::CaseStatus::bad_input), result.count(dataset::CaseStatus::not_run),
             report.entries().size(), report.failed_count(),
             o.tolerance ? fmt::format("tolerance {:g}", *o.tolerance) : std::string("bit-exact"));
  if (result.checked_nothing())
    fmt::print("nothing was checked{}: that is not a pass (exit 1)\n",
               o.impl.empty() ? std::string() : ": " + o.impl + " takes none of this set's cases");
  if (!o.json.empty()) {
    const std::string text = result.to_json().dump(2) + "\n";
    dataset::write_file_atomically(o.json, std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  }
  return result.exit_code();
}

const Registrar check_registrar("check", 41, [](CLI::App& app) {
  auto o = std::make_shared<CheckCliOptions>();
  auto* sub = app.add_subcommand(
      "check", "Judge a kernel's outputs for a golden set (exit 1 on a failed check or when nothing was checked, 2 on bad input)");
  sub->add_option("--golden", o->golden, "Golden set folder (with manifest.json), or one golden file");
  sub->add_option("--baseline", o->baseline,
                  "Instead of --golden: a baseline set (`golden --record`); the outputs must be the baseline's, by the "
                  "oracle's rules (docs/regression.md)");
  auto* outputs = sub->add_option(
      "--outputs", o->outputs,
      "Folder of the kernel's outputs: one safetensors file per case, same names (one file for one golden file)");
  sub->add_option("--impl", o->impl,
                  "Run this implementation of the table in process on every case instead (`fuzz --list` names them); "
                  "cases it does not take are reported as not run")
      ->excludes(outputs);
  sub->add_option("--tolerance", o->tolerance, "Absolute tolerance for logits and the top-k rule (default: bit-exact)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--ops", o->ops,
                  "Judge only cases of these golden ops (repeat or comma-separate; the others are reported as not "
                  "run): for a kernel that implements only some of the set's ops")
      ->delimiter(',');
  sub->add_option("--json", o->json, "Write the JSON report (schema dsa-oracle/report/1, plus \"cases\") to this file");
  sub->add_flag("--quiet", o->quiet, "Print only the checks that failed");
  sub->add_option("--numerics", o->numerics,
                  "--baseline: the numerics report (distance to the exact arithmetic) for the cases whose logits differ "
                  "from the baseline's, every case, or none")
      ->check(CLI::IsMember({"differing", "all", "none"}))
      ->capture_default_str();
  sub->add_option("--numerics-json", o->numerics_json, "--baseline: write the numerics report (JSON) to this file");
  sub->add_option("--svg", o->svg, "--baseline: write the histogram of ulp distances, baseline against new, to this SVG");
  return [o] { return check(*o); };
});

}  // namespace
}  // namespace dsa::cli
