#include "dsa/logit_magnitudes.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "dsa/formats.hpp"
#include "dsa/kcache.hpp"

namespace dsa {
namespace {

constexpr int64_t kTokensPerTile = 4096;

// |value| of element d of a row of D elements: fp8 codes, or packed e2m1 with per-32 ue8m0 scales.
void abs_elements(ElementFormat element, const uint8_t* codes, const uint8_t* block_scales, int32_t D,
                  std::vector<double>& out) {
  out.resize(size_t(D));
  if (is_fp8(element)) {
    const float* table = fp8_decode_table(fp8_of(element));
    for (int32_t d = 0; d < D; ++d) out[size_t(d)] = std::fabs(double(table[codes[d]]));
    return;
  }
  for (int32_t d = 0; d < D; ++d) {
    const uint8_t byte = codes[d / 2];
    const float e = e2m1_to_float(d % 2 ? e2m1_high(byte) : e2m1_low(byte));
    out[size_t(d)] = std::fabs(double(e)) * double(ue8m0_to_float(block_scales[d / 32]));
  }
}

// u[d] = sum_h |w_h| |q_h[d]| of one query row.
std::vector<double> weighted_abs_query(ElementFormat element, const uint8_t* q, const uint8_t* q_block_scales,
                                       const float* weights, int32_t H, int32_t D) {
  std::vector<double> u(size_t(D), 0.0), a;
  const size_t row_bytes = size_t(is_fp8(element) ? D : D / 2);
  for (int32_t h = 0; h < H; ++h) {
    abs_elements(element, q + size_t(h) * row_bytes, q_block_scales ? q_block_scales + size_t(h) * (D / 32) : nullptr,
                 D, a);
    const double w = std::fabs(double(weights[h]));
    for (int32_t d = 0; d < D; ++d) u[size_t(d)] += w * a[size_t(d)];
  }
  return u;
}

double entry_magnitude(const std::vector<double>& u, const std::vector<double>& k_abs, double scale) {
  double sum = 0.0;
  for (size_t d = 0; d < u.size(); ++d) sum += u[d] * k_abs[d];
  return std::fabs(scale) * sum;
}

}  // namespace

LogitMagnitudes decode_logit_magnitudes(const DecodeProblem& p) {
  p.validate();
  const std::vector<int64_t> lens = visible_lens(p);
  LogitMagnitudes out{p.rows(), p.logits_width, std::vector<double>(size_t(p.rows() * p.logits_width), 0.0)};
  const int32_t H = p.heads, D = p.head_dim;
  const bool fp8 = is_fp8(p.element);
  const size_t q_row = size_t(H) * size_t(fp8 ? D : D / 2), q_scales_row = size_t(H) * size_t(D / 32);
  const std::span<const int32_t> table(p.block_table);
  for (int64_t b = 0; b < p.batch; ++b) {
    int64_t widest = 0;
    for (int32_t j = 0; j < p.next_n; ++j) widest = std::max(widest, lens[size_t(b * p.next_n + j)]);
    if (widest == 0) continue;
    std::vector<std::vector<double>> u(size_t(p.next_n));
    for (int32_t j = 0; j < p.next_n; ++j) {
      const int64_t r = b * p.next_n + j;
      if (lens[size_t(r)] > 0)
        u[size_t(j)] = weighted_abs_query(p.element, p.q.data() + size_t(r) * q_row,
                                          fp8 ? nullptr : p.q_block_scales.data() + size_t(r) * q_scales_row,
                                          p.weights.data() + size_t(r) * size_t(H), H, D);
    }
    const size_t k_row = size_t(fp8 ? D : D / 2);
    // Tiles of entries, so that a long request never holds its whole K in double.
    for (int64_t t0 = 0; t0 < widest; t0 += kTokensPerTile) {
      const int64_t t1 = std::min(widest, t0 + kTokensPerTile);
      const GatheredK k = gather_tokens(p.cache, table.subspan(size_t(b * p.max_pages), size_t(p.max_pages)), t0, t1);
      std::vector<double> k_abs;
      for (int64_t n = t0; n < t1; ++n) {
        const size_t i = size_t(n - t0);
        abs_elements(p.element, k.codes.data() + i * k_row, fp8 ? nullptr : k.block_scales.data() + i * size_t(D / 32),
                     D, k_abs);
        const double scale = fp8 ? double(k.scales[i]) : 1.0;
        for (int32_t j = 0; j < p.next_n; ++j) {
          const int64_t r = b * p.next_n + j;
          if (n < lens[size_t(r)]) out.values[size_t(r * out.width + n)] = entry_magnitude(u[size_t(j)], k_abs, scale);
        }
      }
    }
  }
  return out;
}

LogitMagnitudes prefill_logit_magnitudes(const PrefillProblem& p) {
  p.validate();
  LogitMagnitudes out{p.rows, p.num_k, std::vector<double>(size_t(p.rows) * size_t(p.num_k), 0.0)};
  const int32_t H = p.heads, D = p.head_dim;
  std::vector<std::vector<double>> u(size_t(p.rows));
  for (int32_t r = 0; r < p.rows; ++r)
    u[size_t(r)] = weighted_abs_query(p.element, p.q.data() + size_t(r) * H * D, nullptr,
                                      p.weights.data() + size_t(r) * H, H, D);
  std::vector<double> k_abs;
  for (int64_t n = 0; n < p.num_k; ++n) {
    abs_elements(p.element, p.k.data() + size_t(n) * D, nullptr, D, k_abs);
    for (int32_t r = 0; r < p.rows; ++r)
      if (n >= p.ks[size_t(r)] && n < p.ke[size_t(r)])
        out.values[size_t(r * out.width + n)] = entry_magnitude(u[size_t(r)], k_abs, double(p.k_scales[size_t(n)]));
  }
  return out;
}

}  // namespace dsa
