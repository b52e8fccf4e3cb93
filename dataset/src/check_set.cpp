// A whole golden set judged: manifest hashes, then each case's outputs, read
// from an outputs folder or made in process by an implementation.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>

#include "dsa/dataset/check.hpp"
#include "dsa/dataset/manifest.hpp"
#include "dsa/dataset/run_case.hpp"
#include "dsa/error.hpp"

namespace dsa::dataset {
namespace {

namespace fs = std::filesystem;

// A golden file read and validated; with a manifest entry, held to its hash
// and its op. nullopt (and cc marked bad input) when the file is missing,
// corrupt, modified or not what the manifest says.
std::optional<GoldenCase> read_golden(const std::string& file, const std::string& golden_path,
                                      const ManifestCase* entry, CaseCheck& cc) {
  cc.file = file;
  cc.op = entry ? entry->op : "";
  try {
    if (entry) {
      const std::string actual_hash = sha256_file(golden_path);
      if (actual_hash != entry->sha256)
        throw InvalidInput(golden_path, "does not match its manifest hash (manifest sha256 " + entry->sha256 +
                                            ", file " + actual_hash +
                                            "): the golden file was modified or corrupted; regenerate the set "
                                            "with `dsa-oracle golden` or restore it");
    }
    GoldenCase golden = read_golden_case(read_safetensors(golden_path));
    const std::string op(to_string(golden.settings.op));
    if (entry && op != entry->op)
      throw InvalidInput(golden_path, "holds op " + op + " but the manifest lists it as op " + excerpt(entry->op));
    cc.op = op;
    return golden;
  } catch (const InvalidInput& e) {
    cc.status = CaseStatus::bad_input;
    cc.error = "golden file " + (e.argument() == golden_path ? "" : golden_path + ": ") + e.what();
    return std::nullopt;
  }
}

std::optional<GoldenCase> read_checked(const ManifestCase& entry, const fs::path& golden_dir, CaseCheck& cc) {
  return read_golden(entry.file, (golden_dir / entry.file).string(), &entry, cc);
}

// The outputs file of one case, judged.
CaseCheck judge_outputs(CaseCheck cc, const GoldenCase& golden, const std::string& outputs_path,
                        const CheckOptions& options) {
  try {
    if (!fs::exists(outputs_path))
      throw InvalidInput(outputs_path, "missing: the kernel's outputs for case " + cc.file +
                                           " go in a file of the same name in the outputs folder");
    const Safetensors file = read_safetensors(outputs_path);
    const GoldenOutputs actual = read_outputs(file, golden);
    cc.checked = actual.names();
    cc.report = check_case(golden, actual, cc.file, options);
    cc.status = cc.report.passed() ? CaseStatus::passed : CaseStatus::failed;
  } catch (const InvalidInput& e) {
    cc.status = CaseStatus::bad_input;
    cc.error = "outputs file " + (e.argument() == outputs_path ? "" : outputs_path + ": ") + e.what();
  }
  return cc;
}

// A case whose op the caller did not ask for: not run (neither a pass nor bad input).
bool outside_ops(const std::string& op, const CheckOptions& options, CaseCheck& cc) {
  if (options.ops.empty() || std::find(options.ops.begin(), options.ops.end(), op) != options.ops.end()) return false;
  cc.status = CaseStatus::not_run;
  cc.error = "op " + op + " is not among the ops to judge (--ops)";
  return true;
}

// The start of every case's check: its name and op in `cc`, then its golden file, unless the op is
// outside --ops or the file is bad (nullopt: `cc` says why).
std::optional<GoldenCase> open_case(const ManifestCase& entry, const fs::path& golden_dir, const CheckOptions& options,
                                    CaseCheck& cc) {
  cc.file = entry.file;
  cc.op = entry.op;
  if (outside_ops(entry.op, options, cc)) return std::nullopt;
  return read_checked(entry, golden_dir, cc);
}

CaseCheck check_one(const ManifestCase& entry, const fs::path& golden_dir, const fs::path& outputs_dir,
                    const CheckOptions& options) {
  CaseCheck cc;
  const std::optional<GoldenCase> golden = open_case(entry, golden_dir, options, cc);
  if (!golden) return cc;
  return judge_outputs(std::move(cc), *golden, (outputs_dir / entry.file).string(), options);
}

CaseCheck run_one(const ManifestCase& entry, const fs::path& golden_dir, IndexerOps& impl, const Contract& contract,
                  const CheckOptions& options) {
  CaseCheck cc;
  const std::optional<GoldenCase> golden = open_case(entry, golden_dir, options, cc);
  if (!golden) return cc;
  const CaseRun run = run_case(impl, contract, *golden);
  cc.ops_run = run.ops_run;
  cc.from_golden = run.from_golden;
  cc.checked = run.outputs.names();
  if (!run.ran() && run.failure.empty()) {
    cc.status = CaseStatus::not_run;
    cc.error = skipped_reasons(run);
    return cc;
  }
  if (run.ran()) cc.report = check_case(*golden, run.outputs, entry.file, options);
  if (!run.failure.empty()) {
    cc.report.add(run_failure_entry(entry.file, run));
    cc.error = run.failure;
  }
  cc.status = cc.report.passed() ? CaseStatus::passed : CaseStatus::failed;
  return cc;
}

template <class Judge>
SetCheck judge_set(const std::string& golden_dir, const Judge& judge,
                   const std::function<void(size_t, size_t, const std::string&)>& progress) {
  const Manifest manifest = read_manifest((fs::path(golden_dir) / std::string(kManifestFile)).string());
  SetCheck result;
  for (size_t i = 0; i < manifest.cases.size(); ++i) {
    if (progress) progress(i, manifest.cases.size(), manifest.cases[i].file);
    result.cases.push_back(judge(manifest.cases[i]));
  }
  if (progress) progress(manifest.cases.size(), manifest.cases.size(), "");
  return result;
}

}  // namespace

std::string_view to_string(CaseStatus s) {
  switch (s) {
    case CaseStatus::passed: return "pass";
    case CaseStatus::failed: return "FAIL";
    case CaseStatus::bad_input: return "BAD INPUT";
    case CaseStatus::not_run: return "not run";
  }
  return "?";
}

size_t SetCheck::count(CaseStatus status) const {
  size_t n = 0;
  for (const auto& c : cases) n += c.status == status;
  return n;
}

bool SetCheck::any_failed() const { return count(CaseStatus::failed) > 0; }
bool SetCheck::any_bad_input() const { return count(CaseStatus::bad_input) > 0; }
bool SetCheck::checked_nothing() const { return count(CaseStatus::passed) + count(CaseStatus::failed) == 0; }

int SetCheck::exit_code() const {
  if (any_bad_input()) return 2;
  return any_failed() || checked_nothing() ? 1 : 0;
}

oracle::Report SetCheck::report() const {
  oracle::Report all("dsa-oracle check");
  for (const auto& c : cases) {
    if (c.status == CaseStatus::bad_input) {
      oracle::Report::Entry e;
      e.label = c.file;
      e.check = "input";
      e.passed = false;
      e.summary = "input: BAD  " + c.error;
      e.details = {{"error", c.error}};
      all.add(std::move(e));
    } else {
      all.append(c.report);  // a case not run holds no check
    }
  }
  return all;
}

nlohmann::json SetCheck::to_json() const {
  nlohmann::json j = report().to_json();
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : cases) {
    nlohmann::json one = {{"file", c.file}, {"op", c.op}, {"status", std::string(to_string(c.status))},
                          {"error", c.error}, {"checked", c.checked}};
    if (!c.ops_run.empty() || !c.from_golden.empty()) {
      one["ops_run"] = c.ops_run;
      one["from_golden"] = c.from_golden;
    }
    list.push_back(std::move(one));
  }
  j["cases"] = std::move(list);
  j["not_run"] = count(CaseStatus::not_run);
  j["checked_nothing"] = checked_nothing();
  j["exit_code"] = exit_code();
  return j;
}

SetCheck check_golden_set(const std::string& golden_dir, const std::string& outputs_dir, const CheckOptions& options,
                          const std::function<void(size_t, size_t, const std::string&)>& progress) {
  if (!fs::is_directory(outputs_dir)) throw InvalidInput("outputs", "'" + outputs_dir + "' is not a folder");
  return judge_set(
      golden_dir, [&](const ManifestCase& entry) { return check_one(entry, golden_dir, outputs_dir, options); },
      progress);
}

SetCheck check_golden_file(const std::string& golden_file, const std::string& outputs_file, const CheckOptions& options) {
  SetCheck result;
  CaseCheck cc;
  std::optional<GoldenCase> golden =
      read_golden(fs::path(golden_file).filename().string(), golden_file, nullptr, cc);
  if (golden && outside_ops(cc.op, options, cc)) golden.reset();
  result.cases.push_back(golden ? judge_outputs(std::move(cc), *golden, outputs_file, options) : std::move(cc));
  return result;
}

SetCheck check_implementation(const std::string& golden_dir, IndexerOps& impl, const Contract& contract,
                              const CheckOptions& options,
                              const std::function<void(size_t, size_t, const std::string&)>& progress) {
  return judge_set(
      golden_dir, [&](const ManifestCase& entry) { return run_one(entry, golden_dir, impl, contract, options); },
      progress);
}

}  // namespace dsa::dataset
