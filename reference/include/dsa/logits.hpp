// Reference logits (SPEC 4): decode over the paged K cache and prefill over
// contiguous K, under an arithmetic profile.
//
// Per-head dot products come from the profile's matrix-unit model; for the
// `exact` model they are exact double GEMMs (Eigen) rounded once to fp32
// (NUMERICS "Exact sums"). The profile's reduction program then turns them
// into a logit. Columns at or beyond a row's visible length hold -inf; padded
// rows are all -inf.
#pragma once

#include <cstdint>
#include <vector>

#include "dsa/problem.hpp"
#include "dsa/profile.hpp"

namespace dsa {

// Row-major [rows][width] fp32 (bf16 profiles store bf16-representable values).
struct Logits {
  int64_t rows = 0;
  int64_t width = 0;
  std::vector<float> values;
  float at(int64_t r, int64_t c) const { return values[size_t(r * width + c)]; }
  const float* row(int64_t r) const { return values.data() + r * width; }
  float* row(int64_t r) { return values.data() + r * width; }
};

struct LogitsOptions {
  // Also compute the double-precision value of the whole sum
  // sum_h w_h * relu(s_n * q_h.k_n) (for tolerance comparisons).
  bool with_double = false;
};

struct LogitsResult {
  Logits logits;
  std::vector<double> exact_double;  // [rows][width] when requested, -inf beyond the row
};

// Validates the problem (DecodeProblem::validate) and the profile/format pair.
LogitsResult decode_logits(const DecodeProblem& problem, const Profile& profile, const LogitsOptions& options = {});
LogitsResult prefill_logits(const PrefillProblem& problem, const Profile& profile,
                            const LogitsOptions& options = {});

// Logits at chosen positions only (the compact-candidate path): it gathers and
// scores just those entries, never the dense row. positions[r] lists row r's
// positions in any order (duplicates allowed); the result has the same shape.
// Positions at or beyond a row's visible length (or negative) give -inf.
// Bit-identical to decode_logits at the same positions, for every profile.
std::vector<std::vector<float>> decode_logits_at(const DecodeProblem& problem, const Profile& profile,
                                                 const std::vector<std::vector<int64_t>>& positions);
// The same for prefill rows: positions are columns of the prefill logits (K
// entries in [0, num_k)); those outside the row's [ks, ke) give -inf.
// Bit-identical to prefill_logits at the same columns, for every profile.
std::vector<std::vector<float>> prefill_logits_at(const PrefillProblem& problem, const Profile& profile,
                                                  const std::vector<std::vector<int64_t>>& positions);

}  // namespace dsa
