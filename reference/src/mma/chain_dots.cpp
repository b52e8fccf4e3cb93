// Bulk per-head dot products: each query head and each K row is decoded once
// into lanes, then every (token, head) pair runs the model's chain.
#include <string>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/mma/models.hpp"
#include "lanes.hpp"

namespace dsa::mma {

void chain_dots(Model m, const uint8_t* q, int heads, const uint8_t* k, int64_t num_tokens, int head_dim, float* out) {
  detail::require_k_len(m, head_dim);
  if (heads <= 0) throw InvalidInput("heads", std::to_string(heads) + " is not positive");
  if (num_tokens < 0) throw InvalidInput("num_tokens", std::to_string(num_tokens) + " is negative");
  if (m == Model::exact) {
    for (int64_t n = 0; n < num_tokens; ++n)
      for (int h = 0; h < heads; ++h)
        out[size_t(n) * heads + h] = detail::exact_dot(operand_format(m), q + size_t(h) * head_dim,
                                                       k + size_t(n) * head_dim, head_dim, 0.0f, false);
    return;
  }
  std::vector<detail::DecodedVector> qd(static_cast<size_t>(heads));
  for (int h = 0; h < heads; ++h) detail::decode_lanes(m, q + size_t(h) * head_dim, head_dim, qd[size_t(h)]);
  detail::DecodedVector kd;
  for (int64_t n = 0; n < num_tokens; ++n) {
    detail::decode_lanes(m, k + size_t(n) * head_dim, head_dim, kd);
    for (int h = 0; h < heads; ++h)
      out[size_t(n) * heads + h] = detail::run_chain(m, qd[size_t(h)], kd, head_dim, 0.0f, false);
  }
}

}  // namespace dsa::mma
