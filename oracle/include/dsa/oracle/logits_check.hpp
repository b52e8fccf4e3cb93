// The logits rule (SPEC 9): bitwise identity over each row's window, any NaN
// equal to any NaN; in clean mode also -inf everywhere outside the window.
// A tolerance mode serves kernels that are not bit-exact.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "dsa/logits.hpp"
#include "dsa/oracle/rows.hpp"

namespace dsa::oracle {

// An entry passes when |actual - expected| <= abs + rel * |expected|, or when it
// is within `ulps` fp32 ulps. Infinities must match exactly and NaN matches only
// NaN, whatever the tolerance.
struct LogitsTolerance {
  double abs = 0.0;
  double rel = 0.0;
  uint64_t ulps = 0;
};

struct LogitsCheckOptions {
  bool clean = false;  // also require -inf outside each row's window, up to the width
  std::optional<LogitsTolerance> tolerance;  // none: bitwise identity
  bool bf16_ulps = false;  // also report distances in bf16 ulps (bf16-valued logits)
  // A pattern the harness pre-filled the output with (poison.hpp): it never
  // counts as "a NaN equal to the expected NaN".
  std::optional<uint32_t> poison_bits;
  int max_listed = 10;  // entries and rows named in the report
};

struct LogitsMismatch {
  int64_t row = 0;
  int64_t col = 0;
  float actual = 0;
  float expected = 0;
  std::optional<uint64_t> ulps;       // none when exactly one side is NaN
  std::optional<uint64_t> bf16_ulps;  // when LogitsCheckOptions::bf16_ulps
  bool outside_window = false;        // a clean-mode entry beyond the row
  bool never_written = false;         // the actual entry is the poison (LogitsCheckOptions::poison_bits)
  bool inf_vs_finite = false;         // +-inf on exactly one side, a finite value on the other
  // What kind of difference, in words: "never written", "inf vs finite", "NaN vs number", "differs".
  const char* kind() const;
};

struct LogitsRowSummary {
  int64_t row = 0;
  int64_t mismatches = 0;
  uint64_t max_ulps = 0;  // over the row's mismatches with a defined distance
  bool nan_vs_number = false;
  int64_t first_col = 0;
};

struct LogitsVerdict {
  bool passed = true;
  bool clean = false;
  bool tolerance_mode = false;
  int64_t rows = 0;
  int64_t entries_compared = 0;
  int64_t mismatches = 0;
  int64_t rows_with_mismatch = 0;
  uint64_t max_ulps = 0;              // largest defined ulp distance among mismatches
  double max_abs_diff = 0.0;          // among mismatches with two finite values
  int64_t nan_vs_number = 0;          // mismatches with NaN on exactly one side
  int64_t inf_vs_finite = 0;          // mismatches with +-inf on exactly one side and a finite value on the other
  int64_t never_written = 0;          // mismatches where the poison survived
  int64_t nan_matched = 0;            // entries where both sides are NaN (they pass)
  int64_t rows_with_nan_count = 0;    // rows with a NaN on either side, in the window
  std::vector<int64_t> rows_with_nan; // the first max_listed of them
  std::vector<LogitsMismatch> first_mismatches;  // row-major order, first max_listed
  std::vector<LogitsRowSummary> worst_rows;      // most mismatches first, max_listed
};

// actual and expected must have the same shape; one range per row, each inside
// [0, width]. Throws InvalidInput otherwise ("row_bounds" for the ranges).
LogitsVerdict check_logits(const Logits& actual, const Logits& expected, const RowBounds& bounds,
                           const LogitsCheckOptions& options = {});
// Decode rows: [0, visible_lens[r]).
LogitsVerdict check_logits(const Logits& actual, const Logits& expected, std::span<const int64_t> visible_lens,
                           const LogitsCheckOptions& options = {});

}  // namespace dsa::oracle
