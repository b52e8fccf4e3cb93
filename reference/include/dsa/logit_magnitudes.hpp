// The scale of a logit's rounding errors: the sum of the absolute values of
// every product in its full expansion,
//
//   A[r][n] = |s_n| * sum_h |w[r][h]| * sum_d |q[r][h][d]| * |k_n[d]|
//
// (MXFP4 values times their block scales, and no per-entry scale). Any
// summation order of the logit, in any matrix-unit model, makes an error of
// at most a small multiple of A times the unit roundoff, so a relative error
// measured against A stays meaningful where the logit itself cancels to
// almost nothing (weights of both signs), where |error| / |logit| would
// blow up. The numerics report (dataset/numerics.hpp) divides by it.
//
// Computed in double as |s_n| * sum_d u[r][d] |k_n[d]| with u[r][d] =
// sum_h |w[r][h]| |q[r][h][d]|, so O(D) per entry. Entries outside a row's
// window are 0; a NaN in K gives NaN.
#pragma once

#include <cstdint>
#include <vector>

#include "dsa/problem.hpp"

namespace dsa {

struct LogitMagnitudes {
  int64_t rows = 0;
  int64_t width = 0;
  std::vector<double> values;  // [rows][width]
  double at(int64_t r, int64_t c) const { return values[size_t(r * width + c)]; }
};

// Validates the problem first (DecodeProblem::validate). Decode rows [0, L_r).
LogitMagnitudes decode_logit_magnitudes(const DecodeProblem& problem);
// Prefill rows [ks, ke); width num_k.
LogitMagnitudes prefill_logit_magnitudes(const PrefillProblem& problem);

}  // namespace dsa
