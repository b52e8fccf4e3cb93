// Products per second per core of each matrix-unit model's chain_dots against
// the exact tier (decode to double, one Eigen GEMM, round once to fp32: what
// the reference's exact logits do). One thread, thread CPU time. Every model
// run reports `vs_exact`, its rate over the exact tier's, both timed in the
// same iterations (the bound: at least 0.2).
//
//   cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build-rel --target mma_bench
//   build-rel/bench/mma_bench
#define EIGEN_DONT_PARALLELIZE
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <ctime>
#include <cmath>
#include <cstdint>
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
void BM_model(benchmark::State& state, mma::Model m) {
  const Inputs& in = inputs(mma::operand_format(m));
  std::vector<float> out(size_t(kTokens) * kHeads), exact_out(size_t(kTokens) * kHeads);
  double exact_seconds = 0, model_seconds = 0;
  auto model = [&] {
    mma::chain_dots(m, in.q.data(), kHeads, in.k.data(), kTokens, kHeadDim, out.data());
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
  for (mma::Model m : mma::all_models())
    benchmark::RegisterBenchmark(("chain_dots/" + std::string(mma::to_string(m))).c_str(), [m](benchmark::State& s) {
      BM_model(s, m);
    })->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
