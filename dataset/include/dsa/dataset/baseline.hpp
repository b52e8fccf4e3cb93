// Baselines: an implementation's outputs on a set of cases, recorded, so that
// a later version of it is held to them (`dsa-oracle golden --record`, then
// `dsa-oracle check --baseline`). This is how a kernel with no profile, or
// one that changes its order of summation on purpose, is regression-checked.
//
// A baseline set is a golden set (docs/golden-format.md): each case file holds
// the inputs and, as its expected outputs, what the implementation wrote; a
// manifest holds the hashes. Its files' metadata, and baseline.json beside the
// manifest, name the implementation, its version, the machine and the date.
// Where the implementation took only a later stage of a case (a top-k of the
// golden file's logits), the outputs it read are kept too, listed in the
// metadata key `baseline_from_golden`: they are the source's, not the
// implementation's, and are never compared.
//
// The check (check_baseline): per case, the new implementation's outputs
// against the baseline's by the rules of the oracle:
//   - logits-like outputs (logits, masked_logits, compact_logits,
//     sparse_logits): bitwise over each row's window, any NaN equal to any NaN
//     (counted), or within --tolerance; surviving poison named;
//   - topk_indices and candidate_blocks: the selection rule on the new
//     kernel's own values, and, where its values equal the baseline's, the
//     same sets, with rows that differ only among ties at the cut reported
//     apart (oracle/baseline_check.hpp);
//   - sparse_block_ids, sparse_end: equality;
//   - an output the baseline holds and the new implementation does not write
//     is a failure; one it writes and the baseline lacks is not compared (named).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsa/contract.hpp"
#include "dsa/dataset/check.hpp"
#include "dsa/dataset/golden_case.hpp"
#include "dsa/dataset/manifest.hpp"
#include "dsa/dataset/numerics.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::dataset {

inline constexpr std::string_view kBaselineSchema = "dsa-oracle/baseline/1";
inline constexpr std::string_view kBaselineFile = "baseline.json";
// Metadata keys of a baseline case file.
namespace baseline_key {
inline constexpr const char* impl = "baseline_impl";
inline constexpr const char* version = "baseline_version";
inline constexpr const char* machine = "baseline_machine";
inline constexpr const char* date = "baseline_date";
inline constexpr const char* from_golden = "baseline_from_golden";  // comma-separated outputs not the implementation's
}  // namespace baseline_key

struct BaselineInfo {
  std::string impl;     // the implementation's name (--impl), or the name given to outputs made elsewhere
  std::string version;  // its version string or commit
  std::string machine;  // host name and architecture
  std::string date;     // UTC, ISO 8601
  std::string source;   // the folder the inputs came from
};
// This machine ("host (x86_64)") and now; impl, version and source as given.
BaselineInfo describe_baseline(std::string impl, std::string version, std::string source);
nlohmann::json to_json(const BaselineInfo& info);

// One case of a recording.
struct RecordedCase {
  std::string file;
  std::string op;
  std::string status;  // "recorded", "not run" (the implementation took none of its stages), "failed"
  std::string error;
  std::vector<std::string> outputs;      // the implementation's
  std::vector<std::string> from_golden;  // read from the source file
};

struct Recording {
  BaselineInfo info;
  Manifest manifest;
  std::vector<RecordedCase> cases;
  size_t count(std::string_view status) const;
  // 0 every case recorded (cases not run aside, when some were recorded);
  // 1 a case failed or nothing was recorded; 2 a source file was bad input.
  int exit_code() const;
  nlohmann::json to_json() const;  // baseline.json: schema, the info, the cases
};

using CaseProgress = std::function<void(size_t done, size_t total, const std::string& file)>;

// The inputs: a golden set (its manifest.json: every case, hash-checked) or a
// folder of case files in the case schema, with or without expected outputs
// (every *.safetensors, by name). `out_dir` is created; it must not already
// hold a golden set of another source (InvalidInput("out")).
// An implementation run in process (run_case.hpp), a table entry or an external command:
Recording record_baseline(const std::string& inputs_dir, IndexerOps& impl, const Contract& contract,
                          const std::string& out_dir, const BaselineInfo& info, const CaseProgress& progress = {});
// Outputs made elsewhere (a user's own script): one file per case in
// `outputs_dir`, with the case's file name, as `check --outputs` reads them.
Recording record_baseline_outputs(const std::string& inputs_dir, const std::string& outputs_dir,
                                  const std::string& out_dir, const BaselineInfo& info,
                                  const CaseProgress& progress = {});

// Reads baseline.json (InvalidInput naming the file and field).
Recording read_recording(const std::string& baseline_dir);

// The numerics report: computed for no case, the cases whose logits are not
// bit-identical to the baseline's, or every case.
enum class NumericsMode : uint8_t { none, differing, all };

struct BaselineCheckOptions {
  CheckOptions check;
  NumericsMode numerics = NumericsMode::differing;
};

struct BaselineCheck {
  Recording baseline;  // its baseline.json
  SetCheck set;        // per case, as `check` reports
  std::vector<std::vector<std::string>> not_compared;  // per case: outputs only the new implementation wrote
  int64_t rows_tie_changes = 0;  // over every case: rows whose sets differ only among ties at the cut
  int64_t cases_logits_differ = 0;
  NumericsReport numerics;
  int exit_code() const { return set.exit_code(); }
  nlohmann::json to_json() const;  // the set's report, plus "baseline", "rows_tie_changes", "numerics"
};

// The new implementation run in process on every case of the baseline set.
BaselineCheck check_baseline(const std::string& baseline_dir, IndexerOps& impl, const Contract& contract,
                             const BaselineCheckOptions& options = {}, const CaseProgress& progress = {});
// Its outputs made elsewhere: one file per case in `outputs_dir`.
BaselineCheck check_baseline_outputs(const std::string& baseline_dir, const std::string& outputs_dir,
                                     const BaselineCheckOptions& options = {}, const CaseProgress& progress = {});

// One case: `current` (the new implementation's outputs) against the baseline
// case's expected outputs. Entries are labelled "<label>/<output>".
oracle::Report compare_with_baseline(const GoldenCase& baseline, const GoldenOutputs& current, const std::string& label,
                                     const CheckOptions& options = {},
                                     std::vector<std::string>* not_compared = nullptr);

}  // namespace dsa::dataset
