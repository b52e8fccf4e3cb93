// Reference top-k (SPEC 6).
//
// Value order: -inf smallest; -0.0 == +0.0; NaN above +inf, all NaNs equal.
// Ties: the lowest index wins. A row with L <= k gives 0..L-1 ascending, then -1.
// Otherwise k distinct indices of the k largest values, written in descending
// value order (ties by ascending index). Every slot of [0, k) is written.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dsa/logits.hpp"

namespace dsa {

// A total order key consistent with the SPEC's value order: key(a) < key(b)
// iff a ranks below b; equal keys for equal values (-0 == +0, NaN == NaN).
uint32_t topk_order_key(float v);

// Top-k of one row's values[0, len) (indices relative to values[0]); out has k slots.
void topk_row(const float* values, int64_t len, int k, int32_t* out);

// [rows][k] indices.
struct TopkIndices {
  int64_t rows = 0;
  int32_t k = 0;
  std::vector<int32_t> indices;
  const int32_t* row(int64_t r) const { return indices.data() + r * k; }
  int32_t* row(int64_t r) { return indices.data() + r * k; }
};

// Decode rows: row r selects among columns [0, L_r). Throws InvalidInput("topk") for k <= 0.
TopkIndices decode_topk(const DecodeProblem& problem, const Logits& logits, int k);
// Decode rows given the lengths directly (logits [rows][width], lens[r] <= width).
TopkIndices topk_rows(const Logits& logits, std::span<const int64_t> lens, int k);
// Prefill rows: row r selects among [ks, ke); indices relative to ks.
TopkIndices prefill_topk(const PrefillProblem& problem, const Logits& logits, int k);

}  // namespace dsa
