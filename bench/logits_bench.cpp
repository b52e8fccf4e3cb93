// Exact-tier decode logits: products per second next to a plain scalar double
// loop and next to the machine's double fused-multiply-add peak, measured by
// the same program. Run: build/logits_bench (add --benchmark_filter=... to pick).
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <omp.h>

#include <cstring>

#include "dsa/formats.hpp"
#include "dsa/logits.hpp"
#include "dsa/synthetic.hpp"
#include "dsa/topk.hpp"

namespace {

dsa::DecodeProblem v32_problem(int rows, int32_t context) {
  dsa::SyntheticDecodeConfig c;  // DeepSeek V3.2: H 64, D 128, page 64
  c.batch = rows;
  c.seq_lens.assign(size_t(rows), context);
  dsa::Rng rng(42);
  return dsa::make_decode_problem(c, rng);
}

double products(const dsa::DecodeProblem& p) {
  double n = 0;
  for (int64_t r = 0; r < p.rows(); ++r) n += double(dsa::visible_len(p, r));
  return n * p.heads * p.head_dim;
}

// The reference's exact tier: Eigen double GEMMs + the `exact` reduction, all threads.
void BM_ExactTierLogits(benchmark::State& state) {
  const auto p = v32_problem(int(state.range(0)), int32_t(state.range(1)));
  const auto& profile = dsa::find_profile("exact");
  for (auto _ : state) benchmark::DoNotOptimize(dsa::decode_logits(p, profile).logits.values.data());
  state.counters["products/s"] = benchmark::Counter(products(p), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = omp_get_max_threads();
}
BENCHMARK(BM_ExactTierLogits)->Args({4, 8192})->Args({4, 32768})->Args({4, 131072})
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);

// The whole DeepSeek V3.2 decode step of the bound: 16 rows x 128k, logits + top-2048.
void BM_DecodeStep16x128k(benchmark::State& state) {
  const auto p = v32_problem(16, 131072);
  const auto& profile = dsa::find_profile("exact");
  for (auto _ : state) {
    const auto logits = dsa::decode_logits(p, profile);
    benchmark::DoNotOptimize(dsa::decode_topk(p, logits.logits, 2048).indices.data());
  }
  state.counters["products/s"] = benchmark::Counter(products(p), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DecodeStep16x128k)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);

// Baseline: a plain scalar double loop over the same products, one thread.
void BM_PlainScalarLoop(benchmark::State& state) {
  const auto p = v32_problem(1, int32_t(state.range(0)));
  const auto k = dsa::gather_tokens(p.cache, p.block_table, 0, dsa::visible_len(p, 0));
  const float* table = dsa::fp8_decode_table(dsa::Fp8Format::e4m3fn);
  std::vector<double> out(size_t(k.num_tokens) * p.heads);
  for (auto _ : state) {
    for (int64_t n = 0; n < k.num_tokens; ++n)
      for (int32_t h = 0; h < p.heads; ++h) {
        double dot = 0;
        for (int32_t d = 0; d < p.head_dim; ++d)
          dot += double(table[p.q[size_t(h) * p.head_dim + size_t(d)]]) *
                 double(table[k.codes[size_t(n) * p.head_dim + size_t(d)]]);
        out[size_t(n) * p.heads + size_t(h)] = dot;
      }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["products/s"] =
      benchmark::Counter(double(k.num_tokens) * p.heads * p.head_dim, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_PlainScalarLoop)->Arg(8192)->Unit(benchmark::kMillisecond)->UseRealTime();

// The physical floor: independent double FMAs in registers, widest vectors the
// build allows, on every thread. One FMA lane = one product.
double fma_peak_kernel(int64_t iterations) {
#if defined(__AVX512F__)
  __m512d acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_pd(1.0 + i * 1e-3);
  const __m512d a = _mm512_set1_pd(0.999999), b = _mm512_set1_pd(1e-7);
  for (int64_t it = 0; it < iterations; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_pd(acc[i], a, b);
  double sum = 0;
  for (int i = 0; i < 12; ++i) sum += _mm512_reduce_add_pd(acc[i]);
  return sum;
#elif defined(__AVX2__) && defined(__FMA__)
  __m256d acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_pd(1.0 + i * 1e-3);
  const __m256d a = _mm256_set1_pd(0.999999), b = _mm256_set1_pd(1e-7);
  for (int64_t it = 0; it < iterations; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_pd(acc[i], a, b);
  alignas(32) double lanes[4];
  double sum = 0;
  for (int i = 0; i < 12; ++i) {
    _mm256_store_pd(lanes, acc[i]);
    sum += lanes[0] + lanes[1] + lanes[2] + lanes[3];
  }
  return sum;
#else
  double acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = 1.0 + i * 1e-3;
  for (int64_t it = 0; it < iterations; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = __builtin_fma(acc[i], 0.999999, 1e-7);
  double sum = 0;
  for (double v : acc) sum += v;
  return sum;
#endif
}

constexpr int kFmaLanes =
#if defined(__AVX512F__)
    12 * 8;
#elif defined(__AVX2__) && defined(__FMA__)
    12 * 4;
#else
    12;
#endif

void BM_DoubleFmaPeak(benchmark::State& state) {
  const int64_t iterations = 1 << 22;
  double sink = 0;
  for (auto _ : state) {
#pragma omp parallel reduction(+ : sink)
    sink += fma_peak_kernel(iterations);
  }
  benchmark::DoNotOptimize(sink);
  state.counters["products/s"] = benchmark::Counter(double(iterations) * kFmaLanes * omp_get_max_threads(),
                                                    benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = omp_get_max_threads();
}
BENCHMARK(BM_DoubleFmaPeak)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
