// A whole golden set judged: manifest hashes, then each case's outputs.
#include <filesystem>

#include "dsa/dataset/check.hpp"
#include "dsa/dataset/manifest.hpp"
#include "dsa/error.hpp"

namespace dsa::dataset {
namespace {

namespace fs = std::filesystem;

CaseCheck check_one(const ManifestCase& entry, const fs::path& golden_dir, const fs::path& outputs_dir,
                    const CheckOptions& options) {
  CaseCheck cc;
  cc.file = entry.file;
  cc.op = entry.op;
  const std::string golden_path = (golden_dir / entry.file).string();
  const std::string outputs_path = (outputs_dir / entry.file).string();
  GoldenCase golden;
  try {
    const std::string actual_hash = sha256_file(golden_path);
    if (actual_hash != entry.sha256)
      throw InvalidInput(golden_path, "does not match its manifest hash (manifest sha256 " + entry.sha256 + ", file " +
                                          actual_hash + "): the golden file was modified or corrupted; regenerate the set "
                                          "with `dsa-oracle golden` or restore it");
    golden = read_golden_case(read_safetensors(golden_path));
  } catch (const InvalidInput& e) {
    cc.status = CaseStatus::bad_input;
    cc.error = "golden file " + (e.argument() == golden_path ? "" : golden_path + ": ") + e.what();
    return cc;
  }
  try {
    if (!fs::exists(outputs_path))
      throw InvalidInput(outputs_path, "missing: the kernel's outputs for case " + entry.file +
                                           " go in a file of the same name in the outputs folder");
    const Safetensors file = read_safetensors(outputs_path);
    const GoldenOutputs actual = read_outputs(file, golden);
    cc.checked = actual.names();
    cc.report = check_case(golden, actual, entry.file, options);
    cc.status = cc.report.passed() ? CaseStatus::passed : CaseStatus::failed;
  } catch (const InvalidInput& e) {
    cc.status = CaseStatus::bad_input;
    cc.error = "outputs file " + (e.argument() == outputs_path ? "" : outputs_path + ": ") + e.what();
  }
  return cc;
}

}  // namespace

std::string_view to_string(CaseStatus s) {
  switch (s) {
    case CaseStatus::passed: return "pass";
    case CaseStatus::failed: return "FAIL";
    case CaseStatus::bad_input: return "BAD INPUT";
  }
  return "?";
}

bool SetCheck::any_failed() const {
  for (const auto& c : cases)
    if (c.status == CaseStatus::failed) return true;
  return false;
}

bool SetCheck::any_bad_input() const {
  for (const auto& c : cases)
    if (c.status == CaseStatus::bad_input) return true;
  return false;
}

int SetCheck::exit_code() const { return any_bad_input() ? 2 : any_failed() ? 1 : 0; }

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
      all.append(c.report);
    }
  }
  return all;
}

nlohmann::json SetCheck::to_json() const {
  nlohmann::json j = report().to_json();
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : cases)
    list.push_back({{"file", c.file}, {"op", c.op}, {"status", std::string(to_string(c.status))}, {"error", c.error},
                    {"checked", c.checked}});
  j["cases"] = std::move(list);
  j["exit_code"] = exit_code();
  return j;
}

SetCheck check_golden_set(const std::string& golden_dir, const std::string& outputs_dir, const CheckOptions& options,
                          const std::function<void(size_t, size_t, const std::string&)>& progress) {
  if (!fs::is_directory(outputs_dir)) throw InvalidInput("outputs", "'" + outputs_dir + "' is not a folder");
  const Manifest manifest = read_manifest((fs::path(golden_dir) / std::string(kManifestFile)).string());
  SetCheck result;
  for (size_t i = 0; i < manifest.cases.size(); ++i) {
    if (progress) progress(i, manifest.cases.size(), manifest.cases[i].file);
    result.cases.push_back(check_one(manifest.cases[i], golden_dir, outputs_dir, options));
  }
  if (progress) progress(manifest.cases.size(), manifest.cases.size(), "");
  return result;
}

}  // namespace dsa::dataset
