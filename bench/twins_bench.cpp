// Every implementation of the table that takes the top-k op, against the
// reference's, on rows of 128k columns, k 2048 (DeepSeek V3.2) and 512 (V4),
// then a table of the ratios (reference / implementation, in the same run).
//
// Two value distributions: N(0, 1), where the coarse fp16 pass decides almost
// everything, and indexer-like logits clustered in a narrow band (N(4, 0.01)),
// where most of a row shares a few coarse bins and the fine passes run.
// "rows 16" runs 16 rows on every thread (each parallelizes over rows),
// "rows 1" one row on one thread. Run: build/twins_bench
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "dsa/optimized/implementations.hpp"
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

void run_topk(benchmark::State& state, std::unique_ptr<dsa::IndexerOps> impl, int64_t rows, int k, bool clustered) {
  const dsa::Logits l = make_rows(rows, clustered);
  const dsa::RowBounds bounds = full_rows(rows);
  dsa::TopkIndices out{rows, k, std::vector<int32_t>(size_t(rows) * size_t(k))};
  for (auto _ : state) {
    impl->topk(l, bounds, out);
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
  // The table lists the reference first: the baseline of the ratios.
  const std::string baseline = dsa::optimized::implementations().front().name;
  std::vector<const dsa::optimized::Implementation*> impls;
  for (const auto* entry : dsa::optimized::implementations_taking(dsa::Op::topk))
    if (entry->available()) impls.push_back(entry);
  for (const Case& c : cases)
    for (const auto* entry : impls)
      benchmark::RegisterBenchmark(case_name(entry->name.c_str(), c.rows, c.k, c.clustered).c_str(),
                                   [c, entry](benchmark::State& s) { run_topk(s, entry->make(), c.rows, c.k, c.clustered); })
          ->Unit(benchmark::kMillisecond)
          ->MeasureProcessCPUTime()
          ->UseRealTime();
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  // Wall time is what a user waits; process CPU time (all threads) is the
  // work done, and stays meaningful on a machine shared with other jobs.
  for (const auto* times : {&reporter.wall, &reporter.cpu}) {
    std::printf("\n%s / implementation, %s (above 1: the implementation is faster)\n", baseline.c_str(),
                times == &reporter.wall ? "wall time" : "process CPU time");
    std::printf("%-28s", "case");
    for (const auto* entry : impls)
      if (entry->name != baseline) std::printf(" %22s", entry->name.c_str());
    std::printf("\n");
    for (const Case& c : cases) {
      const auto ref = times->find(case_name(baseline.c_str(), c.rows, c.k, c.clustered));
      if (ref == times->end()) continue;
      const std::string label = case_name("", c.rows, c.k, c.clustered).substr(1);
      std::printf("%-28s", label.c_str());
      for (const auto* entry : impls) {
        if (entry->name == baseline) continue;
        const auto other = times->find(case_name(entry->name.c_str(), c.rows, c.k, c.clustered));
        std::printf(" %21.2fx", other == times->end() ? 0.0 : ref->second / other->second);
      }
      std::printf("\n");
    }
  }
  benchmark::Shutdown();
  return 0;
}
