// Exact per-head dot products are double GEMMs (NUMERICS "Exact sums": every
// fp8 product is m * 2^e with m < 2^8, e in [-20, 10], so a sum of up to 2^12
// of them is exact in double in any order, Eigen's blocked order included).
// Other models go through mma::chain_dots.
#define EIGEN_DONT_PARALLELIZE  // parallelism is ours (OpenMP over tiles)
// GCC 12 reports false maybe-uninitialized warnings inside its AVX-512 intrinsics under Eigen.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "head_dots.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"

namespace dsa::detail {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

RowMatrix decode_fp8(Fp8Format f, const uint8_t* codes, int64_t rows, int32_t cols) {
  const float* table = fp8_decode_table(f);
  RowMatrix m(rows, cols);
  double* out = m.data();
  for (int64_t i = 0; i < rows * cols; ++i) out[i] = table[codes[i]];
  return m;
}

// MXFP4 elements times their per-32 scale, exactly representable in double.
RowMatrix decode_mxfp4(const uint8_t* packed, const uint8_t* block_scales, int64_t rows, int32_t cols) {
  RowMatrix m(rows, cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int32_t d = 0; d < cols; ++d) {
      const uint8_t byte = packed[r * (cols / 2) + d / 2];
      const float e = e2m1_to_float(d % 2 ? e2m1_high(byte) : e2m1_low(byte));
      m(r, d) = double(e) * double(ue8m0_to_float(block_scales[r * (cols / 32) + d / 32]));
    }
  return m;
}

// rows x D codes with each row's dims in `order` (slot i = dim order[i]).
std::vector<uint8_t> permute_dims(const uint8_t* codes, int64_t rows, const std::vector<int32_t>& order) {
  const size_t D = order.size();
  std::vector<uint8_t> out(size_t(rows) * D);
  for (int64_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < D; ++i) out[size_t(r) * D + i] = codes[size_t(r) * D + size_t(order[i])];
  return out;
}

}  // namespace

void head_dots(mma::Model model, const QueryRows& q, const KTile& tile, float* dots, double* exact_dots) {
  const int64_t nq = int64_t(q.num_rows) * q.heads, T = tile.count;
  const int32_t D = q.head_dim;
  if (T == 0 || nq == 0) return;
  const bool fp8 = is_fp8(q.element);

  if (model == mma::Model::exact || exact_dots) {
    // Block-scaled MXFP4 sums are not exact in double in general (the per-32
    // scales spread the terms); the exact model goes through the integer path
    // below for the fp32 value, and this double is used only for exact_dots.
    const RowMatrix qd = fp8 ? decode_fp8(fp8_of(q.element), q.codes, nq, D)
                             : decode_mxfp4(q.codes, q.block_scales, nq, D);
    const RowMatrix kd = fp8 ? decode_fp8(fp8_of(tile.element), tile.codes, T, D)
                             : decode_mxfp4(tile.codes, tile.block_scales, T, D);
    RowMatrix g(nq, T);
    g.noalias() = qd * kd.transpose();
    if (exact_dots) std::copy(g.data(), g.data() + nq * T, exact_dots);
    if (model == mma::Model::exact && fp8) {
      const double* src = g.data();
      for (int64_t i = 0; i < nq * T; ++i) dots[i] = float(src[i]);  // one rounding, to nearest even
      return;
    }
  }

  // Model path: chain_dots gives [token][head] per query row; transpose to [head][token].
  std::vector<float> per_token(size_t(T) * size_t(q.heads));
  for (int32_t row = 0; row < q.num_rows; ++row) {
    if (fp8) {
      mma::chain_dots(model, q.codes + size_t(row) * q.heads * D, q.heads, tile.codes, T, D, per_token.data());
    } else {
      mma::chain_dots_mxfp4(model, q.codes + size_t(row) * q.heads * (D / 2),
                            q.block_scales + size_t(row) * q.heads * (D / 32), q.heads, tile.codes,
                            tile.block_scales, T, D, per_token.data());
    }
    for (int32_t h = 0; h < q.heads; ++h) {
      float* dst = dots + (int64_t(row) * q.heads + h) * T;
      for (int64_t t = 0; t < T; ++t) dst[t] = per_token[size_t(t) * q.heads + h];
    }
  }
}

void head_dots(const Profile& profile, const QueryRows& q_in, const KTile& tile_in, float* dots,
               double* exact_dots) {
  QueryRows q = q_in;
  KTile tile = tile_in;
  // A chain that reads the dims in another order is the in-order chain of the
  // permuted operands (one permutation for q and K). Exact sums do not depend on it.
  std::vector<uint8_t> q_perm, k_perm;
  if (profile.dim_order && profile.mma != mma::Model::exact && is_fp8(q.element)) {
    const std::vector<int32_t> order = profile.dim_order(q.head_dim);
    q_perm = permute_dims(q.codes, int64_t(q.num_rows) * q.heads, order);
    k_perm = permute_dims(tile.codes, tile.count, order);
    q.codes = q_perm.data();
    tile.codes = k_perm.data();
  }
  if (profile.accumulation == mma::Accumulation::chained) return head_dots(profile.mma_for(q.element), q, tile, dots, exact_dots);
  // Promoted: every instruction-deep slice of D is its own chain from zero (one instruction), and
  // the slices' results are added in order with one RN add each (CUDA-core promotion).
  if (profile.mma == mma::Model::exact || !is_fp8(q.element))
    throw InvalidInput("profile", "profile " + profile.name + " promotes fp8 instruction results; it needs an fp8 "
                                  "matrix-unit model and fp8 elements");
  const int32_t D = q.head_dim, K = mma::instruction_k(profile.mma);
  const int64_t nq = int64_t(q.num_rows) * q.heads, T = tile.count;
  if (T == 0 || nq == 0) return;
  if (exact_dots) head_dots(mma::Model::exact, q, tile, std::vector<float>(size_t(nq * T)).data(), exact_dots);
  std::vector<uint8_t> q_slice(size_t(nq) * K), k_slice(size_t(T) * K);
  std::vector<float> part(size_t(nq * T));
  for (int32_t s = 0; s < D / K; ++s) {
    for (int64_t i = 0; i < nq; ++i) std::copy_n(q.codes + i * D + s * K, K, q_slice.data() + i * K);
    for (int64_t t = 0; t < T; ++t) std::copy_n(tile.codes + t * D + s * K, K, k_slice.data() + t * K);
    const QueryRows qs{q.element, q.num_rows, q.heads, K, q_slice.data(), nullptr};
    const KTile ks{tile.element, K, T, k_slice.data(), tile.scales, nullptr};
    head_dots(profile.mma, qs, ks, s == 0 ? dots : part.data(), nullptr);
    if (s > 0)
      for (int64_t i = 0; i < nq * T; ++i) dots[i] = dots[i] + part[i];  // fp32 RN add (no contraction here)
  }
}

void reduce_row(const ReductionProgram& program, const Profile& profile, const float* dots, const double* exact_dots,
                int64_t tile_count, int32_t row, int32_t heads, const float* weights, const float* scales,
                int64_t count, float* out, double* exact_out) {
  constexpr int kBlock = ReductionProgram::kBlock;
  std::vector<float> soa(size_t(heads) * kBlock);
  float unit_scales[kBlock];
  std::fill(unit_scales, unit_scales + kBlock, 1.0f);
  const float* row_dots = dots + int64_t(row) * heads * tile_count;
  for (int64_t t0 = 0; t0 < count; t0 += kBlock) {
    const int n = int(std::min<int64_t>(kBlock, count - t0));
    for (int32_t h = 0; h < heads; ++h)
      std::copy(row_dots + h * tile_count + t0, row_dots + h * tile_count + t0 + n, soa.data() + size_t(h) * n);
    program.run(soa.data(), weights, profile.applies_k_scale && scales ? scales + t0 : unit_scales, n, out + t0);
  }
  if (exact_out) {
    const double* row_exact = exact_dots + int64_t(row) * heads * tile_count;
    for (int64_t t = 0; t < count; ++t) {
      const double s = profile.applies_k_scale && scales ? double(scales[t]) : 1.0;
      double sum = 0.0;
      for (int32_t h = 0; h < heads; ++h) sum += double(weights[h]) * std::max(0.0, s * row_exact[h * tile_count + t]);
      exact_out[t] = sum;
    }
  }
}

}  // namespace dsa::detail
