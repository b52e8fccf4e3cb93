#include "dsa/synthetic.hpp"

#include <algorithm>
#include <cmath>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"

namespace dsa {
namespace {

double draw(ValueDistribution d, Rng& rng) {
  switch (d) {
    case ValueDistribution::normal: return rng.normal();
    case ValueDistribution::few_levels: return double(rng.uniform_int(-1, 2)) * 0.5;
    case ValueDistribution::constant: return 0.75;
  }
  return 0.0;
}

// q is quantized with one scale per row like vLLM's per-token-group cast: the
// fp8 code carries the value; its scale is folded into the weights upstream.
void fill_query(std::vector<uint8_t>& codes, std::vector<uint8_t>& block_scales, ElementFormat e, size_t vectors,
                int32_t D, ValueDistribution dist, Rng& rng) {
  std::vector<float> x(static_cast<size_t>(D));
  if (is_fp8(e)) {
    codes.resize(vectors * size_t(D));
    const Fp8Format f = fp8_of(e);
    const float gain = fp8_max(f) / 8.0f;
    for (size_t v = 0; v < vectors; ++v)
      for (int32_t d = 0; d < D; ++d) codes[v * D + size_t(d)] = float_to_fp8(f, float(draw(dist, rng)) * gain);
  } else {
    codes.resize(vectors * size_t(D / 2));
    block_scales.resize(vectors * size_t(D / 32));
    for (size_t v = 0; v < vectors; ++v) {
      for (auto& value : x) value = float(draw(dist, rng));
      quantize_mxfp4(x, std::span(codes).subspan(v * size_t(D / 2), size_t(D / 2)),
                     std::span(block_scales).subspan(v * size_t(D / 32), size_t(D / 32)));
    }
  }
}

}  // namespace

DecodeProblem make_decode_problem(const SyntheticDecodeConfig& c, Rng& rng) {
  if (int32_t(c.seq_lens.size()) != c.batch)
    throw InvalidInput("seq_lens", "synthetic config has " + std::to_string(c.seq_lens.size()) + " lengths for batch " +
                                       std::to_string(c.batch));
  DecodeProblem p;
  p.batch = c.batch;
  p.next_n = c.next_n;
  p.heads = c.heads;
  p.head_dim = c.head_dim;
  p.element = c.element;
  p.seq_lens = c.seq_lens;
  p.compress_ratio = c.compress_ratio;
  p.decode_lens = c.decode_lens;

  int64_t widest = 0;
  for (int32_t len : c.seq_lens) widest = std::max<int64_t>(widest, len / c.compress_ratio);
  const int64_t pages_per_request = (widest + c.block_size - 1) / c.block_size;
  p.max_pages = int32_t(std::max<int64_t>(1, pages_per_request));
  p.logits_width = c.logits_width > 0 ? c.logits_width : std::max<int64_t>(1, pages_per_request * c.block_size);

  // Pages: each request gets what it needs; the table maps them in a random order.
  int64_t used = 0;
  std::vector<int64_t> needed(static_cast<size_t>(c.batch));
  for (int32_t b = 0; b < c.batch; ++b) {
    needed[size_t(b)] = (int64_t(c.seq_lens[size_t(b)]) / c.compress_ratio + c.block_size - 1) / c.block_size;
    used += needed[size_t(b)];
  }
  const int32_t num_pages = int32_t(used + c.spare_pages);
  std::vector<int32_t> order(static_cast<size_t>(num_pages));
  for (int32_t i = 0; i < num_pages; ++i) order[size_t(i)] = i;
  if (c.shuffle_pages)
    for (int32_t i = num_pages - 1; i > 0; --i) std::swap(order[size_t(i)], order[size_t(rng.uniform_int(0, i))]);

  p.cache = make_kcache(c.layout, c.element, num_pages, c.block_size, c.head_dim);
  for (auto& byte : p.cache.bytes) byte = uint8_t(rng.next_u32());  // junk where nothing is written
  p.block_table.assign(size_t(c.batch) * size_t(p.max_pages), 0);
  std::vector<float> k(static_cast<size_t>(c.head_dim));
  int64_t next_page = 0;
  for (int32_t b = 0; b < c.batch; ++b) {
    for (int64_t i = 0; i < needed[size_t(b)]; ++i) {
      const int32_t page = order[size_t(next_page++)];
      p.block_table[size_t(b) * p.max_pages + size_t(i)] = page;
      for (int32_t slot = 0; slot < c.block_size; ++slot) {
        for (auto& v : k) v = float(draw(c.k_values, rng));
        quantize_token_into_cache(p.cache, page, slot, k, QuantizeOptions{c.ue8m0_scale});
      }
    }
  }

  std::vector<uint8_t> unused;
  fill_query(p.q, c.element == ElementFormat::mxfp4 ? p.q_block_scales : unused, c.element,
             size_t(p.rows()) * size_t(c.heads), c.head_dim, c.q_values, rng);
  if (!c.decode_lens.empty()) {
    // Padded rows carry what vLLM's pack writes: -inf cast to fp8 (a NaN byte), 0 for MXFP4.
    const size_t per_row = size_t(c.heads) * size_t(is_fp8(c.element) ? c.head_dim : c.head_dim / 2);
    for (int64_t row = 0; row < p.rows(); ++row)
      if (p.is_padded_row(row))
        std::fill_n(p.q.begin() + row * per_row, per_row,
                    is_fp8(c.element) ? fp8_pad_code(fp8_of(c.element)) : uint8_t(0));
  }
  p.weights.resize(size_t(p.rows()) * size_t(c.heads));
  const double weight_gain = 1.0 / std::sqrt(double(c.heads));
  for (auto& w : p.weights) {
    w = float(rng.normal() * weight_gain);
    if (c.bf16_weights) w = round_to_bf16(w);
  }
  return p;
}

PrefillProblem make_prefill_problem(const SyntheticPrefillConfig& c, Rng& rng) {
  PrefillProblem p;
  p.rows = c.rows;
  p.heads = c.heads;
  p.head_dim = c.head_dim;
  p.element = c.element;
  p.num_k = c.num_k;
  std::vector<uint8_t> unused;
  fill_query(p.q, unused, c.element, size_t(c.rows) * size_t(c.heads), c.head_dim, c.q_values, rng);
  const Fp8Format f = fp8_of(c.element);
  p.k.resize(size_t(c.num_k) * size_t(c.head_dim));
  p.k_scales.resize(size_t(c.num_k));
  for (int64_t n = 0; n < c.num_k; ++n) {
    // Per-entry scale as vLLM's quantizer would give it, from the drawn values' amax.
    std::vector<float> x(static_cast<size_t>(c.head_dim));
    float amax = 0;
    for (auto& v : x) {
      v = float(draw(c.k_values, rng));
      amax = std::max(amax, std::fabs(v));
    }
    const float scale = std::max(amax, 1e-4f) / fp8_max(f);
    p.k_scales[size_t(n)] = scale;
    for (int32_t d = 0; d < c.head_dim; ++d) p.k[size_t(n) * c.head_dim + size_t(d)] = float_to_fp8(f, x[size_t(d)] / scale);
  }
  p.weights.resize(size_t(c.rows) * size_t(c.heads));
  const double weight_gain = 1.0 / std::sqrt(double(c.heads));
  for (auto& w : p.weights) w = float(rng.normal() * weight_gain);
  p.ks.assign(size_t(c.rows), 0);
  p.ke.resize(size_t(c.rows));
  for (int32_t r = 0; r < c.rows; ++r) p.ke[size_t(r)] = int32_t(std::max<int64_t>(0, c.num_k - c.rows + r + 1));
  return p;
}

}  // namespace dsa
