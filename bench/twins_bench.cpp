// The top-k twins against the reference's top-k on rows of 128k columns, k
// 2048 (DeepSeek V3.2) and 512 (V4), then a table of the ratios.
//
// Two value distributions: N(0, 1), where the coarse fp16 pass decides almost
// everything, and indexer-like logits clustered in a narrow band (N(4, 0.01)),
// where most of a row shares a few coarse bins and the fine passes run.
// "rows 16" runs 16 rows on every thread (all three parallelize over rows),
// "rows 1" one row on one thread. Run: build/twins_bench
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "dsa/optimized/persistent_topk.hpp"
#include "dsa/optimized/radix_topk.hpp"
#include "dsa/rng.hpp"
#include "dsa/topk.hpp"

namespace {

constexpr int64_t kColumns = 131072;

dsa::Logits make_rows(int64_t rows, bool clustered) {
  dsa::Logits l{rows, kColumns, std::vector<float>(size_t(rows * kColumns))};
  dsa::Rng rng(7);
  for (float& v : l.values) v = clustered ? float(4.0 + 0.01 * rng.normal()) : float(rng.normal());
  return l;
}

dsa::RowBounds full_rows(int64_t rows) {
  return {std::vector<int64_t>(size_t(rows), 0), std::vector<int64_t>(size_t(rows), kColumns)};
}

void run_reference(benchmark::State& state, int64_t rows, int k, bool clustered) {
  const dsa::Logits l = make_rows(rows, clustered);
  const std::vector<int64_t> lens(size_t(rows), kColumns);
  std::vector<int32_t> one_row(static_cast<size_t>(k));
  for (auto _ : state) {
    if (rows == 1) {  // the per-row function itself, without a parallel region
      dsa::topk_row(l.values.data(), kColumns, k, one_row.data());
      benchmark::DoNotOptimize(one_row.data());
    } else {
      benchmark::DoNotOptimize(dsa::topk_rows(l, lens, k).indices.data());
    }
  }
}

void run_twin(benchmark::State& state, std::unique_ptr<dsa::IndexerOps> twin, int64_t rows, int k, bool clustered) {
  const dsa::Logits l = make_rows(rows, clustered);
  const dsa::RowBounds bounds = full_rows(rows);
  dsa::TopkIndices out{rows, k, std::vector<int32_t>(size_t(rows) * size_t(k))};
  for (auto _ : state) {
    twin->topk(l, bounds, out);
    benchmark::DoNotOptimize(out.indices.data());
  }
}

// Keeps each run's time per iteration, keyed by name.
class RatioReporter : public benchmark::ConsoleReporter {
public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs)
      if (run.run_type == Run::RT_Iteration) {
        wall[run.run_name.function_name] = run.GetAdjustedRealTime();
        cpu[run.run_name.function_name] = run.GetAdjustedCPUTime();
      }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> wall, cpu;
};

std::string case_name(const char* impl, int64_t rows, int k, bool clustered) {
  return std::string(impl) + "/rows:" + std::to_string(rows) + "/k:" + std::to_string(k) +
         (clustered ? "/clustered" : "/normal");
}

}  // namespace

int main(int argc, char** argv) {
  struct Case {
    int64_t rows;
    int k;
    bool clustered;
  };
  std::vector<Case> cases;
  for (const int64_t rows : {16, 1})
    for (const int k : {2048, 512})
      for (const bool clustered : {false, true}) cases.push_back({rows, k, clustered});
  for (const Case& c : cases) {
    benchmark::RegisterBenchmark(case_name("reference", c.rows, c.k, c.clustered).c_str(),
                                 [c](benchmark::State& s) { run_reference(s, c.rows, c.k, c.clustered); })
        ->Unit(benchmark::kMillisecond)
        ->MeasureProcessCPUTime()
        ->UseRealTime();
    benchmark::RegisterBenchmark(case_name("cpu_radix_topk", c.rows, c.k, c.clustered).c_str(),
                                 [c](benchmark::State& s) {
                                   run_twin(s, dsa::optimized::make_cpu_radix_topk(), c.rows, c.k, c.clustered);
                                 })
        ->Unit(benchmark::kMillisecond)
        ->MeasureProcessCPUTime()
        ->UseRealTime();
    benchmark::RegisterBenchmark(case_name("cpu_persistent_topk", c.rows, c.k, c.clustered).c_str(),
                                 [c](benchmark::State& s) {
                                   run_twin(s, dsa::optimized::make_cpu_persistent_topk(), c.rows, c.k, c.clustered);
                                 })
        ->Unit(benchmark::kMillisecond)
        ->MeasureProcessCPUTime()
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  // Wall time is what a user waits; process CPU time (all threads) is the
  // work done, and stays meaningful on a machine shared with other jobs.
  for (const auto* times : {&reporter.wall, &reporter.cpu}) {
    std::printf("\nreference / twin, %s (above 1: the twin is faster)\n",
                times == &reporter.wall ? "wall time" : "process CPU time");
    std::printf("%-28s %16s %20s\n", "case", "cpu_radix_topk", "cpu_persistent_topk");
    for (const Case& c : cases) {
      const auto ref = times->find(case_name("reference", c.rows, c.k, c.clustered));
      if (ref == times->end()) continue;
      auto ratio = [&](const char* impl) {
        const auto twin = times->find(case_name(impl, c.rows, c.k, c.clustered));
        return twin == times->end() ? 0.0 : ref->second / twin->second;
      };
      const std::string label = case_name("", c.rows, c.k, c.clustered).substr(1);
      std::printf("%-28s %15.2fx %19.2fx\n", label.c_str(), ratio("cpu_radix_topk"), ratio("cpu_persistent_topk"));
    }
  }
  benchmark::Shutdown();
  return 0;
}
