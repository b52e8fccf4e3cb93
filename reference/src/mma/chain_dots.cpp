// Bulk per-head dot products: each query head and each K row is decoded once
// into lanes, then every (token, head) pair runs the model's chain, inlined
// per model so that the align-truncate-sum loops vectorise. The exact model is
// one double GEMM (NUMERICS "Exact sums") rounded once to fp32.
#define EIGEN_DONT_PARALLELIZE  // callers parallelise over tiles
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/mma/models.hpp"
#include "chain_blocks.hpp"
#include "lanes.hpp"

namespace dsa::mma {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void gemm_dots(Fp8Format f, const uint8_t* q, int heads, const uint8_t* k, int64_t num_tokens, int head_dim,
               float* out) {
  const float* table = fp8_decode_table(f);
  RowMatrix qd(heads, head_dim), kd(num_tokens, head_dim);
  for (int64_t i = 0; i < qd.size(); ++i) qd.data()[i] = table[q[i]];
  for (int64_t i = 0; i < kd.size(); ++i) kd.data()[i] = table[k[i]];
  RowMatrix g(num_tokens, heads);
  g.noalias() = kd * qd.transpose();
  for (int64_t i = 0; i < g.size(); ++i) out[i] = float(g.data()[i]);  // one rounding, to nearest even
}

// The block kernel of each model (chain_blocks.hpp).
template <class F>
void with_block_policy(Model m, F&& f) {
  switch (m) {
    case Model::sm90_mma_sync_e4m3:
      return f(detail::MmaSyncBlock{});
    case Model::sm90_wgmma_e4m3:
      return f(detail::WgmmaBlock{});
    case Model::sm100_tcgen05_f8f6f4_e4m3:
      return f(detail::Tcgen05Block{});
    case Model::cdna3_mfma_f32_16x16x32_fp8:
      return f(detail::Cdna3x32Block{});
    case Model::cdna3_mfma_f32_32x32x16_fp8:
      return f(detail::Cdna3x16Block{});
    case Model::exact:
      break;
  }
  throw InvalidInput("model", "exact has no block kernel");
}

// The fast-path bounds of `stride` vectors laid out [lane][stride]: per group
// of 16 lanes, the largest exponent and the fewest trailing zeros of a nonzero magnitude.
void bounds(const uint64_t* mag, const int16_t* exp, int stride, int head_dim, int16_t* max_exp, int16_t* min_tz) {
  for (int g = 0; g < head_dim / detail::kBoundGroup; ++g) {
    int16_t mx = detail::kNoTermExponent, tz = 64;
    for (size_t i = size_t(g) * detail::kBoundGroup * stride; i < size_t(g + 1) * detail::kBoundGroup * stride; ++i) {
      mx = std::max(mx, exp[i]);
      if (mag[i]) tz = std::min<int16_t>(tz, int16_t(__builtin_ctzll(mag[i])));
    }
    max_exp[size_t(g)] = mx;
    min_tz[size_t(g)] = tz;
  }
}

// K rows of one block, transposed to [lane][token], and whether each row holds a NaN.
struct KBlock {
  std::vector<uint64_t> mag, sign;  // sign: [lane][2][token], the masks then their complements
  std::vector<int16_t> exp;
  std::vector<int16_t> max_exp, min_tz;  // per group of 16 lanes, over the block (fast-path bounds)
  bool nan[detail::kBlock];
  std::vector<int> lane;  // lane of each k

  KBlock(Model m, int head_dim)
      : mag(size_t(head_dim) * detail::kBlock),
        sign(size_t(head_dim) * 2 * detail::kBlock),
        exp(size_t(head_dim) * detail::kBlock),
        max_exp(size_t(head_dim / detail::kBoundGroup)),
        min_tz(size_t(head_dim / detail::kBoundGroup)),
        lane(static_cast<size_t>(head_dim)) {
    for (int k = 0; k < head_dim; ++k) lane[size_t(k)] = detail::lane_of(m, k);
  }

  // Tokens past `count` (the last block) are zeros: their results are not read.
  void load(const detail::OperandTable& table, const uint8_t* k, int64_t first, int count, int head_dim) {
    constexpr int B = detail::kBlock;
    for (int t = 0; t < B; ++t) {
      const uint8_t* codes = k + size_t(first + t) * head_dim;
      bool any_nan = false;
      for (int i = 0; i < head_dim; ++i) {
        const uint8_t c = t < count ? codes[i] : 0;
        const size_t l = size_t(lane[size_t(i)]);
        mag[l * B + t] = table.mag[c];
        sign[l * 2 * B + t] = table.neg[c];
        sign[l * 2 * B + B + t] = ~table.neg[c];
        exp[l * B + t] = table.exp[c];
        any_nan |= table.nan[c];
      }
      nan[t] = any_nan;
    }
    bounds(mag.data(), exp.data(), B, head_dim, max_exp.data(), min_tz.data());
  }
};

// One head's chains over one block: out of line, so that the unrolled product
// loops get the registers to themselves.
template <class Kernel>
[[gnu::noinline]] void run_block(const detail::BlockOperands& o, int slices, int64_t* acc) {
  detail::BlockChain chain;
  for (int j = 0; j < slices; ++j) Kernel::step(o, j * Kernel::kK, chain);
  chain.acc.store(acc);
}

template <class Kernel>
void model_dots(Model m, const uint8_t* q, int heads, const uint8_t* k, int64_t num_tokens, int head_dim, float* out) {
  constexpr int B = detail::kBlock;
  const int slices = head_dim / Kernel::kK;
  std::vector<detail::DecodedVector> qd(static_cast<size_t>(heads));
  std::vector<uint8_t> q_nan(static_cast<size_t>(heads));
  const size_t groups = size_t(head_dim / detail::kBoundGroup);
  std::vector<int16_t> q_max_exp(size_t(heads) * groups), q_min_tz(size_t(heads) * groups);
  for (int h = 0; h < heads; ++h) {
    detail::DecodedVector& qh = qd[size_t(h)];
    detail::decode_lanes(m, q + size_t(h) * head_dim, head_dim, qh);
    for (uint8_t n : qh.slice_has_nan) q_nan[size_t(h)] |= n;
    bounds(qh.mag.data(), qh.exp.data(), 1, head_dim, q_max_exp.data() + h * groups, q_min_tz.data() + h * groups);
  }
  KBlock kb(m, head_dim);
  const detail::OperandTable& table = detail::model_operands(m);
  const float nan = detail::model_nan(m);
  for (int64_t n0 = 0; n0 < num_tokens; n0 += B) {
    const int count = int(std::min<int64_t>(B, num_tokens - n0));
    kb.load(table, k, n0, count, head_dim);
    for (int h = 0; h < heads; ++h) {
      const detail::DecodedVector& qh = qd[size_t(h)];
      const detail::BlockOperands o{qh.mag.data(),     qh.neg.data(),   qh.exp.data(),          kb.mag.data(),
                                    kb.sign.data(),    kb.exp.data(),   &q_max_exp[h * groups], &q_min_tz[h * groups],
                                    kb.max_exp.data(), kb.min_tz.data()};
      alignas(64) int64_t acc[B];
      run_block<Kernel>(o, slices, acc);
      // A NaN operand anywhere makes its instruction NaN, and every later one.
      // The rest is exact: at most 45 bits in units of 2^-20, far from fp32's limits.
      for (int t = 0; t < count; ++t)
        out[size_t(n0 + t) * heads + h] = q_nan[size_t(h)] || kb.nan[t] ? nan : float(double(acc[t]) * 0x1p-20);
    }
  }
}

}  // namespace

void chain_dots(Model m, const uint8_t* q, int heads, const uint8_t* k, int64_t num_tokens, int head_dim, float* out) {
  detail::require_k_len(m, head_dim);
  if (heads <= 0) throw InvalidInput("heads", std::to_string(heads) + " is not positive");
  if (num_tokens < 0) throw InvalidInput("num_tokens", std::to_string(num_tokens) + " is negative");
  if (num_tokens == 0) return;
  if (m == Model::exact) return gemm_dots(operand_format(m), q, heads, k, num_tokens, head_dim, out);
  with_block_policy(m, [&](auto kernel) { model_dots<decltype(kernel)>(m, q, heads, k, num_tokens, head_dim, out); });
}

void exact_dots(Fp8Format format, const uint8_t* q, int heads, const uint8_t* k, int64_t num_tokens, int head_dim,
                float* out) {
  if (heads <= 0) throw InvalidInput("heads", std::to_string(heads) + " is not positive");
  if (num_tokens < 0) throw InvalidInput("num_tokens", std::to_string(num_tokens) + " is negative");
  if (head_dim <= 0) throw InvalidInput("head_dim", std::to_string(head_dim) + " is not positive");
  if (num_tokens > 0) gemm_dots(format, q, heads, k, num_tokens, head_dim, out);
}

}  // namespace dsa::mma
