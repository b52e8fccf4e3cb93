// A baseline set checked (baseline.hpp): each case's new outputs, made in
// process or elsewhere, against the recorded ones; the numerics report.
#include <filesystem>
#include <sstream>

#include "baseline_source.hpp"
#include "dsa/dataset/baseline.hpp"
#include "dsa/dataset/run_case.hpp"
#include "dsa/error.hpp"

namespace dsa::dataset {
namespace {

namespace fs = std::filesystem;

// The baseline's own outputs (those it did not read from its source).
GoldenOutputs own_outputs(const GoldenCase& g) {
  GoldenOutputs o = g.expected;
  const auto it = g.settings.info.find(baseline_key::from_golden);
  if (it == g.settings.info.end()) return o;
  std::stringstream in(it->second);
  for (std::string name; std::getline(in, name, ',');) {
    if (name == out::logits) o.logits.reset();
    if (name == out::masked_logits) o.masked_logits.reset();
    if (name == out::topk_indices) o.topk_indices.reset();
    if (name == out::candidate_blocks) o.candidate_blocks.reset();
    if (name == out::compact_logits) o.compact_logits.reset();
    if (name == out::sparse_block_ids) o.sparse_blocks.reset();
    if (name == out::sparse_logits) o.sparse_logits.reset();
  }
  return o;
}

bool logits_differ(const oracle::Report& r) {
  for (const auto& e : r.entries())
    if (e.check == "logits" && !e.passed) return true;
  return false;
}

// Produce(golden, case_check) -> the new outputs, or nullopt (the case check says why).
template <class Produce>
BaselineCheck check_set(const std::string& baseline_dir, const BaselineCheckOptions& options,
                        const CaseProgress& progress, const Produce& produce) {
  BaselineCheck result;
  result.baseline = read_recording(baseline_dir);
  const auto& cases = result.baseline.manifest.cases;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (progress) progress(i, cases.size(), cases[i].file);
    CaseCheck cc;
    cc.file = cases[i].file;
    cc.op = cases[i].op;
    std::vector<std::string> not_compared;
    std::optional<GoldenCase> g;
    try {
      g = detail::read_verified_case(baseline_dir, cases[i]);
    } catch (const InvalidInput& e) {
      cc.status = CaseStatus::bad_input;
      cc.error = std::string("baseline file: ") + e.what();
    }
    std::optional<GoldenOutputs> current;
    if (g) current = produce(*g, cc);
    if (current) {
      cc.checked = current->names();
      cc.report.append(compare_with_baseline(*g, *current, cc.file, options.check, &not_compared));
      cc.status = cc.report.passed() ? CaseStatus::passed : CaseStatus::failed;
      const bool differ = logits_differ(cc.report);
      result.cases_logits_differ += differ;
      if (options.numerics == NumericsMode::all || (options.numerics == NumericsMode::differing && differ)) {
        const GoldenOutputs own = own_outputs(*g);
        result.numerics.measure(*g, &own, *current, cc.file);
      }
      for (const auto& e : cc.report.entries())
        if (e.check == "baseline_selection") result.rows_tie_changes += e.details.value("rows_tie_changes", int64_t(0));
    }
    result.not_compared.push_back(std::move(not_compared));
    result.set.cases.push_back(std::move(cc));
  }
  if (progress) progress(cases.size(), cases.size(), "");
  return result;
}

}  // namespace

nlohmann::json BaselineCheck::to_json() const {
  nlohmann::json j = set.to_json();
  j["baseline"] = dataset::to_json(baseline.info);
  j["rows_tie_changes"] = rows_tie_changes;
  j["cases_logits_differ"] = cases_logits_differ;
  for (size_t i = 0; i < not_compared.size() && i < j["cases"].size(); ++i) j["cases"][i]["not_compared"] = not_compared[i];
  if (!numerics.empty()) j["numerics"] = numerics.to_json();
  return j;
}

BaselineCheck check_baseline(const std::string& baseline_dir, IndexerOps& impl, const Contract& contract,
                             const BaselineCheckOptions& options, const CaseProgress& progress) {
  return check_set(baseline_dir, options, progress, [&](const GoldenCase& g, CaseCheck& cc) -> std::optional<GoldenOutputs> {
    CaseRun run = run_case(impl, contract, g);
    cc.ops_run = run.ops_run;
    cc.from_golden = run.from_golden;
    if (!run.failure.empty()) {
      cc.report.add(run_failure_entry(cc.file, run));
      cc.error = run.failure;
      cc.status = CaseStatus::failed;
    }
    if (!run.ran()) {
      if (run.failure.empty()) {
        cc.status = CaseStatus::not_run;
        cc.error = skipped_reasons(run);
      }
      return std::nullopt;
    }
    return std::move(run.outputs);
  });
}

BaselineCheck check_baseline_outputs(const std::string& baseline_dir, const std::string& outputs_dir,
                                     const BaselineCheckOptions& options, const CaseProgress& progress) {
  if (!fs::is_directory(outputs_dir)) throw InvalidInput("outputs", "'" + outputs_dir + "' is not a folder");
  return check_set(baseline_dir, options, progress, [&](const GoldenCase& g, CaseCheck& cc) -> std::optional<GoldenOutputs> {
    const std::string path = (fs::path(outputs_dir) / cc.file).string();
    try {
      if (!fs::is_regular_file(path))
        throw InvalidInput(path, "missing: the outputs for case " + cc.file + " go in a file of the same name");
      return read_outputs(read_safetensors(path), g);
    } catch (const InvalidInput& e) {
      cc.status = CaseStatus::bad_input;
      cc.error = "outputs file " + (e.argument() == path ? "" : path + ": ") + e.what();
      return std::nullopt;
    }
  });
}

}  // namespace dsa::dataset
