// The regression check (`dsa-oracle check`): a kernel's outputs for the cases
// of a golden set, judged by the oracle's rules.
//
//   logits, masked_logits, compact_logits, sparse_logits: bitwise over each
//     row's window (any NaN equals any NaN), or within an absolute tolerance;
//   topk_indices: the selection rule with ties at the cut, judged on the values
//     the top-k read: the kernel's own logits when its outputs hold them, else
//     the reference's; for candidate top-k over the row's candidate columns;
//   candidate_blocks: the selection rule on block scores;
//   sparse_block_ids, sparse_end: equality;
//   every entry written: poison (oracle/poison.hpp) a harness pre-filled its
//     buffers with must not survive where the kernel has to write.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dsa/contract.hpp"
#include "dsa/dataset/golden_case.hpp"
#include "dsa/indexer_ops.hpp"
#include "dsa/oracle/report.hpp"

namespace dsa::dataset {

struct CheckOptions {
  std::optional<double> tolerance;  // absolute, for logits and the selection rule; none: bit-exact
  int max_listed = 10;
  // The golden ops to judge (e.g. a kernel that implements only decode_topk);
  // cases of other ops are reported as not run. Empty: every op.
  std::vector<std::string> ops;
};

// Judges the outputs a kernel wrote for one case. Every output both sides
// hold is checked; entries are labelled "<label>/<output>".
oracle::Report check_case(const GoldenCase& golden, const GoldenOutputs& actual, const std::string& label,
                          const CheckOptions& options = {});

// not_run: the implementation takes none of the case's stages (its contract,
// or Unsupported): counted and named, neither a pass nor bad input.
enum class CaseStatus : uint8_t { passed, failed, bad_input, not_run };
std::string_view to_string(CaseStatus s);

struct CaseCheck {
  std::string file;
  std::string op;
  CaseStatus status = CaseStatus::passed;
  std::string error;                 // bad input: what was wrong; not run: why; failed: what the implementation threw
  std::vector<std::string> checked;  // the outputs judged
  std::vector<std::string> ops_run;      // in process: the IndexerOps calls made
  std::vector<std::string> from_golden;  // in process: stage outputs read from the golden file instead
  oracle::Report report;
};

struct SetCheck {
  std::vector<CaseCheck> cases;
  size_t count(CaseStatus status) const;
  bool any_failed() const;
  bool any_bad_input() const;
  // No case was judged (every one not run, or an empty set).
  bool checked_nothing() const;
  // 0 every case judged passed, 1 a check failed or nothing was checked (a
  // run that checked nothing is not a pass), 2 a file was missing, corrupt or
  // did not match its manifest hash (it wins over 1). Cases not run leave
  // the code alone as long as some case was judged.
  int exit_code() const;
  // Every check of every case, labels "<file>/<output>", plus the bad inputs.
  oracle::Report report() const;
  // The report, plus "cases": [{file, op, status, error, checked[, ops_run, from_golden]}],
  // "not_run", "checked_nothing" and "exit_code".
  nlohmann::json to_json() const;
};

// Checks every case of the golden set in `golden_dir` (its manifest.json)
// against the files of the same names in `outputs_dir`. Missing or corrupt
// files and hash mismatches make that case bad input; the others are still
// judged. progress(done, total, file) is called per case.
SetCheck check_golden_set(const std::string& golden_dir, const std::string& outputs_dir,
                          const CheckOptions& options = {},
                          const std::function<void(size_t, size_t, const std::string&)>& progress = {});
// One golden file (no manifest, so no hash to hold it to) against one outputs file.
SetCheck check_golden_file(const std::string& golden_file, const std::string& outputs_file,
                           const CheckOptions& options = {});

// Runs `impl` in process on every case of the golden set (run_case.hpp: the
// case's stages through IndexerOps, into poisoned buffers; what `contract`
// does not take is not run) and judges what it wrote, as check_golden_set
// does; no file is written. Golden files are hash-checked the same way.
SetCheck check_implementation(const std::string& golden_dir, IndexerOps& impl, const Contract& contract,
                              const CheckOptions& options = {},
                              const std::function<void(size_t, size_t, const std::string&)>& progress = {});

}  // namespace dsa::dataset
