// Recording a baseline set (baseline.hpp): the source's cases, each with an
// implementation's outputs as its expected outputs, a manifest, baseline.json.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "baseline_source.hpp"
#include "dsa/dataset/baseline.hpp"
#include "dsa/dataset/run_case.hpp"
#include "dsa/error.hpp"
#include "dsa/input_file.hpp"

namespace dsa::dataset {
namespace {

namespace fs = std::filesystem;

// The source's expected outputs that `outputs` lacks, added to it; their names.
std::vector<std::string> add_source_outputs(const GoldenOutputs& source, GoldenOutputs& outputs) {
  std::vector<std::string> added;
  auto take = [&](auto member, std::initializer_list<const char*> names) {
    if ((source.*member) && !(outputs.*member)) {
      outputs.*member = source.*member;
      added.insert(added.end(), names.begin(), names.end());
    }
  };
  take(&GoldenOutputs::logits, {out::logits});
  take(&GoldenOutputs::masked_logits, {out::masked_logits});
  take(&GoldenOutputs::topk_indices, {out::topk_indices});
  take(&GoldenOutputs::candidate_blocks, {out::candidate_blocks});
  take(&GoldenOutputs::compact_logits, {out::compact_logits});
  take(&GoldenOutputs::sparse_blocks, {out::sparse_block_ids, out::sparse_end});
  take(&GoldenOutputs::sparse_logits, {out::sparse_logits});
  return added;
}

// A previous recording in out_dir is replaced; any other golden set there is refused.
void prepare_out(const std::string& inputs_dir, const std::string& out_dir, std::vector<std::string>& stale) {
  std::error_code ec;
  if (fs::exists(inputs_dir) && fs::exists(out_dir) && fs::equivalent(inputs_dir, out_dir, ec))
    throw InvalidInput("out", "'" + out_dir + "' is the input folder: record the baseline into a folder of its own");
  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir)) throw InvalidInput("out", "cannot create folder '" + out_dir + "'");
  const fs::path manifest = fs::path(out_dir) / std::string(kManifestFile);
  if (!fs::exists(manifest)) return;
  if (!fs::exists(fs::path(out_dir) / std::string(kBaselineFile)))
    throw InvalidInput("out", "'" + out_dir + "' holds a golden set that is not a baseline: choose another folder");
  for (const auto& c : read_manifest(manifest.string()).cases) stale.push_back(c.file);
}

template <class Produce>
Recording record(const std::string& inputs_dir, const std::string& out_dir, const BaselineInfo& info,
                 const CaseProgress& progress, const Produce& produce) {
  std::vector<std::string> stale;
  const detail::Source source = detail::open_source(inputs_dir);
  prepare_out(inputs_dir, out_dir, stale);
  Recording rec;
  rec.info = info;
  rec.manifest.preset = source.manifest ? source.manifest->preset : "";
  rec.manifest.profile = source.manifest ? source.manifest->profile : "";
  rec.manifest.size = source.manifest ? source.manifest->size : "";
  rec.manifest.seed = source.manifest ? source.manifest->seed : 0;
  rec.manifest.generator = "dsa-oracle golden --record (" + info.impl + ")";
  for (size_t i = 0; i < source.files.size(); ++i) {
    const std::string& file = source.files[i];
    if (progress) progress(i, source.files.size(), file);
    RecordedCase rc;
    rc.file = file;
    std::optional<GoldenCase> golden;
    try {
      golden = detail::read_source_case(source, i);
      rc.op = std::string(to_string(golden->settings.op));
    } catch (const InvalidInput& e) {
      rc.status = "bad input";
      rc.error = e.what();
      rec.cases.push_back(std::move(rc));
      continue;
    }
    GoldenOutputs outputs;
    if (!produce(*golden, rc, outputs)) {
      rec.cases.push_back(std::move(rc));
      continue;
    }
    rc.outputs = outputs.names();
    GoldenCase base = *golden;
    rc.from_golden = add_source_outputs(golden->expected, outputs);
    base.expected = std::move(outputs);
    base.settings.info[baseline_key::impl] = info.impl;
    base.settings.info[baseline_key::version] = info.version;
    base.settings.info[baseline_key::machine] = info.machine;
    base.settings.info[baseline_key::date] = info.date;
    if (rc.from_golden.empty()) base.settings.info.erase(baseline_key::from_golden);
    else base.settings.info[baseline_key::from_golden] = fmt::to_string(fmt::join(rc.from_golden, ","));
    try {
      const Safetensors content = to_safetensors(base);
      const std::vector<uint8_t> bytes = serialize_safetensors(content);
      write_file_atomically((fs::path(out_dir) / file).string(), bytes);
      rec.manifest.cases.push_back(manifest_case(file, content, bytes));
      rc.status = "recorded";
    } catch (const InvalidInput& e) {
      rc.status = "failed";
      rc.error = std::string("its outputs cannot be stored in the case schema: ") + e.what();
    }
    rec.cases.push_back(std::move(rc));
  }
  for (const auto& old : stale) {
    const bool again = std::any_of(rec.manifest.cases.begin(), rec.manifest.cases.end(),
                                   [&](const ManifestCase& c) { return c.file == old; });
    std::error_code ec;
    if (!again) fs::remove(fs::path(out_dir) / old, ec);
  }
  const std::string summary = rec.to_json().dump(2) + "\n";
  write_file_atomically((fs::path(out_dir) / std::string(kBaselineFile)).string(),
                        std::span(reinterpret_cast<const uint8_t*>(summary.data()), summary.size()));
  write_file_atomically((fs::path(out_dir) / std::string(kManifestFile)).string(), manifest_bytes(rec.manifest));
  if (progress) progress(source.files.size(), source.files.size(), "");
  return rec;
}

std::string text_field(const nlohmann::json& j, const char* key, const std::string& origin) {
  if (!j.contains(key) || !j[key].is_string()) throw InvalidInput(origin, std::string("has no string \"") + key + "\"");
  return j[key].get<std::string>();
}

}  // namespace

BaselineInfo describe_baseline(std::string impl, std::string version, std::string source) {
  BaselineInfo info{std::move(impl), std::move(version), "", "", std::move(source)};
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  utsname u{};
  const std::string arch = uname(&u) == 0 ? u.machine : "";
  info.machine = std::string(host[0] ? host : "unknown host") + (arch.empty() ? "" : " (" + arch + ")");
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  info.date = date;
  return info;
}

nlohmann::json to_json(const BaselineInfo& i) {
  return {{"impl", i.impl}, {"version", i.version}, {"machine", i.machine}, {"date", i.date}, {"source", i.source}};
}

size_t Recording::count(std::string_view status) const {
  return size_t(std::count_if(cases.begin(), cases.end(), [&](const RecordedCase& c) { return c.status == status; }));
}

int Recording::exit_code() const {
  if (count("bad input")) return 2;
  return count("failed") || count("recorded") == 0 ? 1 : 0;
}

nlohmann::json Recording::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : cases)
    list.push_back({{"file", c.file}, {"op", c.op}, {"status", c.status}, {"error", c.error},
                    {"outputs", c.outputs}, {"from_golden", c.from_golden}});
  return {{"schema", kBaselineSchema}, {"baseline", dataset::to_json(info)}, {"cases", std::move(list)}};
}

Recording record_baseline(const std::string& inputs_dir, IndexerOps& impl, const Contract& contract,
                          const std::string& out_dir, const BaselineInfo& info, const CaseProgress& progress) {
  return record(inputs_dir, out_dir, info, progress, [&](const GoldenCase& golden, RecordedCase& rc, GoldenOutputs& outputs) {
    CaseRun run = run_case(impl, contract, golden);
    if (!run.failure.empty()) {
      rc.status = "failed";
      rc.error = run.failure;
      return false;
    }
    if (!run.ran()) {
      rc.status = "not run";
      for (const auto& s : run.skipped) rc.error += (rc.error.empty() ? "" : "; ") + s;
      return false;
    }
    outputs = std::move(run.outputs);
    return true;
  });
}

Recording record_baseline_outputs(const std::string& inputs_dir, const std::string& outputs_dir,
                                  const std::string& out_dir, const BaselineInfo& info, const CaseProgress& progress) {
  if (!fs::is_directory(outputs_dir)) throw InvalidInput("outputs", "'" + outputs_dir + "' is not a folder");
  return record(inputs_dir, out_dir, info, progress, [&](const GoldenCase& golden, RecordedCase& rc, GoldenOutputs& outputs) {
    const std::string path = (fs::path(outputs_dir) / rc.file).string();
    try {
      if (!fs::is_regular_file(path))
        throw InvalidInput(path, "missing: the outputs for case " + rc.file + " go in a file of the same name");
      outputs = read_outputs(read_safetensors(path), golden);
      return true;
    } catch (const InvalidInput& e) {
      rc.status = "bad input";
      rc.error = "outputs file " + (e.argument() == path ? "" : path + ": ") + e.what();
      return false;
    }
  });
}

Recording read_recording(const std::string& baseline_dir) {
  const std::string path = (fs::path(baseline_dir) / std::string(kBaselineFile)).string();
  if (!fs::exists(path))
    throw InvalidInput("baseline", "'" + baseline_dir + "' is not a baseline set (no " + std::string(kBaselineFile) +
                                       "): record one with `dsa-oracle golden --record`");
  const std::string content = read_input_text(path, path);
  const nlohmann::json j = nlohmann::json::parse(content, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw InvalidInput(path, "is not a JSON object");
  if (text_field(j, "schema", path) != kBaselineSchema)
    throw InvalidInput(path, "schema '" + j["schema"].get<std::string>() + "', this reader takes '" +
                                 std::string(kBaselineSchema) + "'");
  if (!j.contains("baseline") || !j["baseline"].is_object()) throw InvalidInput(path, "has no object \"baseline\"");
  const nlohmann::json& b = j["baseline"];
  Recording rec;
  rec.info = {text_field(b, "impl", path), text_field(b, "version", path), text_field(b, "machine", path),
              text_field(b, "date", path), text_field(b, "source", path)};
  if (!j.contains("cases") || !j["cases"].is_array()) throw InvalidInput(path, "has no array \"cases\"");
  for (const auto& c : j["cases"]) {
    if (!c.is_object()) throw InvalidInput(path, "a case is not an object");
    RecordedCase rc{text_field(c, "file", path), text_field(c, "op", path), text_field(c, "status", path),
                    text_field(c, "error", path), {}, {}};
    for (const char* key : {"outputs", "from_golden"}) {
      if (!c.contains(key) || !c[key].is_array()) throw InvalidInput(path, std::string("a case has no array \"") + key + "\"");
      for (const auto& name : c[key]) {
        if (!name.is_string()) throw InvalidInput(path, std::string("a case's \"") + key + "\" holds a non-string");
        (std::string(key) == "outputs" ? rc.outputs : rc.from_golden).push_back(name.get<std::string>());
      }
    }
    rec.cases.push_back(std::move(rc));
  }
  rec.manifest = read_manifest((fs::path(baseline_dir) / std::string(kManifestFile)).string());
  return rec;
}

}  // namespace dsa::dataset
