// How far a kernel's logits are from the exact arithmetic, for kernels that
// are not bit-identical to a profile (or to their previous version): the
// distribution of ulp distances to the `exact` profile's fp32 logits, and of
// the relative error against the sum of the absolute terms of the expansion
// (dsa/logit_magnitudes.hpp), which stays meaningful where a logit cancels.
//
// Also the tolerances that would have been needed: the absolute one for the
// logits (`check --tolerance`), and the eps of SPEC 9's top-k rule for a
// selection judged on the exact values.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/rows.hpp"

namespace dsa::oracle {

// fp32 ulps, or bf16 ulps for bf16-valued logits (then against the exact
// logit rounded to bf16).
enum class UlpUnit : uint8_t { fp32, bf16 };
std::string_view to_string(UlpUnit unit);

// One logit measured, where it lies.
struct ErrorEntry {
  std::string where;  // the case and output, filled when stats are merged
  int64_t row = 0;
  int64_t col = 0;
  float actual = 0;
  float exact = 0;             // the `exact` profile's value (in the unit's precision)
  double exact_double = 0;     // the double-precision value of the sum
  double magnitude = 0;        // the sum of the absolute terms
  uint64_t ulps = 0;
  double rel = 0;              // |actual - exact_double| / magnitude
};

struct Quantiles {
  double median = 0, p90 = 0, p99 = 0, max = 0;
};

// Histogram buckets of ulp distances: bucket 0 holds 0, bucket b >= 1 holds
// [2^(b-1), 2^b): labels "0", "1", "[2,4)", "[4,8)", ..., "[1k,2k)", ...
int ulp_bucket(uint64_t ulps);
std::string ulp_bucket_label(int bucket);

struct ErrorSummary {
  UlpUnit unit = UlpUnit::fp32;
  int64_t entries = 0;             // measured (both values finite, or the same infinity)
  int64_t exact_bits = 0;          // of those, 0 ulp
  int64_t nan_matched = 0;         // both NaN: not measured
  int64_t nonfinite_mismatch = 0;  // NaN or an infinity on one side only: not measured, and no tolerance covers it
  Quantiles ulps, rel;
  double max_abs_error = 0;  // the absolute tolerance the logits would have needed (inf with a non-finite mismatch)
  std::vector<int64_t> histogram;  // per ulp bucket, trailing empty buckets dropped
  std::vector<ErrorEntry> worst;   // the worst entry of each of the worst rows, largest ulps first
};

// Accumulates entries; summary() sorts. Keeps every distance (8 + 8 bytes per entry).
class ErrorStats {
public:
  explicit ErrorStats(UlpUnit unit = UlpUnit::fp32) : unit_(unit) {}
  UlpUnit unit() const { return unit_; }
  // exact32: the `exact` profile's fp32 value; exact_double, magnitude: see ErrorEntry.
  void add(int64_t row, int64_t col, float actual, float exact32, double exact_double, double magnitude);
  // Another's entries, their worst rows labelled `where`. Throws InvalidInput("unit") across units.
  void merge(const ErrorStats& other, const std::string& where);
  bool empty() const { return ulps_.empty() && nan_matched_ == 0 && nonfinite_.empty(); }
  ErrorSummary summary(int max_listed = 10) const;

private:
  void keep_worst(const ErrorEntry& e);
  UlpUnit unit_;
  std::vector<uint64_t> ulps_;
  std::vector<double> rel_;
  std::vector<double> abs_;
  int64_t nan_matched_ = 0;
  std::vector<ErrorEntry> nonfinite_;
  std::vector<ErrorEntry> row_worst_;  // one per (where, row): its largest ulps
};

nlohmann::json to_json(const ErrorSummary& s);

// The smallest eps for which SPEC 9's rule with a tolerance accepts the
// selection on these values: 0 when the exact rule holds, infinity when no eps
// can (a duplicate, an index outside the row, a wrong -1 tail, or a cut that
// an infinity or NaN decides).
struct EpsNeeded {
  double eps = 0;
  int64_t rows = 0;
  int64_t rows_needing_eps = 0;  // rows where the exact rule fails
  int64_t worst_row = -1;
};
EpsNeeded selection_eps_needed(const IndexMatrix& selection, const RowColumns& values);
nlohmann::json to_json(const EpsNeeded& e);

// A histogram of ulp distances, several series side by side (baseline against
// new), as a small standalone SVG: one group of bars per bucket, heights the
// fraction of each series' entries, a legend, the series' medians and maxima.
struct HistogramSeries {
  std::string label;
  ErrorSummary summary;
  std::string color;  // an SVG colour
};
std::string ulp_histogram_svg(const std::string& title, const std::vector<HistogramSeries>& series);

}  // namespace dsa::oracle
