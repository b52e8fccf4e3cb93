// Block-scaled MXFP4 dot products (e2m1 elements, one ue8m0 scale per 32).
//
// DeepGEMM's SM100 FP4 indexer (impls/sm100_fp4_paged_mqa_logits.cuh, read
// from source only: no B200 here) issues `tcgen05.mma kind::mxf4` with
// UMMA_K = 64, block32 ue8m0 scales, two instructions chained for D = 128,
// the first with accumulate off. The model of one such instruction follows the
// published B200 model of the block-scaled fp4 form (MMA-Sim): the e2m1
// products are summed exactly in groups of 16 consecutive k; each group sum
// times its two block scales is one term whose alignment exponent is the sum
// of the scale exponents; C is a term with its own exponent; every term is
// truncated toward zero to 35 fraction bits below the largest exponent; the
// exact sum is rounded toward zero to fp32. A group whose sum is zero is no
// term (NUMERICS "Zero operands").
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/mma/models.hpp"
#include "exact_sum.hpp"
#include "kernels.hpp"

namespace dsa::mma {
namespace {

using detail::Rounding;

constexpr int kBlock = 32;         // elements per ue8m0 scale
constexpr int kGroup = 16;         // products summed exactly before alignment
constexpr int kInstructionK = 64;  // kind::mxf4
constexpr int kFractionBits = 35;
constexpr uint8_t kScaleNan = 0xff;

// e2m1 nibble -> signed value in units of 1/2 ({0, 1, 2, 3, 4, 6, 8, 12}).
constexpr int8_t kE2m1Halves[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

struct Mxfp4Row {
  std::vector<int8_t> halves;  // [D]
  std::vector<int16_t> scale;  // [D / 32]: unbiased scale exponent
  std::vector<uint8_t> nan;    // [D / 32]
};

void decode_row(const uint8_t* packed, const uint8_t* scales, int head_dim, Mxfp4Row& row) {
  row.halves.resize(size_t(head_dim));
  row.scale.resize(size_t(head_dim / kBlock));
  row.nan.resize(size_t(head_dim / kBlock));
  for (int i = 0; i < head_dim / 2; ++i) {
    row.halves[size_t(2 * i)] = kE2m1Halves[packed[i] & 0xf];
    row.halves[size_t(2 * i + 1)] = kE2m1Halves[packed[i] >> 4];
  }
  for (int b = 0; b < head_dim / kBlock; ++b) {
    row.scale[size_t(b)] = int16_t(int(scales[b]) - 127);
    row.nan[size_t(b)] = scales[b] == kScaleNan;
  }
}

// Exact sum of the e2m1 products of [begin, begin + n), in units of 1/4.
int32_t group_sum(const Mxfp4Row& a, const Mxfp4Row& b, int begin, int n) {
  int32_t s = 0;
  for (int k = begin; k < begin + n; ++k) s += int32_t(a.halves[size_t(k)]) * b.halves[size_t(k)];
  return s;
}

float mxf4_instruction(const Mxfp4Row& a, const Mxfp4Row& b, int offset, float c, bool use_c) {
  for (int blk = offset / kBlock; blk < (offset + kInstructionK) / kBlock; ++blk)
    if (a.nan[size_t(blk)] || b.nan[size_t(blk)]) return detail::nvidia_nan();
  if (use_c && std::isnan(c)) return detail::nvidia_nan();
  if (use_c && std::isinf(c)) return c;
  constexpr int kGroups = kInstructionK / kGroup;
  int32_t sums[kGroups];
  int exps[kGroups];
  int x = detail::kNoTermBelow - 1;
  for (int g = 0; g < kGroups; ++g) {
    const int begin = offset + g * kGroup, blk = begin / kBlock;
    sums[g] = group_sum(a, b, begin, kGroup);
    exps[g] = a.scale[size_t(blk)] + b.scale[size_t(blk)];
    if (sums[g] != 0 && exps[g] > x) x = exps[g];
  }
  const bool c_term = use_c && c != 0.0f;
  detail::Fp32Parts cp;
  if (c_term) {
    cp = detail::split_fp32(c);
    x = cp.align > x ? cp.align : x;
  }
  if (x < detail::kNoTermBelow) return 0.0f;
  const int q = x - kFractionBits;
  int64_t sum = 0;
  for (int g = 0; g < kGroups; ++g) {
    const uint64_t mag = uint64_t(sums[g] < 0 ? -int64_t(sums[g]) : sums[g]);
    sum += detail::apply_sign(detail::units_toward_zero(mag, exps[g] - 2, q), sums[g] < 0);
  }
  if (c_term) sum += detail::truncated_term(cp, q);
  return detail::round_scaled(sum, q, Rounding::toward_zero);
}

// fp32 round-to-nearest of the exact block-scaled dot product.
float mxfp4_exact(const Mxfp4Row& a, const Mxfp4Row& b, int head_dim) {
  const int blocks = head_dim / kBlock;
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
      sum += __int128(group_sum(a, b, blk * kBlock, kBlock)) << (e - lo);
    }
    return detail::round_scaled(sum, lo - 2, Rounding::nearest_even);
  }
  detail::ExactSum sum;
  for (int blk = 0; blk < blocks; ++blk)
    sum.add(group_sum(a, b, blk * kBlock, kBlock), a.scale[size_t(blk)] + b.scale[size_t(blk)] - 2);
  return sum.round(Rounding::nearest_even);
}

}  // namespace

void chain_dots_mxfp4(Model m, const uint8_t* q_packed, const uint8_t* q_scales, int heads, const uint8_t* k_packed,
                      const uint8_t* k_scales, int64_t num_tokens, int head_dim, float* out) {
  if (m != Model::exact && m != Model::sm100_tcgen05_f8f6f4_e4m3)
    throw InvalidInput("model", std::string(to_string(m)) +
                                    " has no MXFP4 form (only sm100_tcgen05_f8f6f4_e4m3 "
                                    "and exact take block-scaled e2m1)");
  const int step = m == Model::exact ? kBlock : kInstructionK;
  if (head_dim <= 0 || head_dim % step != 0)
    throw InvalidInput("head_dim", std::to_string(head_dim) + " is not a positive multiple of " + std::to_string(step));
  if (heads <= 0) throw InvalidInput("heads", std::to_string(heads) + " is not positive");
  if (num_tokens < 0) throw InvalidInput("num_tokens", std::to_string(num_tokens) + " is negative");
  std::vector<Mxfp4Row> q(static_cast<size_t>(heads));
  for (int h = 0; h < heads; ++h)
    decode_row(q_packed + size_t(h) * (head_dim / 2), q_scales + size_t(h) * (head_dim / kBlock), head_dim,
               q[size_t(h)]);
  Mxfp4Row k;
  for (int64_t n = 0; n < num_tokens; ++n) {
    decode_row(k_packed + size_t(n) * (head_dim / 2), k_scales + size_t(n) * (head_dim / kBlock), head_dim, k);
    for (int h = 0; h < heads; ++h) {
      float& dst = out[size_t(n) * heads + h];
      if (m == Model::exact) {
        dst = mxfp4_exact(q[size_t(h)], k, head_dim);
        continue;
      }
      float acc = 0.0f;
      for (int j = 0; j < head_dim / kInstructionK; ++j)
        acc = mxf4_instruction(q[size_t(h)], k, j * kInstructionK, acc, j > 0);
      dst = acc;
    }
  }
}

}  // namespace dsa::mma
