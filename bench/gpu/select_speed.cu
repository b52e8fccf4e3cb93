// Speed of the decode top-k on the GPU (CUDA events; not a test), in one run
// with its baselines: the read-once floor (rows x columns x 4 bytes at the read
// bandwidth measured here), vLLM's top_k_per_row_decode built from vLLM's
// source (vllm_topk.cu; absent from a build without third_party/vllm) and its
// persistent_topk op (vllm_persistent_topk.cu: k 512, 1024 and 2048, with vLLM's
// dispatch, persistent_topk_kernel for <= 32 rows and FilteredTopK for more), and
// ours: cuda_select's launch (the dispatch of select_group_plan: the row
// kernel or the group kernel), the row kernel (a block per row) and the group
// kernel (a row per cluster of G blocks, one block per SM, a cache of 4 tiles)
// each on its own, the group kernel at 1024 threads of 8 keys, and the
// previous tree kernel (their outputs must be the same array: all write the
// reference's set in position order). torch.topk is timed by
// scripts/gpu/select_torch_bench.py in the same device call.
//
// Each time is the median over graph replays after warm-up; a replay runs
// every input set once, the sets together several times the L2, so every
// launch reads from HBM. Also per shape: whether our sets are identical on a
// second run (bit for bit), whether vLLM's are (as sets), and in how many rows
// our sets differ from vLLM's (on untied data they must not).
//
// Then the candidate launches against the dense selection path they replace,
// at 128k context, candidate blocks of 8, 2048 of them, top 512: the source
// layer's candidate selection (block scores over the dense row), and for the
// consumer layers the dense path (candidate mask over the row, then top-k of
// the whole row) against the candidate top-k (reading only the candidate
// blocks' columns of the dense row) and the fused launch's top-k half (over
// the compact row of 16384 candidate logits). The logits kernels themselves
// are timed by logits_speed and the whole consumer step by candidate_path_speed:
// this part times the selection only. --compact-sweep adds the compact top-k at
// every group size; --profile-compact G only launches the compact top-k of 8
// rows a few times (the group kernel at G blocks a row, then the row kernel),
// and --profile-dense ROWS:COLS the decode top-k's dispatch (k 512), for a profiler;
// --candidates-only leaves out the decode top-k's table.
// --candidate-rows R1,R2,... times the candidate part at those row counts (default 8,64);
// --decode-shapes 64x131072,... the decode top-k's table at those shapes (default the four above);
// --row-threads-sweep times only the row kernel at 512 and 1024 threads a block (exit 1 if their arrays differ).
//   select_speed [--json FILE] [--reps N] [--quick] [--compact-sweep] [--profile-compact G]
//                [--profile-dense ROWS:COLS] [--candidates-only] [--candidate-rows R1,R2,...]
//                [--decode-shapes RxC,...] [--row-threads-sweep]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dsa/optimized/cuda/select.hpp"
#include "gpu_clock.hpp"
#include "gpu_timing.cuh"
#include "select_inputs.cuh"
#include "select_launch.cuh"
#if DSA_BENCH_VLLM
#include "dsa/optimized/cuda/vllm_topk.hpp"
#endif
#if DSA_BENCH_VLLM && DSA_WITH_VLLM_PERSISTENT_TOPK
#define DSA_BENCH_VLLM_PERSISTENT 1
#else
#define DSA_BENCH_VLLM_PERSISTENT 0
#endif

namespace {

using dsa::common::RowSpan;
using dsa::common::select::Bug;
using dsa::common::select::DenseRows;
using dsa::common::select::GroupPlan;
using dsa::common::select::TreeOutput;
using dsa::common::select::TreePlan;
using dsa::cuda::SelectSource;
using namespace dsa::bench_gpu::select_inputs;
using dsa::bench_gpu::download;

// launch(i) for i in [0, per_replay) captured in one graph; returns the median
// replay time divided by per_replay, in microseconds.
template <class F>
float time_us(F&& launch, int per_replay, int reps, cudaStream_t stream) {
  return dsa::bench_gpu::graph_median_us([&](int i, cudaStream_t) { launch(i); }, per_replay, reps, 1, stream);
}

#if DSA_BENCH_VLLM
// Rows whose sets differ (each row sorted first): ours against vLLM's, and vLLM's between two runs.
int64_t rows_differing(std::vector<int32_t> a, std::vector<int32_t> b, int64_t rows, int64_t k) {
  int64_t n = 0;
  for (int64_t r = 0; r < rows; ++r) {
    std::sort(a.begin() + r * k, a.begin() + (r + 1) * k);
    std::sort(b.begin() + r * k, b.begin() + (r + 1) * k);
    n += !std::equal(a.begin() + r * k, a.begin() + (r + 1) * k, b.begin() + r * k);
  }
  return n;
}
#endif

struct Shape {
  int64_t rows, cols;
};

// The candidate part (see the top of the file); returns its JSON records.
__global__ void empty_kernel() {}

std::string candidate_part(double bw, int reps, const cudaDeviceProp& prop, cudaStream_t stream, bool sweep,
                           const std::vector<int64_t>& row_counts) {
  using dsa::common::CandidateMaskRows;
  using dsa::common::select::BlockScores;
  using dsa::common::select::CandidateColumns;
  constexpr int64_t kCols = 131072;
  constexpr int32_t kBlock = 8, kSlots = 2048, kTopk = 512;
  std::string records;
  std::printf("\ncandidates (128k, %d blocks of %d, top %d), us: %-8s %8s %8s %9s %9s %9s %9s %9s %9s %9s %9s %9s %7s %5s %5s\n",
              kSlots, kBlock, kTopk, "rows", "select", "mask", "dense tk", "mask+tk", "cand tk", "cand grp", "cand shrt",
              "compact", "cmp grp", "cmp row", "cmp shrt", "ratio", "kern", "same");
  for (const int64_t rows : row_counts) {
    const size_t bytes = size_t(rows * kCols) * 4;
    const int sets = input_sets(bytes, prop);
    const size_t n_sets = static_cast<size_t>(sets);
    std::vector<float*> dense(n_sets), work(n_sets), compact(n_sets);
    std::vector<int32_t*> blocks(n_sets);
    int32_t* d_lens = nullptr;
    const RowSpan span = full_rows(rows, kCols, d_lens);
    const GroupPlan sel_plan =
        dsa::cuda::select_group_plan(rows, kCols / kBlock, kSlots, "candidate_select", SelectSource::blocks);
    const GroupPlan dense_plan = dsa::cuda::select_group_plan(rows, kCols, kTopk, "topk", SelectSource::values);
    const GroupPlan cand_plan =
        dsa::cuda::select_group_plan(rows, int64_t(kSlots) * kBlock, kTopk, "candidate_topk", SelectSource::columns);
    int32_t* out = nullptr;
    CHECK(cudaMalloc(&out, size_t(rows) * kSlots * 4));
    for (int i = 0; i < sets; ++i) {
      CHECK(cudaMalloc(&dense[size_t(i)], bytes));
      CHECK(cudaMalloc(&work[size_t(i)], bytes));
      CHECK(cudaMalloc(&compact[size_t(i)], size_t(rows) * kSlots * kBlock * 4));
      CHECK(cudaMalloc(&blocks[size_t(i)], size_t(rows) * kSlots * 4));
      fill<<<1024, 256, 0, stream>>>(dense[size_t(i)], rows, kCols, int(Kind::normal), 77 + i);
      fill<<<1024, 256, 0, stream>>>(compact[size_t(i)], rows, int64_t(kSlots) * kBlock, int(Kind::normal), 99 + i);
      // The candidate blocks of each set: the source layer's own selection.
      dsa::cuda::launch_select(BlockScores{dense[size_t(i)], kCols, span, kBlock}, sel_plan, blocks[size_t(i)], stream);
      CHECK(cudaMemcpyAsync(work[size_t(i)], dense[size_t(i)], bytes, cudaMemcpyDeviceToDevice, stream));
    }
    CHECK(cudaStreamSynchronize(stream));
    int32_t* const o = out;
    auto at = [&](auto& v, int i) { return v[size_t(i % sets)]; };
    const float t_select = time_us(
        [&](int i) { dsa::cuda::launch_select(BlockScores{at(dense, i), kCols, span, kBlock}, sel_plan, o, stream); },
        sets, reps, stream);
    // The mask is idempotent, so replays of it on the same rows time the same work.
    const float t_mask = time_us(
        [&](int i) {
          dsa::cuda::launch_candidate_mask(CandidateMaskRows{at(work, i), kCols, span, at(blocks, i), kSlots, kBlock, true},
                                           stream);
        },
        sets, reps, stream);
    const float t_dense = time_us(
        [&](int i) { dsa::cuda::launch_select(DenseRows{at(work, i), kCols, span}, dense_plan, o, stream); }, sets, reps,
        stream);
    // The candidate top-k over the dense rows' candidate columns: as dispatched, by the group kernel alone and by
    // the short-row kernel alone (the dispatch's choice between the two for rows of one tile).
    auto time_cand = [&](const GroupPlan& plan) {
      return time_us(
          [&](int i) {
            dsa::cuda::launch_select(CandidateColumns{at(dense, i), kCols, span, at(blocks, i), kSlots, kBlock, false},
                                     plan, o, stream);
          },
          sets, reps, stream);
    };
    const float t_cand = time_cand(cand_plan);
    const float t_cand_group = time_cand(GroupPlan{cand_plan.k, cand_plan.group, false, false});
    const float t_cand_short = time_cand(GroupPlan{cand_plan.k, cand_plan.group, false, true});
    // The fused launch's top-k half over the compact rows, by a plan: as dispatched, by each kernel.
    auto compact_src = [&](int i) {
      return CandidateColumns{at(compact, i), int64_t(kSlots) * kBlock, span, at(blocks, i), kSlots, kBlock, true};
    };
    auto time_compact = [&](const GroupPlan& plan) {
      return time_us([&](int i) { dsa::cuda::launch_select(compact_src(i), plan, o, stream); }, sets, reps, stream);
    };
    const float t_compact = time_compact(cand_plan);
    const float t_compact_group = time_compact(GroupPlan{cand_plan.k, cand_plan.group, false, false});
    const float t_compact_row = time_compact(GroupPlan{cand_plan.k, cand_plan.group, true, false});
    const float t_compact_short = time_compact(GroupPlan{cand_plan.k, cand_plan.group, false, true});
    // The three kernels write the same array (the reference's set in position order).
    bool compact_same = true;
    {
      std::vector<int32_t> first;
      for (const GroupPlan& p : {GroupPlan{kTopk, cand_plan.group, false, false}, GroupPlan{kTopk, cand_plan.group, true, false},
                                 GroupPlan{kTopk, cand_plan.group, false, true}}) {
        dsa::cuda::launch_select(compact_src(0), p, o, stream);
        const std::vector<int32_t> got = download(o, size_t(rows) * kTopk);
        if (first.empty()) first = got;
        compact_same = compact_same && got == first;
      }
    }
    if (sweep) {
      // The compact top-k at each group size, by the library's instantiation (512 x 16) and by 1024 x 8.
      std::printf("  compact sweep (%lld rows):", (long long)rows);
      for (const int g : {1, 2, 4, 8}) {
        const GroupPlan gp{kTopk, g, false};
        const float b = time_us(
            [&](int i) {
              dsa::cuda::select_kernels::launch_group<CandidateColumns, 4, 1, 1024, 8>(compact_src(i), gp, o, stream);
            },
            sets, reps, stream);
        std::printf("  g%d %.1f / %.1f (1024t)", g, time_compact(gp), b);
      }
      const float empty = time_us([&](int) { empty_kernel<<<rows, 512, 0, stream>>>(); }, sets, reps, stream);
      std::printf("  empty launch %.1f\n", empty);
      // The candidate selection (block scores, 8 values an entry) by the short-row kernel, which the
      // dispatch does not send it to.
      GroupPlan short_sel = sel_plan;
      short_sel.short_row = true, short_sel.row_kernel = false;
      const float t_select_short = time_us(
          [&](int i) { dsa::cuda::launch_select(BlockScores{at(dense, i), kCols, span, kBlock}, short_sel, o, stream); },
          sets, reps, stream);
      std::printf("  candidate select: dispatched %.1f us, short-row kernel %.1f us\n", t_select, t_select_short);
    }
    const float dense_path = t_mask + t_dense;
    const char* compact_kernel = cand_plan.short_row ? "short" : cand_plan.row_kernel ? "row" : "group";
    std::printf("%*s %8lld %8.1f %8.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %7.2f %5s %5s\n", 48, "",
                (long long)rows, t_select, t_mask, t_dense, dense_path, t_cand, t_cand_group, t_cand_short, t_compact,
                t_compact_group, t_compact_row, t_compact_short, dense_path / t_compact, compact_kernel,
                compact_same ? "yes" : "NO");
    std::fflush(stdout);
    char rec[1024];
    std::snprintf(rec, sizeof rec,
                  "%s{\"rows\": %lld, \"columns\": %lld, \"block_size\": %d, \"slots\": %d, \"k\": %d, "
                  "\"candidate_select_us\": %.2f, \"mask_us\": %.2f, \"dense_topk_us\": %.2f, \"candidate_topk_us\": %.2f, "
                  "\"candidate_topk_group_kernel_us\": %.2f, \"candidate_topk_short_kernel_us\": %.2f, "
                  "\"compact_topk_us\": %.2f, \"compact_topk_group_kernel_us\": %.2f, \"compact_topk_row_kernel_us\": %.2f, "
                  "\"compact_topk_short_kernel_us\": %.2f, \"compact_kernel\": \"%s\", \"compact_kernels_same_array\": %s, "
                  "\"compact_row_kernel\": %s, "
                  "\"dense_row_kernel\": %s, \"floor_dense_row_us\": %.2f, \"floor_compact_row_us\": %.2f}",
                  records.empty() ? "" : ",\n    ", (long long)rows, (long long)kCols, kBlock, kSlots, kTopk, t_select,
                  t_mask, t_dense, t_cand, t_cand_group, t_cand_short, t_compact, t_compact_group, t_compact_row,
                  t_compact_short, compact_kernel,
                  compact_same ? "true" : "false", cand_plan.row_kernel ? "true" : "false",
                  dense_plan.row_kernel ? "true" : "false", double(bytes) / (bw * 1e3),
                  double(rows * kSlots * kBlock * 4) / (bw * 1e3));
    records += rec;
    for (int i = 0; i < sets; ++i) {
      CHECK(cudaFree(dense[size_t(i)]));
      CHECK(cudaFree(work[size_t(i)]));
      CHECK(cudaFree(compact[size_t(i)]));
      CHECK(cudaFree(blocks[size_t(i)]));
    }
    CHECK(cudaFree(out));
    CHECK(cudaFree(d_lens));
  }
  return records;
}

// The compact top-k of 8 rows (group kernel of `group` blocks a row, the row kernel, the short-row kernel), three
// launches each.
void profile_compact(int group, cudaStream_t stream) {
  using dsa::common::select::BlockScores;
  using dsa::common::select::CandidateColumns;
  constexpr int64_t kCols = 131072, rows = 8;
  constexpr int32_t kBlock = 8, kSlots = 2048, kTopk = 512;
  float *dense = nullptr, *compact = nullptr;
  int32_t *blocks = nullptr, *out = nullptr, *d_lens = nullptr;
  CHECK(cudaMalloc(&dense, size_t(rows * kCols) * 4));
  CHECK(cudaMalloc(&compact, size_t(rows) * kSlots * kBlock * 4));
  CHECK(cudaMalloc(&blocks, size_t(rows) * kSlots * 4));
  CHECK(cudaMalloc(&out, size_t(rows) * kSlots * 4));
  const RowSpan span = full_rows(rows, kCols, d_lens);
  fill<<<1024, 256, 0, stream>>>(dense, rows, kCols, int(Kind::normal), 77);
  fill<<<1024, 256, 0, stream>>>(compact, rows, int64_t(kSlots) * kBlock, int(Kind::normal), 99);
  const GroupPlan sel_plan =
      dsa::cuda::select_group_plan(rows, kCols / kBlock, kSlots, "candidate_select", SelectSource::blocks);
  dsa::cuda::launch_select(BlockScores{dense, kCols, span, kBlock}, sel_plan, blocks, stream);
  const CandidateColumns src{compact, int64_t(kSlots) * kBlock, span, blocks, kSlots, kBlock, true};
  for (int i = 0; i < 3; ++i) dsa::cuda::launch_select(src, GroupPlan{kTopk, group, false, false}, out, stream);
  for (int i = 0; i < 3; ++i) dsa::cuda::launch_select(src, GroupPlan{kTopk, group, true, false}, out, stream);
  for (int i = 0; i < 3; ++i)
    dsa::cuda::launch_select(src, GroupPlan{kTopk, group, false, true}, out, stream);
  CHECK(cudaStreamSynchronize(stream));
  for (void* p : {(void*)dense, (void*)compact, (void*)blocks, (void*)out, (void*)d_lens}) CHECK(cudaFree(p));
}

// The row kernel at 512 threads a block (two blocks an SM) and at 1024 (one), on 1 to 256 rows of 128k, every kind,
// k 512 and 2048; both must write the same array (returns whether they did everywhere).
bool row_threads_sweep(int reps, const cudaDeviceProp& prop, cudaStream_t stream) {
  bool all_same = true;
  namespace sk = dsa::cuda::select_kernels;
  constexpr int64_t kCols = 131072;
  std::printf("row kernel, us: %-10s %5s %-10s %9s %9s %7s  same\n", "shape", "k", "data", "512 thr", "1024 thr", "ratio");
  for (const int64_t rows : {int64_t(1), int64_t(32), int64_t(64), int64_t(128), int64_t(132), int64_t(256)}) {
    const size_t bytes = size_t(rows * kCols) * 4;
    const int sets = input_sets(bytes, prop);
    std::vector<float*> inputs(static_cast<size_t>(sets));
    for (auto& p : inputs) CHECK(cudaMalloc(&p, bytes));
    int32_t *d_lens = nullptr, *out = nullptr;
    const RowSpan span = full_rows(rows, kCols, d_lens);
    CHECK(cudaMalloc(&out, size_t(rows) * 2048 * 4));
    for (const Kind kind : {Kind::normal, Kind::minus_inf, Kind::ties16}) {
      for (int i = 0; i < sets; ++i) fill<<<1024, 256, 0, stream>>>(inputs[size_t(i)], rows, kCols, int(kind), 1000 + i);
      for (const int32_t k : {512, 2048}) {
        auto run = [&]<int kT>(std::vector<int32_t>& got) {
          auto launch = [&](int i) { sk::launch_row<DenseRows, kT>(DenseRows{inputs[size_t(i)], kCols, span}, k, out, stream); };
          const float us = time_us(launch, sets, reps, stream);
          launch(0);
          CHECK(cudaStreamSynchronize(stream));
          got = download(out, size_t(rows) * size_t(k));
          return us;
        };
        std::vector<int32_t> a, b;
        const float t512 = run.template operator()<512>(a), t1024 = run.template operator()<1024>(b);
        all_same = all_same && a == b;
        std::printf("%15s %-10s %5d %-10s %9.1f %9.1f %7.2f  %s\n", "", (std::to_string(rows) + "x128k").c_str(), k,
                    name_of(kind), t512, t1024, t512 / t1024, a == b ? "yes" : "NO");
        std::fflush(stdout);
      }
    }
    for (auto p : inputs) CHECK(cudaFree(p));
    CHECK(cudaFree(d_lens));
    CHECK(cudaFree(out));
  }
  return all_same;
}

// A few plain launches of the decode top-k's dispatch (k 512, normal rows), for a profiler.
void profile_dense(int64_t rows, int64_t cols, cudaStream_t stream) {
  float* dense = nullptr;
  int32_t *out = nullptr, *d_lens = nullptr;
  constexpr int32_t kTopk = 512;
  CHECK(cudaMalloc(&dense, size_t(rows * cols) * 4));
  CHECK(cudaMalloc(&out, size_t(rows) * kTopk * 4));
  const RowSpan span = full_rows(rows, cols, d_lens);
  fill<<<1024, 256, 0, stream>>>(dense, rows, cols, int(Kind::normal), 77);
  const GroupPlan plan = dsa::cuda::select_group_plan(rows, cols, kTopk, "topk", SelectSource::values);
  std::printf("profile: %lld x %lld, k %d, group %d, row kernel %d, short-row kernel %d\n", (long long)rows,
              (long long)cols, kTopk, plan.group, int(plan.row_kernel), int(plan.short_row));
  for (int i = 0; i < 3; ++i) dsa::cuda::launch_select(DenseRows{dense, cols, span}, plan, out, stream);
  CHECK(cudaStreamSynchronize(stream));
  for (void* p : {(void*)dense, (void*)out, (void*)d_lens}) CHECK(cudaFree(p));
}

}  // namespace

int main(int argc, char** argv) {
  std::string json;
  int reps = 30;
  bool quick = false, sweep = false, candidates_only = false, threads_sweep = false;
  int profile_group = 0;
  long long profile_rows = 0, profile_cols = 0;
  std::vector<int64_t> candidate_rows = {8, 64};
  std::vector<Shape> decode_shapes = {{8, 131072}, {64, 131072}, {256, 131072}, {64, 32768}};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!std::strcmp(argv[i], "--candidate-rows") && i + 1 < argc) {
      const char* list = argv[++i];
      candidate_rows.clear();
      for (const char* c = list;; ++c) {
        char* end = nullptr;
        const long long n = std::strtoll(c, &end, 10);
        if (end == c || n < 1 || n > 4096 || (*end && *end != ',')) {
          std::fprintf(stderr, "select_speed: --candidate-rows takes row counts 1..4096 separated by commas, got '%s'\n",
                       list);
          return 2;
        }
        candidate_rows.push_back(n);
        if (!*end) break;
        c = end;
      }
    } else if (!std::strcmp(argv[i], "--decode-shapes") && i + 1 < argc) {
      const char* list = argv[++i];
      decode_shapes.clear();
      for (const char* c = list;;) {
        long long rows = 0, cols = 0;
        int used = 0;
        if (std::sscanf(c, "%lldx%lld%n", &rows, &cols, &used) != 2 || rows < 1 || rows > 4096 || cols < 1 ||
            cols > (1 << 20) || (c[used] && c[used] != ',')) {
          std::fprintf(stderr, "select_speed: --decode-shapes takes ROWSxCOLUMNS (rows 1..4096, columns 1..2^20) "
                               "separated by commas, got '%s'\n", list);
          return 2;
        }
        decode_shapes.push_back({rows, cols});
        if (!c[used]) break;
        c += used + 1;
      }
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--compact-sweep")) sweep = true;
    else if (!std::strcmp(argv[i], "--candidates-only")) candidates_only = true;
    else if (!std::strcmp(argv[i], "--row-threads-sweep")) threads_sweep = true;
    else if (!std::strcmp(argv[i], "--profile-compact") && i + 1 < argc) profile_group = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--profile-dense") && i + 1 < argc &&
             std::sscanf(argv[++i], "%lld:%lld", &profile_rows, &profile_cols) == 2 && profile_rows > 0 &&
             profile_cols > 0) {
    } else {
      std::fprintf(stderr,
                   "usage: select_speed [--json FILE] [--reps N] [--quick] [--compact-sweep] [--profile-compact G]"
                   " [--profile-dense ROWS:COLS] [--candidates-only] [--candidate-rows R1,R2,...]"
                   " [--decode-shapes RxC,...] [--row-threads-sweep]\n");
      return 2;
    }
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  if (profile_group > 0) {  // a few plain launches of the compact top-k, for a profiler
    profile_compact(profile_group, stream);
    return 0;
  }
  if (profile_rows > 0) {
    profile_dense(profile_rows, profile_cols, stream);
    return 0;
  }
  if (threads_sweep) return row_threads_sweep(reps, prop, stream) ? 0 : 1;
  const double bw = dsa::bench_gpu::read_bandwidth_gbs(132 * 8, stream);
  std::printf("device %s, %d SMs, L2 %d MB, read bandwidth %.0f GB/s\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20, bw);
  // The SM clock over the whole table (gpu_clock.hpp): the latency-bound kernels' times follow it.
  dsa::bench_gpu::Nvml nvml;
  nvml.open(dsa::bench_gpu::current_pci_bus_id());
  dsa::bench_gpu::ClockSampler sampler(nvml);
  sampler.start();

  std::vector<Shape> shapes = decode_shapes;
  std::vector<int> ks = {512, 2048};
  std::vector<Kind> kinds = {Kind::normal, Kind::minus_inf, Kind::ties16};
  if (quick) shapes = {{64, 131072}}, ks = {2048}, kinds = {Kind::normal};
  if (candidates_only) shapes.clear();

#if DSA_BENCH_VLLM_PERSISTENT
  // What `pers` times: the whole op as vLLM dispatches it, so its kernel depends on the rows.
  std::printf("pers: vLLM persistent_topk op at k 512/1024/2048 (topk.cu's dispatch: persistent_topk_kernel for <= 32 rows, "
              "FilteredTopK for more)\n");
#endif
  std::string records;
  std::printf("%-11s %5s %-10s %9s %3s %4s %9s %9s %9s %9s %9s %9s %8s %8s %6s %6s %6s %6s %9s %8s %6s %6s\n", "shape", "k",
              "data", "floor us", "G", "row", "ours us", "row us", "group us", "1024t us", "tree us", "vllm us", "ours/fl",
              "vllm/our", "det", "tree!=", "vdet", "vdiff", "pers us", "pers/our", "pdet", "pdiff");
#if DSA_BENCH_VLLM_PERSISTENT
  void* persistent_ws = nullptr;
  CHECK(cudaMalloc(&persistent_ws, size_t(dsa::cuda::vllm_persistent_topk_workspace_bytes())));
#endif
  for (const Shape s : shapes) {
    const size_t elems = size_t(s.rows * s.cols), bytes = elems * 4;
    const int sets = input_sets(bytes, prop);
    std::vector<float*> inputs(static_cast<size_t>(sets));
    for (auto& p : inputs) CHECK(cudaMalloc(&p, bytes));
    std::vector<int32_t> lens(size_t(s.rows), int32_t(s.cols));
    int32_t* d_lens = nullptr;
    CHECK(cudaMalloc(&d_lens, lens.size() * 4));
    CHECK(cudaMemcpy(d_lens, lens.data(), lens.size() * 4, cudaMemcpyHostToDevice));
    RowSpan span;
    span.kind = RowSpan::Kind::visible_1d;
    span.rows = s.rows;
    span.width = s.cols;
    span.seq_lens = d_lens;
    span.next_n = 1;
    for (const int k : ks) {
      const TreePlan plan = dsa::cuda::select_plan(s.cols, k, "decode_top_k");
      const GroupPlan group_plan =
          dsa::cuda::select_group_plan(s.rows, s.cols, k, "decode_top_k", SelectSource::values);
      const GroupPlan group_plan2{
          k, dsa::cuda::select_kernels::group_size<DenseRows, 4, 1, 1024, 8>(s.rows, s.cols)};
      GroupPlan row_plan = group_plan, cluster_plan = group_plan;
      row_plan.row_kernel = true;
      cluster_plan.row_kernel = false;
      uint64_t* slots = nullptr;
      uint32_t* counters = nullptr;
      int32_t* out = nullptr;
      int32_t* out_vllm = nullptr;
      int32_t* out_tree = nullptr;
      CHECK(cudaMalloc(&slots, size_t(plan.slot_pairs(s.rows)) * 8));
      CHECK(cudaMalloc(&counters, size_t(plan.counters(s.rows)) * 4));
      CHECK(cudaMemset(counters, 0, size_t(plan.counters(s.rows)) * 4));
      CHECK(cudaMalloc(&out, size_t(s.rows) * k * 4));
      CHECK(cudaMalloc(&out_vllm, size_t(s.rows) * k * 4));
      CHECK(cudaMalloc(&out_tree, size_t(s.rows) * k * 4));
      const TreeOutput o{out_tree, slots, counters, nullptr};
      for (const Kind kind : kinds) {
        for (int i = 0; i < sets; ++i) fill<<<1024, 256, 0, stream>>>(inputs[size_t(i)], s.rows, s.cols, int(kind), 1000 + i);
        CHECK(cudaStreamSynchronize(stream));
        auto ours = [&](int i) {
          dsa::cuda::launch_select(DenseRows{inputs[size_t(i % sets)], s.cols, span}, group_plan, out, stream);
        };
        auto row = [&](int i) {
          dsa::cuda::launch_select(DenseRows{inputs[size_t(i % sets)], s.cols, span}, row_plan, out, stream);
        };
        auto cluster = [&](int i) {
          dsa::cuda::launch_select(DenseRows{inputs[size_t(i % sets)], s.cols, span}, cluster_plan, out, stream);
        };
        auto ours2 = [&](int i) {
          dsa::cuda::select_kernels::launch_group<DenseRows, 4, 1, 1024, 8>(
              DenseRows{inputs[size_t(i % sets)], s.cols, span}, group_plan2, out, stream);
        };
        auto tree = [&](int i) {
          dsa::cuda::launch_select(DenseRows{inputs[size_t(i % sets)], s.cols, span}, plan, o, stream);
        };
        const float t_ours = time_us(ours, sets, reps, stream);
        const float t_row = time_us(row, sets, reps, stream);
        const float t_cluster = time_us(cluster, sets, reps, stream);
        const float t_two = time_us(ours2, sets, reps, stream);
        const float t_tree = time_us(tree, sets, reps, stream);
        // A kernel's output array on input set 0.
        const auto output_of = [&](auto& launch, const int32_t* buffer) {
          launch(0);
          CHECK(cudaStreamSynchronize(stream));
          return download(buffer, size_t(s.rows) * k);
        };
        // The kernels' outputs on one input: the same array.
        const auto from_tree = output_of(tree, out_tree);
        const auto from_two = output_of(ours2, out);
        const auto from_row = output_of(row, out);
        const auto from_cluster = output_of(cluster, out);
        // Determinism: the same input twice (another between them), bit for bit.
        const auto first = output_of(ours, out);
        ours(1);
        const bool det = first == output_of(ours, out);
        int64_t tree_differs = 0;
        for (int64_t r = 0; r < s.rows; ++r) {
          auto same = [&](const std::vector<int32_t>& other) {
            return std::equal(first.begin() + r * k, first.begin() + (r + 1) * k, other.begin() + r * k);
          };
          tree_differs += !same(from_tree) || !same(from_two) || !same(from_row) || !same(from_cluster);
        }
        float t_vllm = -1;
        int64_t vllm_runs_differ = -1, vs_vllm = -1;
#if DSA_BENCH_VLLM
        auto vllm = [&](int i) {
          dsa::cuda::vllm_top_k_per_row_decode(inputs[size_t(i % sets)], s.rows, s.cols, 1, d_lens, false, out_vllm, k,
                                               stream);
        };
        t_vllm = time_us(vllm, sets, reps, stream);
        const auto v1 = output_of(vllm, out_vllm);
        vllm(1);
        vllm_runs_differ = rows_differing(v1, output_of(vllm, out_vllm), s.rows, k);
        vs_vllm = rows_differing(first, v1, s.rows, k);
#endif
        // vLLM's persistent_topk op (the k it takes): time, run-to-run sets, sets against ours.
        float t_pers = -1;
        int64_t pers_runs_differ = -1, vs_pers = -1;
#if DSA_BENCH_VLLM_PERSISTENT
        if (dsa::cuda::vllm_persistent_topk_takes(k)) {
          auto pers = [&](int i) {
            dsa::cuda::vllm_persistent_topk(inputs[size_t(i % sets)], s.rows, s.cols, d_lens, s.cols, out_vllm, k,
                                            persistent_ws, stream);
          };
          t_pers = time_us(pers, sets, reps, stream);
          const auto p1 = output_of(pers, out_vllm);
          pers(1);
          pers_runs_differ = rows_differing(p1, output_of(pers, out_vllm), s.rows, k);
          vs_pers = rows_differing(first, p1, s.rows, k);
        }
#endif
        const double floor_us = double(bytes) / (bw * 1e3);
        char shape[32];
        std::snprintf(shape, sizeof shape, "%lldx%lldk", (long long)s.rows, (long long)(s.cols / 1024));
        std::printf("%-11s %5d %-10s %9.1f %3d %4s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %8.2f %8.2f %6s %6lld %6lld %6lld %9.1f %8.2f %6lld %6lld\n",
                    shape, k, name_of(kind), floor_us, group_plan.group, group_plan.row_kernel ? "yes" : "no", t_ours, t_row,
                    t_cluster, t_two, t_tree, t_vllm, t_ours / floor_us,
                    t_vllm / t_ours, det ? "yes" : "NO", (long long)tree_differs, (long long)vllm_runs_differ,
                    (long long)vs_vllm, t_pers, t_pers / t_ours, (long long)pers_runs_differ, (long long)vs_pers);
        std::fflush(stdout);
        char rec[1024];
        std::snprintf(rec, sizeof rec,
                      "%s{\"rows\": %lld, \"columns\": %lld, \"k\": %d, \"data\": \"%s\", \"floor_us\": %.2f, "
                      "\"group\": %d, \"row_kernel\": %s, \"ours_us\": %.2f, \"row_kernel_us\": %.2f, "
                      "\"group_kernel_us\": %.2f, \"ours_1024_threads_us\": %.2f, \"tree_us\": %.2f, "
                      "\"vllm_top_k_per_row_decode_us\": %.2f, \"ours_deterministic\": %s, "
                      "\"rows_differing_ours_vs_tree\": %lld, \"vllm_rows_differing_between_runs\": %lld, "
                      "\"rows_differing_ours_vs_vllm\": %lld, \"vllm_persistent_topk_us\": %.2f, "
                      "\"vllm_persistent_rows_differing_between_runs\": %lld, \"rows_differing_ours_vs_vllm_persistent\": %lld}",
                      records.empty() ? "" : ",\n    ", (long long)s.rows, (long long)s.cols, k, name_of(kind), floor_us,
                      group_plan.group, group_plan.row_kernel ? "true" : "false", t_ours, t_row, t_cluster, t_two, t_tree,
                      t_vllm, det ? "true" : "false", (long long)tree_differs,
                      (long long)vllm_runs_differ, (long long)vs_vllm, t_pers, (long long)pers_runs_differ,
                      (long long)vs_pers);
        records += rec;
      }
      CHECK(cudaFree(slots));
      CHECK(cudaFree(counters));
      CHECK(cudaFree(out));
      CHECK(cudaFree(out_vllm));
      CHECK(cudaFree(out_tree));
    }
    for (auto p : inputs) CHECK(cudaFree(p));
    CHECK(cudaFree(d_lens));
  }
#if DSA_BENCH_VLLM_PERSISTENT
  CHECK(cudaFree(persistent_ws));
#endif
  const std::string candidates = candidate_part(bw, reps, prop, stream, sweep, candidate_rows);
  const dsa::bench_gpu::ClockStats clock = sampler.stop();
  if (clock.samples > 0)
    std::printf("SM clock while timed: median %u MHz (%u-%u), %.0f W, power-capped in %.0f%% of %d samples\n",
                clock.median_mhz, clock.min_mhz, clock.max_mhz, clock.median_watts, 100 * clock.power_capped,
                clock.samples);
  else
    std::printf("SM clock: not sampled (%s)\n", nvml.why_absent().c_str());
  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (!f) return 1;
    std::fprintf(f,
                 "{\"device\": \"%s\", \"sms\": %d, \"read_bandwidth_gbs\": %.1f,\n"
                 "  \"clock\": {\"samples\": %d, \"median_mhz\": %u, \"min_mhz\": %u, \"max_mhz\": %u, "
                 "\"median_watts\": %.1f, \"power_capped\": %.3f},\n  \"decode_top_k\": [\n    %s\n  ],\n"
                 "  \"candidates\": [\n    %s\n  ]}\n",
                 prop.name, prop.multiProcessorCount, bw, clock.samples, clock.median_mhz, clock.min_mhz,
                 clock.max_mhz, clock.median_watts, clock.power_capped, records.c_str(), candidates.c_str());
    std::fclose(f);
  }
  return 0;
}
