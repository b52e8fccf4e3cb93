// Products per second per core of each matrix-unit model's chain_dots against
// the exact tier (decode to double, one Eigen GEMM, round once to fp32: what
// the reference's exact logits do). One thread, thread CPU time. Every model
// run reports `vs_exact`, its rate over the exact tier's, both timed in the
// same iterations (the bound: at least 0.2). Block-scaled models run
// chain_dots_mxfp4 on MXFP4 operands, against the same fp8 exact tier as a
// baseline of the run.
//
//   cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build-rel --target mma_bench
//   build-rel/bench/mma_bench
#define EIGEN_DONT_PARALLELIZE
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <span>
#include <string>
#include <vector>

#include "dsa/formats.hpp"
#include "dsa/mma/models.hpp"
#include "dsa/rng.hpp"

namespace {

using namespace dsa;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr int kHeads = 64;
constexpr int kHeadDim = 128;
constexpr int64_t kTokens = 2048;

// Indexer-like operands: normal values per row scaled so that the row's
// maximum lands on the format's largest value, then cast (as the K cache and
// q quantisers do).
std::vector<uint8_t> quantised_rows(Fp8Format f, int64_t rows, int cols, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> out(size_t(rows) * cols);
  std::vector<double> x(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    double amax = 1e-30;
    for (auto& v : x) {
      v = rng.normal();
      amax = std::max(amax, std::abs(v));
    }
    for (int c = 0; c < cols; ++c) out[size_t(r * cols + c)] = float_to_fp8(f, float(x[size_t(c)] / amax * fp8_max(f)));
  }
  return out;
}

struct Inputs {
  std::vector<uint8_t> q, k;
};

const Inputs& inputs(Fp8Format f) {
  static const Inputs fn{quantised_rows(Fp8Format::e4m3fn, kHeads, kHeadDim, 1),
                         quantised_rows(Fp8Format::e4m3fn, kTokens, kHeadDim, 2)};
  static const Inputs fnuz{quantised_rows(Fp8Format::e4m3fnuz, kHeads, kHeadDim, 1),
                           quantised_rows(Fp8Format::e4m3fnuz, kTokens, kHeadDim, 2)};
  return f == Fp8Format::e4m3fn ? fn : fnuz;
}

// MXFP4 operands as the V4 indexer quantises them (normal values, per-32 ue8m0 scales).
struct Mxfp4Inputs {
  std::vector<uint8_t> q, q_scales, k, k_scales;
};

void mxfp4_rows(int64_t rows, uint64_t seed, std::vector<uint8_t>& packed, std::vector<uint8_t>& scales) {
  Rng rng(seed);
  packed.assign(size_t(rows) * kHeadDim / 2, 0);
  scales.assign(size_t(rows) * kHeadDim / 32, 0);
  std::vector<float> x(static_cast<size_t>(kHeadDim));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : x) v = float(rng.normal());
    quantize_mxfp4(x, std::span(packed).subspan(size_t(r) * kHeadDim / 2, kHeadDim / 2),
                   std::span(scales).subspan(size_t(r) * kHeadDim / 32, kHeadDim / 32));
  }
}

const Mxfp4Inputs& mxfp4_inputs() {
  static const Mxfp4Inputs in = [] {
    Mxfp4Inputs i;
    mxfp4_rows(kHeads, 1, i.q, i.q_scales);
    mxfp4_rows(kTokens, 2, i.k, i.k_scales);
    return i;
  }();
  return in;
}

constexpr double kProducts = double(kHeads) * double(kTokens) * kHeadDim;

// Thread CPU time: the rate per core even when the machine is shared.
double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// The exact tier: decode, one double GEMM (exact: NUMERICS "Exact sums"), one
// rounding to fp32, as the reference's exact logits do.
void exact_tier(const Inputs& in, std::vector<float>& out) {
  const float* table = fp8_decode_table(Fp8Format::e4m3fn);
  RowMatrix q(kHeads, kHeadDim), k(kTokens, kHeadDim);
  for (int64_t i = 0; i < q.size(); ++i) q.data()[i] = table[in.q[size_t(i)]];
  for (int64_t i = 0; i < k.size(); ++i) k.data()[i] = table[in.k[size_t(i)]];
  RowMatrix g(kTokens, kHeads);
  g.noalias() = k * q.transpose();
  for (int64_t i = 0; i < g.size(); ++i) out[size_t(i)] = float(g.data()[i]);
  benchmark::DoNotOptimize(out.data());
}

void BM_exact_tier(benchmark::State& state) {
  const Inputs& in = inputs(Fp8Format::e4m3fn);
  std::vector<float> out(size_t(kTokens) * kHeads);
  const double start = cpu_seconds();
  for (auto _ : state) exact_tier(in, out);
  state.counters["products/s"] = kProducts * double(state.iterations()) / (cpu_seconds() - start);
}

// Each iteration times the exact tier and the model back to back, so that the
// ratio holds even while other work slows the machine down.
void BM_model(benchmark::State& state, mma::Model m, bool block_scaled) {
  std::vector<float> out(size_t(kTokens) * kHeads), exact_out(size_t(kTokens) * kHeads);
  double exact_seconds = 0, model_seconds = 0;
  auto model = [&] {
    if (block_scaled) {
      const Mxfp4Inputs& in = mxfp4_inputs();
      mma::chain_dots_mxfp4(m, in.q.data(), in.q_scales.data(), kHeads, in.k.data(), in.k_scales.data(), kTokens,
                            kHeadDim, out.data());
    } else {
      const Inputs& in = inputs(mma::operand_format(m));
      mma::chain_dots(m, in.q.data(), kHeads, in.k.data(), kTokens, kHeadDim, out.data());
    }
    benchmark::DoNotOptimize(out.data());
  };
  for (auto _ : state) {
    // Each timed run follows an untimed one of the same kind: both warm.
    exact_tier(inputs(Fp8Format::e4m3fn), exact_out);
    const double t0 = cpu_seconds();
    exact_tier(inputs(Fp8Format::e4m3fn), exact_out);
    const double t1 = cpu_seconds();
    model();
    const double t2 = cpu_seconds();
    model();
    const double t3 = cpu_seconds();
    exact_seconds += t1 - t0;
    model_seconds += t3 - t2;
  }
  const double n = double(state.iterations());
  state.counters["products/s"] = kProducts * n / model_seconds;
  state.counters["exact/s"] = kProducts * n / exact_seconds;
  state.counters["vs_exact"] = exact_seconds / model_seconds;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RegisterBenchmark("exact_tier_eigen_gemm", BM_exact_tier)->Unit(benchmark::kMillisecond);
  for (mma::Model m : mma::all_models()) {
    const bool block_scaled = mma::operands(m) == mma::Operands::mxfp4;
    const std::string name = (block_scaled ? "chain_dots_mxfp4/" : "chain_dots/") + std::string(mma::to_string(m));
    benchmark::RegisterBenchmark(name.c_str(), [m, block_scaled](benchmark::State& s) {
      BM_model(s, m, block_scaled);
    })->Unit(benchmark::kMillisecond);
  }
  // The exact tier of MXFP4 (exact block sums, 128-bit or 1024-bit combination).
  benchmark::RegisterBenchmark("chain_dots_mxfp4/exact", [](benchmark::State& s) {
    BM_model(s, mma::Model::exact, true);
  })->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
