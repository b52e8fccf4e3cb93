#include "brute_force.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace dsa::cli {
namespace {

double decode_e4m3(uint8_t code, bool fnuz) {
  const int sign = code >> 7, exponent = (code >> 3) & 15, mantissa = code & 7;
  if (fnuz && code == 0x80) return std::nan("");
  if (!fnuz && (code & 0x7f) == 0x7f) return std::nan("");
  const int bias = fnuz ? 8 : 7;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, 1 - bias - 3)
                                         : std::ldexp(8 + mantissa, exponent - bias - 3);
  return sign ? -magnitude : magnitude;
}

// The SPEC's order as a comparison: NaN above everything, -0 == +0.
bool ranks_above(float a, float b) {
  if (std::isnan(a)) return !std::isnan(b);
  if (std::isnan(b)) return false;
  return a > b;
}

}  // namespace

BruteForceRow brute_force_row(const DecodeProblem& p, int64_t row, int k) {
  const int64_t b = row / p.next_n, j = row % p.next_n;
  int64_t len = p.seq_lens_2d ? p.seq_lens[size_t(row)]
                              : std::max<int64_t>(0, p.seq_lens[size_t(b)] - p.next_n + j + 1) / p.compress_ratio;
  const bool fnuz = p.element == ElementFormat::e4m3fnuz;
  double table[256];
  for (int c = 0; c < 256; ++c) table[c] = decode_e4m3(uint8_t(c), fnuz);
  const int H = p.heads, D = p.head_dim, page_size = p.cache.block_size;
  const size_t page_bytes = size_t(page_size) * size_t(D + 4);
  BruteForceRow out;
  out.logits.resize(size_t(len));
  for (int64_t n = 0; n < len; ++n) {
    const int32_t page = p.block_table[size_t(b * p.max_pages + n / page_size)];
    const uint8_t* base = p.cache.bytes.data() + size_t(page) * page_bytes;
    const int64_t slot = n % page_size;
    float scale;
    std::memcpy(&scale, base + size_t(page_size) * D + size_t(slot) * 4, 4);
    float acc = 0.0f;
    for (int h = 0; h < H; ++h) {
      double dot = 0.0;
      const uint8_t* q = p.q.data() + (size_t(row) * H + size_t(h)) * D;
      for (int d = 0; d < D; ++d) dot += table[q[d]] * table[base[slot * D + d]];
      const float relu = std::max(float(dot), 0.0f);
      acc = std::fma(p.weights[size_t(row) * H + size_t(h)], relu, acc);
    }
    out.logits[size_t(n)] = acc * scale;
  }
  std::vector<int32_t> order(static_cast<size_t>(len));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t c) {
    return ranks_above(out.logits[size_t(a)], out.logits[size_t(c)]);
  });
  out.topk.assign(size_t(k), -1);
  if (len <= k) {
    for (int64_t i = 0; i < len; ++i) out.topk[size_t(i)] = int32_t(i);
  } else {
    std::copy_n(order.begin(), k, out.topk.begin());
  }
  return out;
}

}  // namespace dsa::cli
