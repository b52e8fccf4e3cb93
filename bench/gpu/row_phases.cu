// Where the row kernel's time goes: RowTopK at 1024 threads (the block the dispatch takes for rows of values while
// they are at most the SMs' count), its phases (row_phase.hpp) by clock64. Thread 0 of each row's block stamps the
// clock after a block barrier at each phase's end (the barriers add a little to every phase), and %globaltimer at
// the first and the last, which calibrates the cycles; each phase is the median over the rows, beside the launch's
// time by CUDA events (graph replays, inputs rotated over 3 x the L2) and an empty kernel's. Phases 2 to 5 are the
// sampled way's: a row that misses its sample shows -1 there. 64 rows are also run on 32 blocks, whose second rows
// find the kernel's code already fetched on their SM.
//   row_phases [--reps N] [--json FILE]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

// The stamps, defined before row_phase.hpp (which otherwise defines them as nothing); they name kPhases,
// kMaxRows and row_phase_clocks, declared after it.
#ifdef __CUDA_ARCH__
#define DSA_ROW_PHASE(row, phase)                                                      \
  do {                                                                                 \
    __syncthreads();                                                                   \
    if (threadIdx.x == 0 && (row) < kMaxRows) {                                        \
      row_phase_clocks[row][phase] = clock64();                                        \
      unsigned long long now_;                                                         \
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now_));                         \
      if ((phase) == 0) row_phase_clocks[row][kPhases] = now_;                         \
      if ((phase) == kPhases - 1) row_phase_clocks[row][kPhases + 1] = now_;           \
    }                                                                                  \
  } while (0)
// The stamp waits for every value of `values` (a never-true test on them all).
#define DSA_ROW_PHASE_DRAWN(row, phase, values)                                        \
  do {                                                                                 \
    uint32_t all_ = 0;                                                                 \
    for (uint32_t v_ : values) all_ ^= v_;                                             \
    if (all_ == 0x9e3779b9u && threadIdx.x == 1u << 30) row_phase_clocks[0][0] = 0;    \
    DSA_ROW_PHASE(row, phase);                                                         \
  } while (0)
#else
#define DSA_ROW_PHASE(row, phase) ((void)0)
#define DSA_ROW_PHASE_DRAWN(row, phase, values) ((void)0)
#endif

#include "dsa/common/select/row_phase.hpp"

namespace {
constexpr int kPhases = dsa::common::select::kRowPhases;
constexpr int kMaxRows = 256;
}  // namespace

// Per row: the phases' clocks, then the globaltimer at the first and the last stamp.
__device__ unsigned long long row_phase_clocks[kMaxRows][kPhases + 2];

#include "dsa/optimized/cuda/select.hpp"
#include "gpu_timing.cuh"
#include "select_inputs.cuh"
#include "select_launch.cuh"

namespace {
using dsa::common::RowSpan;
using dsa::common::select::DenseRows;
using namespace dsa::bench_gpu::select_inputs;
using Row = dsa::cuda::select_kernels::RowOf<1024>;

// Its own kernel (not the library's row_topk instantiation, built without the stamps).
__global__ void __launch_bounds__(1024, 1) row_topk_stamped(DenseRows src, int32_t k, int32_t* out) {
  extern __shared__ __align__(16) unsigned char smem[];
  Row::run(dsa::common::arch::Cuda{}, *reinterpret_cast<Row::Shared*>(smem), src, k, out);
}
__global__ void empty_kernel() {}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1.0 : v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  const char* json_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc && (reps = std::atoi(argv[++i])) > 0) {
    } else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: row_phases [--reps N] [--json FILE]\n");
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "row_phases: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  constexpr size_t kSmem = sizeof(Row::Shared);
  CHECK(cudaFuncSetAttribute(row_topk_stamped, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem)));
  const char* names[kPhases - 1] = {"clear", "draw", "count", "key", "scan", "keys", "cut", "rank-scan", "emit"};
  std::FILE* json = json_path ? std::fopen(json_path, "w") : nullptr;
  if (json_path && !json) {
    std::fprintf(stderr, "row_phases: cannot write %s\n", json_path);
    return 1;
  }
  if (json) std::fprintf(json, "{\"device\": \"%s\", \"rows\": [", prop.name);
  std::printf("%s: the row kernel (1024 threads) by phase, us (medians over rows)\n", prop.name);
  std::printf("%-16s %5s %-8s %8s %8s %8s", "shape", "k", "data", "event", "empty", "block");
  for (const char* n : names) std::printf(" %9s", n);
  std::printf("\n");
  const float empty = dsa::bench_gpu::graph_median_us([&](int, cudaStream_t s) { empty_kernel<<<64, 1024, 0, s>>>(); },
                                                      1, reps, 1, stream);
  bool first = true;
  // 64 rows on 32 blocks: each block takes a second row after its first, with the kernel's code already fetched
  // on its SM; the rows of each round are tabled apart (`/32b 1st`, `/32b 2nd`).
  struct Launch {
    int64_t rows, blocks;
  };
  for (const Launch grid : {Launch{1, 1}, Launch{64, 64}, Launch{64, 32}}) {
    const int64_t rows = grid.rows;
    for (const int64_t cols : {int64_t(32768), int64_t(131072)}) {
      const size_t bytes = size_t(rows * cols) * 4;
      const int sets = input_sets(bytes, prop);
      std::vector<float*> inputs(static_cast<size_t>(sets), nullptr);
      for (auto& p : inputs) CHECK(cudaMalloc(&p, bytes));
      int32_t *out = nullptr, *d_lens = nullptr;
      CHECK(cudaMalloc(&out, size_t(rows) * 2048 * 4));
      const RowSpan span = full_rows(rows, cols, d_lens);
      for (const Kind kind : {Kind::normal, Kind::minus_inf}) {
        for (int i = 0; i < sets; ++i) fill<<<1024, 256, 0, stream>>>(inputs[size_t(i)], rows, cols, int(kind), 7 + i);
        for (const int32_t k : {512, 2048}) {
          auto launch = [&](int i, cudaStream_t s) {
            row_topk_stamped<<<int(grid.blocks), 1024, kSmem, s>>>(DenseRows{inputs[size_t(i)], cols, span}, k, out);
          };
          const float event = dsa::bench_gpu::graph_median_us(launch, sets, reps, 1, stream);
          std::vector<unsigned long long> h(size_t(kMaxRows) * (kPhases + 2), 0);
          CHECK(cudaMemcpyToSymbol(row_phase_clocks, h.data(), h.size() * 8));
          launch(0, stream);
          CHECK(cudaStreamSynchronize(stream));
          CHECK(cudaMemcpyFromSymbol(h.data(), row_phase_clocks, h.size() * 8));
          for (int64_t round = 0; round * grid.blocks < rows; ++round) {
            std::vector<double> block, phase[kPhases - 1];
            for (int64_t r = round * grid.blocks; r < (round + 1) * grid.blocks && r < rows; ++r) {
              const unsigned long long* c = &h[size_t(r) * (kPhases + 2)];
              const double ns = double(c[kPhases + 1] - c[kPhases]);
              const double per_ns = ns > 0 ? double(c[kPhases - 1] - c[0]) / ns : 1.0;
              block.push_back(ns / 1000.0);
              for (int p = 1; p < kPhases; ++p)
                phase[p - 1].push_back(c[p] && c[p - 1] && c[p] >= c[p - 1] ? double(c[p] - c[p - 1]) / per_ns / 1000.0 : -1.0);
            }
            std::string shape = std::to_string(rows) + "x" + std::to_string(cols / 1024) + "k";
            if (grid.blocks < rows) shape += "/" + std::to_string(grid.blocks) + "b " + (round == 0 ? "1st" : "2nd");
            const char* data = name_of(kind);
            std::printf("%-16s %5d %-8s %8.1f %8.1f %8.1f", shape.c_str(), k, data, event, empty, median(block));
            for (auto& v : phase) std::printf(" %9.2f", median(v));
            std::printf("\n");
            std::fflush(stdout);
            if (json) {
              std::fprintf(json, "%s\n {\"shape\": \"%s\", \"k\": %d, \"data\": \"%s\", \"event_us\": %.2f, \"empty_us\": %.2f, \"block_us\": %.2f",
                           first ? "" : ",", shape.c_str(), k, data, event, empty, median(block));
              for (int p = 0; p < kPhases - 1; ++p) std::fprintf(json, ", \"%s_us\": %.3f", names[p], median(phase[p]));
              std::fprintf(json, "}");
              first = false;
            }
          }
        }
      }
      for (auto p : inputs) CHECK(cudaFree(p));
      for (void* p : {(void*)out, (void*)d_lens}) CHECK(cudaFree(p));
    }
  }
  if (json) std::fprintf(json, "\n]}\n"), std::fclose(json);
  return 0;
}
