// Reference top-k (SPEC 6): k largest under the SPEC's value order, lowest
// index first among equals, -1 fill for short rows.
#include "dsa/topk.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "dsa/error.hpp"

namespace dsa {

uint32_t topk_order_key(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;  // every NaN ranks above +inf
  if (bits == 0x80000000u) bits = 0;                           // -0 == +0
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

void topk_row(const float* values, int64_t len, int k, int32_t* out) {
  if (k <= 0) throw InvalidInput("topk", "k must be at least 1, got " + std::to_string(k));
  if (len < 0) throw InvalidInput("seq_lens", "negative row length " + std::to_string(len));
  if (len <= k) {
    for (int64_t i = 0; i < len; ++i) out[i] = int32_t(i);
    std::fill(out + len, out + k, -1);
    return;
  }
  // One 64-bit key per column: the value's rank above, the complemented index
  // below, so "larger key" means "larger value, then lower index".
  std::vector<uint64_t> keys(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i)
    keys[size_t(i)] = (uint64_t(topk_order_key(values[i])) << 32) | (0xffffffffu - uint32_t(i));
  std::nth_element(keys.begin(), keys.begin() + (k - 1), keys.end(), std::greater<>());
  std::sort(keys.begin(), keys.begin() + k, std::greater<>());
  for (int i = 0; i < k; ++i) out[i] = int32_t(0xffffffffu - uint32_t(keys[size_t(i)] & 0xffffffffu));
}

TopkIndices topk_rows(const Logits& logits, std::span<const int64_t> lens, int k) {
  if (k <= 0) throw InvalidInput("topk", "k must be at least 1, got " + std::to_string(k));
  if (int64_t(lens.size()) != logits.rows)
    throw InvalidInput("seq_lens", std::to_string(lens.size()) + " row lengths for " + std::to_string(logits.rows) +
                                       " logits rows");
  for (int64_t r = 0; r < logits.rows; ++r)
    if (lens[size_t(r)] < 0 || lens[size_t(r)] > logits.width)
      throw InvalidInput("seq_lens", "row " + std::to_string(r) + " has length " + std::to_string(lens[size_t(r)]) +
                                         " outside [0, logits width " + std::to_string(logits.width) + "]");
  TopkIndices out{logits.rows, k, std::vector<int32_t>(size_t(logits.rows) * size_t(k))};
#pragma omp parallel for schedule(dynamic) if (logits.rows * logits.width >= (int64_t(1) << 18))
  for (int64_t r = 0; r < logits.rows; ++r) topk_row(logits.row(r), lens[size_t(r)], k, out.row(r));
  return out;
}

TopkIndices decode_topk(const DecodeProblem& problem, const Logits& logits, int k) {
  if (logits.rows != problem.rows())
    throw InvalidInput("logits", std::to_string(logits.rows) + " rows, the problem has " +
                                     std::to_string(problem.rows()));
  const auto lens = visible_lens(problem);
  return topk_rows(logits, lens, k);
}

TopkIndices prefill_topk(const PrefillProblem& problem, const Logits& logits, int k) {
  if (k <= 0) throw InvalidInput("topk", "k must be at least 1, got " + std::to_string(k));
  if (logits.rows != problem.rows || logits.width < problem.num_k)
    throw InvalidInput("logits", "shape [" + std::to_string(logits.rows) + ", " + std::to_string(logits.width) +
                                     "] does not cover the prefill's " + std::to_string(problem.rows) + " rows and " +
                                     std::to_string(problem.num_k) + " entries");
  TopkIndices out{logits.rows, k, std::vector<int32_t>(size_t(logits.rows) * size_t(k))};
  for (int32_t r = 0; r < problem.rows; ++r) {
    const int64_t ks = problem.ks[size_t(r)], ke = problem.ke[size_t(r)];
    if (ks < 0 || ke < ks || ke > logits.width)
      throw InvalidInput("ks", "row " + std::to_string(r) + " has [ks, ke) = [" + std::to_string(ks) + ", " +
                                   std::to_string(ke) + ") outside the logits width");
    topk_row(logits.row(r) + ks, ke - ks, k, out.row(r));
  }
  return out;
}

}  // namespace dsa
