// dsa-oracle mma-check: recompute every output of matrix-unit dumps with a
// model and count the bit-exact matches (docs/matrix-unit-models.md).
#include <fmt/core.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "command_registry.hpp"
#include "dsa/mma/dump_check.hpp"

namespace dsa::cli {
namespace {

struct MmaCheckOptions {
  std::string model;
  std::string format;
  std::vector<std::string> files;
  bool json = false;
  bool nan_bits = false;
  bool allow_empty = false;
  int max_mismatches = 10;
};

std::string percent(const mma::OutputTally& t) {
  return t.total ? fmt::format("{:.4f} %", 100.0 * double(t.matched) / double(t.total)) : "-";
}

void print_text(const mma::DumpCheck& r) {
  fmt::print("{}: {} {}, {} records{}\n", r.file, mma::to_string(r.model), mma::to_string(r.format), r.records,
             r.has_header ? " (with header)" : "");
  fmt::print("  {:<10} {:>12} {:>12} {:>10}\n", "", "outputs", "matched", "");
  for (const auto& [mode, t] : r.by_mode)
    fmt::print("  mode {:<5} {:>12} {:>12} {:>10}\n", mode, t.total, t.matched, percent(t));
  if (r.format == mma::DumpFormat::chain)
    for (const auto& [name, t] : r.by_output)
      fmt::print("  {:<10} {:>12} {:>12} {:>10}\n", name, t.total, t.matched, percent(t));
  for (const auto& [mode, t] : r.by_mode) fmt::print("  mode {}: matched {} of {}\n", mode, t.matched, t.total);
  if (r.zero_convention > 0)
    fmt::print("  zero-operand convention: {} outputs, reported apart (MMA-Sim's exponent -126 for zero operands)\n",
               r.zero_convention);
  fmt::print("  total: matched {} of {}\n", r.total.matched, r.total.total);
  if (r.checked_nothing())
    fmt::print("  checked nothing: {}\n",
               r.records == 0 ? "the file holds no records" : "every output was reported apart");
  for (const auto& m : r.mismatches)
    fmt::print("  mismatch: record {} (mode {}) [{}][{}] {}: dump {:08x}, model {:08x}\n", m.record, m.mode, m.m, m.n,
               m.output, m.expected_bits, m.got_bits);
}

nlohmann::json to_json(const mma::DumpCheck& r) {
  auto tally = [](const mma::OutputTally& t) { return nlohmann::json{{"matched", t.matched}, {"outputs", t.total}}; };
  nlohmann::json j{{"file", r.file},
                   {"model", mma::to_string(r.model)},
                   {"format", mma::to_string(r.format)},
                   {"records", r.records},
                   {"header", r.has_header},
                   {"total", tally(r.total)},
                   {"zero_operand_convention_outputs", r.zero_convention},
                   {"checked_nothing", r.checked_nothing()},
                   {"passed", r.passed()}};
  for (const auto& [mode, t] : r.by_mode) j["modes"][std::to_string(mode)] = tally(t);
  for (const auto& [name, t] : r.by_output) j["outputs"][name] = tally(t);
  j["mismatches"] = nlohmann::json::array();
  for (const auto& m : r.mismatches)
    j["mismatches"].push_back({{"record", m.record},
                               {"mode", m.mode},
                               {"m", m.m},
                               {"n", m.n},
                               {"output", m.output},
                               {"dump_bits", fmt::format("{:08x}", m.expected_bits)},
                               {"model_bits", fmt::format("{:08x}", m.got_bits)}});
  return j;
}

int mma_check(const MmaCheckOptions& o) {
  std::optional<mma::Model> model;
  if (!o.model.empty()) model = mma::parse_model(o.model);
  std::optional<mma::DumpFormat> format;
  if (!o.format.empty()) format = mma::parse_dump_format(o.format);
  // Read and check every file before printing, so bad input exits 2 with nothing half-printed.
  std::vector<mma::DumpCheck> results;
  for (const auto& file : o.files) {
    // Options follow the file's model (named by --model or by the file's header).
    const std::optional<mma::Model> m = model ? model : mma::dump_header_model(file);
    mma::DumpCheckOptions options = mma::default_check_options(m.value_or(mma::Model::exact));
    options.max_mismatches = o.max_mismatches;
    options.nan_bits_exact = o.nan_bits;
    results.push_back(mma::check_dump(file, model, format, options));
  }
  // A file that checked nothing is no pass, unless --allow-empty says that empty is expected.
  mma::OutputTally all;
  int64_t apart = 0;
  bool passed = true;
  std::vector<std::string> empty;
  for (const auto& r : results) {
    all.matched += r.total.matched;
    all.total += r.total.total;
    apart += r.zero_convention;
    if (r.checked_nothing()) empty.push_back(r.file);
    passed = passed && (r.checked_nothing() ? o.allow_empty : r.passed());
  }
  if (o.json) {
    nlohmann::json j{{"files", nlohmann::json::array()},
                     {"total", {{"matched", all.matched}, {"outputs", all.total}}},
                     {"zero_operand_convention_outputs", apart},
                     {"files_that_checked_nothing", empty},
                     {"passed", passed}};
    for (const auto& r : results) j["files"].push_back(to_json(r));
    fmt::print("{}\n", j.dump(2));
  } else {
    for (const auto& r : results) print_text(r);
    if (results.size() > 1) {
      if (apart > 0) fmt::print("all files: zero-operand convention: {} outputs, reported apart\n", apart);
      fmt::print("all files: matched {} of {}\n", all.matched, all.total);
    }
    if (!empty.empty() && !o.allow_empty)
      fmt::print("FAILED: {} of {} file(s) checked nothing (no output was judged); --allow-empty accepts that\n",
                 empty.size(), results.size());
  }
  return passed ? kExitOk : kExitCheckFailed;
}

const Registrar mma_check_registrar("mma-check", 40, [](CLI::App& app) {
  auto o = std::make_shared<MmaCheckOptions>();
  auto* sub = app.add_subcommand(
      "mma-check", "Recompute every output of matrix-unit dumps with a model; exit 1 unless all match bit for bit");
  std::string names;
  for (mma::Model m : mma::all_models())
    if (m != mma::Model::exact) names += (names.empty() ? "" : ", ") + std::string(mma::to_string(m));
  sub->add_option("--model", o->model, "One of " + names + " (needed for headerless dumps)");
  sub->add_option("--format", o->format, "single or chain (headerless dumps; default single)")
      ->check(CLI::IsMember({"single", "chain"}));
  sub->add_option("--max-mismatches", o->max_mismatches, "Mismatches listed per file")->check(CLI::Range(0, 100000));
  sub->add_flag("--nan-bits", o->nan_bits, "A NaN must have the dump's bits (default: NaN matches any NaN)");
  sub->add_flag("--allow-empty", o->allow_empty,
                "A file with no records (nothing checked) passes; by default it fails the run (exit 1)");
  sub->add_flag("--json", o->json, "Print the results as JSON");
  sub->add_option("files", o->files, "Dump files")->required()->check(CLI::ExistingFile);
  return [o] { return mma_check(*o); };
});

}  // namespace
}  // namespace dsa::cli
