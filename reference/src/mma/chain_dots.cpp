// Bulk per-head dot products: each query head and each K row is decoded once
// into lanes, then every (token, head) pair runs the model's chain: with the
// trait's SIMD kernel, eight tokens at a time; otherwise pair by pair. The exact
// model is one double GEMM (NUMERICS "Exact sums") rounded once to fp32.
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
template <class T>
struct KBlock {
  std::vector<uint64_t> mag, sign;  // sign: [lane][2][token], the masks then their complements
  std::vector<int16_t> exp;
  std::vector<int16_t> max_exp, min_tz;  // per group of 16 lanes, over the block (fast-path bounds)
  bool nan[detail::kBlock];
  std::vector<int> lane;  // lane of each k

  explicit KBlock(int head_dim)
      : mag(size_t(head_dim) * detail::kBlock),
        sign(size_t(head_dim) * 2 * detail::kBlock),
        exp(size_t(head_dim) * detail::kBlock),
        max_exp(size_t(head_dim / detail::kBoundGroup)),
        min_tz(size_t(head_dim / detail::kBoundGroup)),
        lane(static_cast<size_t>(head_dim)) {
    for (int k = 0; k < head_dim; ++k) lane[size_t(k)] = T::lane_of(k);
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
template <class T, Accumulation kAccumulation>
[[gnu::noinline]] void run_block(const detail::BlockOperands& o, int slices, int64_t* acc) {
  using Datapath = typename T::Datapath;
  if constexpr (kAccumulation == Accumulation::chained) {
    detail::BlockChain chain;
    for (int j = 0; j < slices; ++j) Datapath::block_step(o, j * T::kK, chain);
    chain.acc.store(acc);
  } else {
    // Each instruction from zero; an fp32 add of two values on the 2^-20 grid
    // (below 2^47) is their exact integer sum rounded to 24 bits.
    detail::I64x8 sum = detail::I64x8::broadcast(0);
    for (int j = 0; j < slices; ++j) {
      detail::BlockChain one;
      Datapath::block_step(o, j * T::kK, one);
      sum = j == 0 ? one.acc : detail::round_bits<24, true>(sum + one.acc);
    }
    sum.store(acc);
  }
}

template <class T>
void block_dots(const uint8_t* q, int heads, const uint8_t* k, int64_t num_tokens, int head_dim, float* out,
                Accumulation accumulation) {
  constexpr int B = detail::kBlock;
  const int slices = head_dim / T::kK;
  std::vector<detail::DecodedVector> qd(static_cast<size_t>(heads));
  std::vector<uint8_t> q_nan(static_cast<size_t>(heads));
  const size_t groups = size_t(head_dim / detail::kBoundGroup);
  std::vector<int16_t> q_max_exp(size_t(heads) * groups), q_min_tz(size_t(heads) * groups);
  for (int h = 0; h < heads; ++h) {
    detail::DecodedVector& qh = qd[size_t(h)];
    detail::decode_lanes<T>(q + size_t(h) * head_dim, nullptr, head_dim, qh);
    for (uint8_t n : qh.slice_has_nan) q_nan[size_t(h)] |= n;
    bounds(qh.mag.data(), qh.exp.data(), 1, head_dim, q_max_exp.data() + h * groups, q_min_tz.data() + h * groups);
  }
  KBlock<T> kb(head_dim);
  const detail::OperandTable& table = detail::trait_operands<T>();
  const float nan = detail::nan_of(T::kNan);
  for (int64_t n0 = 0; n0 < num_tokens; n0 += B) {
    const int count = int(std::min<int64_t>(B, num_tokens - n0));
    kb.load(table, k, n0, count, head_dim);
    for (int h = 0; h < heads; ++h) {
      const detail::DecodedVector& qh = qd[size_t(h)];
      const detail::BlockOperands o{qh.mag.data(),     qh.neg.data(),   qh.exp.data(),          kb.mag.data(),
                                    kb.sign.data(),    kb.exp.data(),   &q_max_exp[h * groups], &q_min_tz[h * groups],
                                    kb.max_exp.data(), kb.min_tz.data()};
      alignas(64) int64_t acc[B];
      if (accumulation == Accumulation::chained)
        run_block<T, Accumulation::chained>(o, slices, acc);
      else
        run_block<T, Accumulation::promoted>(o, slices, acc);
      // A NaN operand anywhere makes its instruction NaN, and every later one.
      // The rest is exact: at most 47 bits in units of 2^-20, far from fp32's limits.
      for (int t = 0; t < count; ++t)
        out[size_t(n0 + t) * heads + h] = q_nan[size_t(h)] || kb.nan[t] ? nan : float(double(acc[t]) * 0x1p-20);
    }
  }
}

}  // namespace

void chain_dots(Model m, const uint8_t* q, int heads, const uint8_t* k, int64_t num_tokens, int head_dim, float* out,
                Accumulation accumulation) {
  detail::require_k_len(m, head_dim);
  if (heads <= 0) throw InvalidInput("heads", std::to_string(heads) + " is not positive");
  if (num_tokens < 0) throw InvalidInput("num_tokens", std::to_string(num_tokens) + " is negative");
  if (m == Model::exact) {
    if (accumulation != Accumulation::chained)
      throw InvalidInput("accumulation", "exact is one rounding of the exact sum: it has no instructions to promote");
    if (num_tokens > 0) gemm_dots(operand_format(m), q, heads, k, num_tokens, head_dim, out);
    return;
  }
  detail::with_model(m, [&](auto trait) -> void {
    using T = decltype(trait);
    if constexpr (T::kOperands == Operands::mxfp4) {
      throw InvalidInput("model", std::string(T::kName) + " is block-scaled (MXFP4): use chain_dots_mxfp4");
    } else if constexpr (detail::HasBlockKernel<T>) {
      if (num_tokens > 0) block_dots<T>(q, heads, k, num_tokens, head_dim, out, accumulation);
    } else {
      detail::pair_dots<T>(q, nullptr, heads, k, nullptr, num_tokens, head_dim, out, accumulation);
    }
  });
}

void exact_dots(Fp8Format format, const uint8_t* q, int heads, const uint8_t* k, int64_t num_tokens, int head_dim,
                float* out) {
  if (heads <= 0) throw InvalidInput("heads", std::to_string(heads) + " is not positive");
  if (num_tokens < 0) throw InvalidInput("num_tokens", std::to_string(num_tokens) + " is negative");
  if (head_dim <= 0) throw InvalidInput("head_dim", std::to_string(head_dim) + " is not positive");
  if (num_tokens > 0) gemm_dots(format, q, heads, k, num_tokens, head_dim, out);
}

}  // namespace dsa::mma
