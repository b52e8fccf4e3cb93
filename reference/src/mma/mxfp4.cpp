// Block-scaled MXFP4 dot products (e2m1 elements, one ue8m0 scale per 32): a
// block-scaled model's chains (its trait, models/), and the exact tier.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/mma/models.hpp"
#include "exact_sum.hpp"
#include "lanes.hpp"

namespace dsa::mma {
namespace {

using detail::kMxfp4Block;
using detail::Rounding;

struct Mxfp4Row {
  std::vector<int8_t> halves;  // [D]
  std::vector<int16_t> scale;  // [D / 32]: unbiased scale exponent
  std::vector<uint8_t> nan;    // [D / 32]
};

void decode_row(const uint8_t* packed, const uint8_t* scales, int head_dim, Mxfp4Row& row) {
  row.halves.resize(size_t(head_dim));
  row.scale.resize(size_t(head_dim / kMxfp4Block));
  row.nan.resize(size_t(head_dim / kMxfp4Block));
  for (int i = 0; i < head_dim / 2; ++i) {
    row.halves[size_t(2 * i)] = detail::kE2m1Halves[packed[i] & 0xf];
    row.halves[size_t(2 * i + 1)] = detail::kE2m1Halves[packed[i] >> 4];
  }
  for (int b = 0; b < head_dim / kMxfp4Block; ++b) {
    row.scale[size_t(b)] = int16_t(int(scales[b]) - detail::kUe8m0Bias);
    row.nan[size_t(b)] = scales[b] == detail::kUe8m0Nan;
  }
}

// Exact sum of the e2m1 products of [begin, begin + n), in units of 1/4.
int32_t block_sum(const Mxfp4Row& a, const Mxfp4Row& b, int begin, int n) {
  int32_t s = 0;
  for (int k = begin; k < begin + n; ++k) s += int32_t(a.halves[size_t(k)]) * b.halves[size_t(k)];
  return s;
}

// fp32 round-to-nearest of the exact block-scaled dot product.
float mxfp4_exact(const Mxfp4Row& a, const Mxfp4Row& b, int head_dim) {
  const int blocks = head_dim / kMxfp4Block;
  int lo = 1 << 20, hi = -(1 << 20);
  for (int blk = 0; blk < blocks; ++blk) {
    if (a.nan[size_t(blk)] || b.nan[size_t(blk)]) return detail::quiet_nan();
    const int e = a.scale[size_t(blk)] + b.scale[size_t(blk)];
    lo = e < lo ? e : lo;
    hi = e > hi ? e : hi;
  }
  // Block sums are below 2^13 (32 products of at most 144 quarters): a spread
  // of up to 100 binades fits a 128-bit integer exactly.
  if (hi - lo <= 100) {
    __int128 sum = 0;
    for (int blk = 0; blk < blocks; ++blk) {
      const int e = a.scale[size_t(blk)] + b.scale[size_t(blk)];
      sum += __int128(block_sum(a, b, blk * kMxfp4Block, kMxfp4Block)) << (e - lo);
    }
    return detail::round_scaled(sum, lo - 2, Rounding::nearest_even);
  }
  detail::ExactSum sum;
  for (int blk = 0; blk < blocks; ++blk)
    sum.add(block_sum(a, b, blk * kMxfp4Block, kMxfp4Block), a.scale[size_t(blk)] + b.scale[size_t(blk)] - 2);
  return sum.round(Rounding::nearest_even);
}

void exact_mxfp4_dots(const uint8_t* q_packed, const uint8_t* q_scales, int heads, const uint8_t* k_packed,
                      const uint8_t* k_scales, int64_t num_tokens, int head_dim, float* out) {
  std::vector<Mxfp4Row> q(static_cast<size_t>(heads));
  for (int h = 0; h < heads; ++h)
    decode_row(q_packed + size_t(h) * (head_dim / 2), q_scales + size_t(h) * (head_dim / kMxfp4Block), head_dim,
               q[size_t(h)]);
  Mxfp4Row k;
  for (int64_t n = 0; n < num_tokens; ++n) {
    decode_row(k_packed + size_t(n) * (head_dim / 2), k_scales + size_t(n) * (head_dim / kMxfp4Block), head_dim, k);
    for (int h = 0; h < heads; ++h) out[size_t(n) * heads + h] = mxfp4_exact(q[size_t(h)], k, head_dim);
  }
}

}  // namespace

void chain_dots_mxfp4(Model m, const uint8_t* q_packed, const uint8_t* q_scales, int heads, const uint8_t* k_packed,
                      const uint8_t* k_scales, int64_t num_tokens, int head_dim, float* out,
                      Accumulation accumulation) {
  if (operands(m) != Operands::mxfp4 && m != Model::exact)
    throw InvalidInput("model", std::string(to_string(m)) +
                                    " has no MXFP4 form (block-scaled e2m1 is taken by the block-scaled models, such "
                                    "as sm100_tcgen05_mxf4_k64, and by exact)");
  const int step = m == Model::exact ? kMxfp4Block : instruction_k(m);
  if (head_dim <= 0 || head_dim % step != 0)
    throw InvalidInput("head_dim", std::to_string(head_dim) + " is not a positive multiple of " + std::to_string(step) +
                                       (m == Model::exact ? " (the MXFP4 scale block)"
                                                          : " (the K of one " + std::string(to_string(m)) + ")"));
  if (heads <= 0) throw InvalidInput("heads", std::to_string(heads) + " is not positive");
  if (num_tokens < 0) throw InvalidInput("num_tokens", std::to_string(num_tokens) + " is negative");
  if (m == Model::exact) {
    if (accumulation != Accumulation::chained)
      throw InvalidInput("accumulation", "exact is one rounding of the exact sum: it has no instructions to promote");
    return exact_mxfp4_dots(q_packed, q_scales, heads, k_packed, k_scales, num_tokens, head_dim, out);
  }
  detail::with_model(m, [&](auto trait) -> void {
    using T = decltype(trait);
    if constexpr (T::kOperands == Operands::mxfp4)
      detail::pair_dots<T>(q_packed, q_scales, heads, k_packed, k_scales, num_tokens, head_dim, out, accumulation);
  });
}

}  // namespace dsa::mma
