// The numerics report: for outputs that are not bit-identical (to a baseline,
// or to a profile), how far each side is from the exact arithmetic (the
// `exact` profile), per case and overall (oracle/numerics.hpp measures).
//
// Measured: logits over each row's window, compact logits where defined and
// SM100 sparse logits over [0, end), each entry against the exact logit at the
// position it scores (bf16 ulps for bf16-valued logits); and per selection
// (topk_indices, candidate_blocks) the eps of SPEC 9's tolerant rule that its
// set needs on the exact values. masked_logits are not measured (they are the
// logits at the candidate columns). A case whose logits are inputs has no
// arithmetic to measure and says so.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/oracle/numerics.hpp"

namespace dsa::dataset {

inline constexpr std::string_view kNumericsSchema = "dsa-oracle/numerics/1";

struct OutputNumerics {
  std::string output;
  oracle::UlpUnit unit = oracle::UlpUnit::fp32;
  std::optional<oracle::ErrorSummary> baseline;  // absent without a baseline, or when it lacks the output
  std::optional<oracle::ErrorSummary> current;
};

struct SelectionNumerics {
  std::string output;
  std::optional<oracle::EpsNeeded> baseline, current;
};

struct CaseNumerics {
  std::string file;
  std::string op;
  std::string note;  // why nothing was measured, when nothing was
  std::vector<OutputNumerics> outputs;
  std::vector<SelectionNumerics> selections;
};

class NumericsReport {
public:
  // Measures one case: `current` (the new outputs) and, if given, `baseline`
  // (the baseline's own outputs) against the exact arithmetic of `golden`'s inputs.
  void measure(const GoldenCase& golden, const GoldenOutputs* baseline, const GoldenOutputs& current,
               const std::string& file);

  bool empty() const { return cases_.empty(); }
  const std::vector<CaseNumerics>& cases() const { return cases_; }
  bool has_baseline() const { return has_baseline_; }
  // Over every case, per unit; nullopt when no entry of that side was measured.
  std::optional<oracle::ErrorSummary> overall_baseline(oracle::UlpUnit unit) const;
  std::optional<oracle::ErrorSummary> overall_current(oracle::UlpUnit unit) const;
  // The eps every selection of a side needed (the largest); nullopt when none was measured.
  std::optional<double> eps_needed(bool baseline) const;

  // "the change moved the worst error from 3 to 5 ulp and the median from 0 to 1 (fp32 ulps ...)".
  std::string headline() const;
  std::string to_text() const;  // a table per case and overall, the worst rows, the tolerances needed
  nlohmann::json to_json() const;  // schema dsa-oracle/numerics/1
  std::string to_svg() const;      // the ulp histogram, baseline against new

private:
  std::vector<CaseNumerics> cases_;
  std::map<oracle::UlpUnit, oracle::ErrorStats> baseline_, current_;
  bool has_baseline_ = false;
};

}  // namespace dsa::dataset
