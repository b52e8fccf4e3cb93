// `dsa-oracle check`: judges a kernel's outputs for a golden set.
#include <memory>
#include <optional>

#include <fmt/core.h>

#include "command_registry.hpp"
#include "dsa/dataset/check.hpp"
#include "dsa/dataset/safetensors.hpp"

namespace dsa::cli {
namespace {

struct CheckCliOptions {
  std::string golden;
  std::string outputs;
  std::optional<double> tolerance;
  std::string json;
  bool quiet = false;
};

void print_case(const dataset::CaseCheck& c, bool quiet) {
  fmt::print("{:<48} {:<26} {}\n", c.file, c.op, dataset::to_string(c.status));
  if (c.status == dataset::CaseStatus::bad_input) {
    fmt::print("    {}\n", c.error);
    return;
  }
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

int check(const CheckCliOptions& o) {
  dataset::CheckOptions options;
  options.tolerance = o.tolerance;
  const dataset::SetCheck result = dataset::check_golden_set(o.golden, o.outputs, options);
  size_t passed = 0, failed = 0, bad = 0;
  for (const auto& c : result.cases) {
    print_case(c, o.quiet);
    (c.status == dataset::CaseStatus::passed ? passed : c.status == dataset::CaseStatus::failed ? failed : bad)++;
  }
  const auto report = result.report();
  fmt::print("\n{} cases: {} passed, {} failed, {} bad input; {} checks, {} failed ({})\n", result.cases.size(), passed,
             failed, bad, report.entries().size(), report.failed_count(),
             o.tolerance ? fmt::format("tolerance {:g}", *o.tolerance) : std::string("bit-exact"));
  if (!o.json.empty()) {
    const std::string text = result.to_json().dump(2) + "\n";
    dataset::write_file_atomically(o.json, std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  }
  return result.exit_code();
}

const Registrar registrar("check", 41, [](CLI::App& app) {
  auto o = std::make_shared<CheckCliOptions>();
  auto* sub = app.add_subcommand("check", "Judge a kernel's outputs for a golden set (exit 1 on a failed check, 2 on bad input)");
  sub->add_option("--golden", o->golden, "Golden set folder (with manifest.json)")->required();
  sub->add_option("--outputs", o->outputs, "Folder of the kernel's outputs: one safetensors file per case, same names")->required();
  sub->add_option("--tolerance", o->tolerance, "Absolute tolerance for logits and the top-k rule (default: bit-exact)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--json", o->json, "Write the JSON report (schema dsa-oracle/report/1, plus \"cases\") to this file");
  sub->add_flag("--quiet", o->quiet, "Print only the checks that failed");
  return [o] { return check(*o); };
});

}  // namespace
}  // namespace dsa::cli
