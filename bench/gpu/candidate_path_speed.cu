// Speed of the consumer layer's step on the GPU (CUDA events; not a test), at 128k context with
// 2048 candidate blocks of 8 and top 512, one query row per request (H 64, D 128): the dense path
// that the candidate launches replace (dense paged logits, the candidate mask over the row, the
// top-k of the whole row) against the fused launch (compact candidate logits and their top-k:
// sm90_candidate_logits_top_k, one launch at these shapes), the same work as two kernels (the compact
// logits kernel, then the selection's), and each part on its own. Each time is the median of
// CUDA-graph replays, the K cache rotated over page sets several times the L2, so every launch reads
// HBM. Issue 13 asks the fused launch to beat the dense path by at least the ratio of the K cache
// bytes it avoids reading (dense / compact = 8 at full candidate blocks). Both paths must choose
// the same values in every row (the compact logits are the dense ones, bit for bit; a tie at the
// cut may go to other positions), and the fused launch must write exactly the two kernels' array:
// checked here, exit 3 otherwise. --block-sizes times the same
// 16384 candidate entries in blocks of 16, 32 or 64 as well (2048 / B * 8 slots), so that the
// compact launch's bandwidth can be read against the size of its copies (1 KB a block of 8).
// --batches times other request counts than the default 8 and 64 (the launches' fixed costs weigh
// less on the ratio as the batch grows). Each batch also times the step's own gather (the candidate
// blocks' values and scales at the pages the compact launch reads, plain loads, nothing computed):
// dense path / gather is the best ratio any launch that reads those bytes could reach on this card.
//   candidate_path_speed [--json FILE] [--reps N] [--block-sizes 8,16,32,64] [--batches 8,64,...]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/select.hpp"
#include "dsa/optimized/cuda/sm90_logits.hpp"
#include "gpu_timing.cuh"
#include "paged_step.cuh"

namespace {

using dsa::bench_gpu::download;
using dsa::common::CandidateMaskRows;
using dsa::common::RowSpan;
using dsa::common::select::BlockScores;
using dsa::cuda::SelectSource;
using dsa::common::select::DenseRows;
using dsa::common::select::GroupPlan;
using dsa::cuda::Sm90Variant;

constexpr int kHeads = 64, kHeadDim = 128, kContext = 131072;
constexpr int32_t kCandidateEntries = 16384, kTopk = 512;  // 2048 blocks of 8 by default

// The compact launch's reads without its work, at gather_floor's method: the byte offsets of the step's
// candidate blocks resolved on the host (so that no lookup's latency is in the way), then a warp a block
// loads its values (`value_bytes` at the offset) and its scales (`scale_bytes` at `scale_from` bytes
// further: the page's scale area) with 16-byte streaming loads, every load issued before any is used.
// kWords 16-byte words a lane: a block of kWords * 512 bytes (2 for blocks of 8 at D 128), so that the
// kernel keeps gather_floor's registers and occupancy (a version sized for any block, 16 words a lane,
// held too few warps a SM to be a floor).
template <int kWords>
__global__ void gather_candidate_blocks(const uint8_t* cache, const int64_t* value_at, const int64_t* scale_at,
                                        int64_t count, int scale_bytes, uint4* sink) {
  const int lane = int(threadIdx.x % 32);
  const int scale_words = scale_bytes / 16;
  uint4 acc = make_uint4(0, 0, 0, 0);
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t w = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32; w < count; w += warps) {
    const uint4* values = reinterpret_cast<const uint4*>(cache + value_at[w]);
    const uint4* scales = reinterpret_cast<const uint4*>(cache + scale_at[w]);
    uint4 v[kWords];
#pragma unroll
    for (int j = 0; j < kWords; ++j) v[j] = __ldcs(values + lane + 32 * j);
    const uint4 scale = lane < scale_words ? __ldcs(scales + lane) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int j = 0; j < kWords; ++j) acc.x ^= v[j].x, acc.y ^= v[j].y, acc.z ^= v[j].z, acc.w ^= v[j].w;
    acc.x ^= scale.x;
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9e3779b9u) sink[blockIdx.x] = acc;
}

// The byte offsets (values, scales) of every live candidate block below its row's length in `step`'s
// cache (one query row per request, 1-D lengths of `context`), in row and slot order.
void candidate_offsets(const dsa::cuda::DeviceDecodeStep& step, const std::vector<int32_t>& blocks, int64_t rows,
                       int32_t slots, int32_t block_size, int64_t context, std::vector<int64_t>& value_at,
                       std::vector<int64_t>& scale_at) {
  std::vector<int32_t> table(size_t(rows) * step.max_pages);
  CHECK(cudaMemcpy(table.data(), step.block_table, table.size() * 4, cudaMemcpyDeviceToHost));
  const int64_t page_bytes = int64_t(step.block_size) * (step.head_dim + 4);
  value_at.clear(), scale_at.clear();
  for (int64_t r = 0; r < rows; ++r)
    for (int32_t slot = 0; slot < slots; ++slot) {
      const int32_t b = blocks[size_t(r * slots + slot)];
      const int64_t first = int64_t(b) * block_size;
      if (b < 0 || first >= context) continue;
      const int64_t page = table[size_t(r * step.max_pages + first / step.block_size)], in_page = first % step.block_size;
      value_at.push_back(page * page_bytes + in_page * step.head_dim);
      scale_at.push_back(page * page_bytes + int64_t(step.block_size) * step.head_dim + in_page * 4);
    }
}

// Rows whose sets differ, and of those the rows whose chosen values differ too (a tie at the cut
// may be broken differently: the dense top-k takes the lowest positions, the compact one the lowest
// compact columns). `values` is the dense row the positions index.
struct SetDiff {
  int64_t rows = 0, beyond_ties = 0;
};
SetDiff rows_differing(std::vector<int32_t> a, std::vector<int32_t> b, const std::vector<float>& values, int64_t rows,
                       int64_t k, int64_t width) {
  SetDiff d;
  for (int64_t r = 0; r < rows; ++r) {
    std::sort(a.begin() + r * k, a.begin() + (r + 1) * k);
    std::sort(b.begin() + r * k, b.begin() + (r + 1) * k);
    if (std::equal(a.begin() + r * k, a.begin() + (r + 1) * k, b.begin() + r * k)) continue;
    ++d.rows;
    std::vector<float> va, vb;
    for (int64_t i = r * k; i < (r + 1) * k; ++i) {
      va.push_back(a[size_t(i)] < 0 ? -INFINITY : values[size_t(r * width + a[size_t(i)])]);
      vb.push_back(b[size_t(i)] < 0 ? -INFINITY : values[size_t(r * width + b[size_t(i)])]);
    }
    std::sort(va.begin(), va.end());
    std::sort(vb.begin(), vb.end());
    d.beyond_ties += va != vb;
  }
  return d;
}

struct PathResult {
  int batch = 0;
  float dense_logits = 0, mask = 0, dense_topk = 0, dense_path = 0;
  float compact_logits = 0, compact_topk = 0, two_kernels = 0, fused = 0, gather = 0;
  bool one_launch = false, fused_is_two_kernels = false;
  double dense_k_bytes = 0, compact_k_bytes = 0;
  SetDiff differing;
};

PathResult time_batch(int batch, int32_t block_size, int reps, const dsa::cuda::DeviceInfo& dev) {
  const int32_t slots = kCandidateEntries / block_size;
  const dsa::bench_gpu::PagedStep paged(batch, kContext, 1, kHeads, kHeadDim, dev.l2_bytes);
  const int sets = paged.sets();
  const int64_t rows = batch, width = kContext, compact_width = int64_t(slots) * block_size;
  float *logits = nullptr, *compact = nullptr;
  int32_t *blocks = nullptr, *dense_out = nullptr, *fused_out = nullptr, *dense_schedule = nullptr,
          *compact_schedule = nullptr;
  CHECK(cudaMalloc(&logits, size_t(rows * width) * 4));
  CHECK(cudaMalloc(&compact, size_t(rows * compact_width) * 4));
  CHECK(cudaMalloc(&blocks, size_t(rows) * slots * 4));
  CHECK(cudaMalloc(&dense_out, size_t(rows) * kTopk * 4));
  CHECK(cudaMalloc(&fused_out, size_t(rows) * kTopk * 4));
  CHECK(cudaMalloc(&dense_schedule, dsa::cuda::paged_schedule_ints(paged.at_set(0)) * 4));
  CHECK(cudaMalloc(&compact_schedule, dsa::cuda::compact_schedule_ints(paged.at_set(0)) * 4));
  RowSpan span;  // one query row per request: L_r = E_r = seq_lens[r]
  span.kind = RowSpan::Kind::visible_1d;
  span.rows = rows;
  span.width = width;
  span.seq_lens = paged.seq_lens();
  span.next_n = 1;
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  dsa::cuda::sm90_paged_schedule(paged.at_set(0), dense_schedule, stream);
  dsa::cuda::sm90_compact_schedule(paged.at_set(0), slots, block_size, compact_schedule, stream);
  // The candidate blocks: the source layer's selection over set 0's dense logits.
  dsa::cuda::sm90_paged_logits(paged.at_set(0), Sm90Variant::standard, dense_schedule, logits, false, stream);
  const GroupPlan select_plan =
      dsa::cuda::select_group_plan(rows, width / block_size, slots, "candidate_select", SelectSource::blocks);
  dsa::cuda::launch_select(BlockScores{logits, width, span, block_size}, select_plan, blocks, stream);
  CHECK(cudaStreamSynchronize(stream));

  const GroupPlan dense_plan = dsa::cuda::select_group_plan(rows, width, kTopk, "topk", SelectSource::values);
  const GroupPlan compact_plan =
      dsa::cuda::select_group_plan(rows, compact_width, kTopk, "candidate_logits_top_k", SelectSource::columns);
  auto dense_logits = [&](int i) {
    dsa::cuda::sm90_paged_logits(paged.at_set(i), Sm90Variant::standard, dense_schedule, logits, false, stream);
  };
  auto mask = [&](int) {
    dsa::cuda::launch_candidate_mask(CandidateMaskRows{logits, width, span, blocks, slots, block_size, true}, stream);
  };
  auto dense_topk = [&](int) { dsa::cuda::launch_select(DenseRows{logits, width, span}, dense_plan, dense_out, stream); };
  auto compact_logits = [&](int i) {
    dsa::cuda::sm90_compact_logits(paged.at_set(i), Sm90Variant::standard, blocks, slots, block_size, compact_schedule,
                                   compact, stream);
  };
  auto compact_topk = [&](int) {
    const dsa::common::select::CandidateColumns src{compact, compact_width, span, blocks, slots, block_size, true};
    dsa::cuda::launch_select(src, compact_plan, fused_out, stream);
  };
  auto fused = [&](int i) {
    dsa::cuda::sm90_candidate_logits_top_k(paged.at_set(i), Sm90Variant::standard, blocks, slots, block_size,
                                           compact_schedule, compact, span, kTopk, fused_out, stream);
  };
  auto time = [&](auto&& launch) {
    return dsa::bench_gpu::graph_median_us([&](int i, cudaStream_t) { launch(i); }, sets, reps, 1, stream);
  };
  PathResult r;
  r.batch = batch;
  r.dense_logits = time(dense_logits);
  r.mask = time(mask);  // idempotent: replays on the same rows time the same work
  r.dense_topk = time(dense_topk);
  r.dense_path = time([&](int i) {
    dense_logits(i);
    mask(i);
    dense_topk(i);
  });
  r.compact_logits = time(compact_logits);
  r.compact_topk = time(compact_topk);
  r.two_kernels = time([&](int i) {
    compact_logits(i);
    compact_topk(i);
  });
  r.fused = time(fused);
  {
    // The same blocks in each page set, at that set's pages.
    const std::vector<int32_t> host_blocks = download(blocks, size_t(rows) * slots);
    std::vector<int64_t*> value_at(static_cast<size_t>(sets)), scale_at(static_cast<size_t>(sets));
    int64_t count = 0;
    for (int i = 0; i < sets; ++i) {
      std::vector<int64_t> v, sc;
      candidate_offsets(paged.at_set(i), host_blocks, rows, slots, block_size, kContext, v, sc);
      count = int64_t(v.size());
      CHECK(cudaMalloc(&value_at[size_t(i)], v.size() * 8));
      CHECK(cudaMalloc(&scale_at[size_t(i)], sc.size() * 8));
      CHECK(cudaMemcpy(value_at[size_t(i)], v.data(), v.size() * 8, cudaMemcpyHostToDevice));
      CHECK(cudaMemcpy(scale_at[size_t(i)], sc.data(), sc.size() * 8, cudaMemcpyHostToDevice));
    }
    uint4* sink = nullptr;
    CHECK(cudaMalloc(&sink, size_t(dev.sm_count) * 4 * sizeof(uint4)));
    const uint8_t* cache = paged.at_set(0).cache;
    r.gather = time([&](int i) {
      const auto run = [&](auto kernel) {
        kernel<<<dev.sm_count * 4, 512, 0, stream>>>(cache, value_at[size_t(i % sets)], scale_at[size_t(i % sets)],
                                                     count, block_size * 4, sink);
      };
      switch (block_size * kHeadDim / 512) {
        case 2: run(gather_candidate_blocks<2>); break;
        case 4: run(gather_candidate_blocks<4>); break;
        case 8: run(gather_candidate_blocks<8>); break;
        default: run(gather_candidate_blocks<16>); break;
      }
      CHECK(cudaGetLastError());
    });
    CHECK(cudaFree(sink));
    for (int i = 0; i < sets; ++i) {
      CHECK(cudaFree(value_at[size_t(i)]));
      CHECK(cudaFree(scale_at[size_t(i)]));
    }
  }
  r.one_launch = dsa::cuda::sm90_candidate_logits_top_k_is_one_launch(paged.at_set(0), slots, block_size);
  r.dense_k_bytes = paged.k_bytes();
  r.compact_k_bytes = double(rows) * compact_width * (kHeadDim + 4);
  // The same set by both paths, on set 0.
  dense_logits(0);
  mask(0);
  dense_topk(0);
  fused(0);
  CHECK(cudaStreamSynchronize(stream));
  std::vector<float> masked(size_t(rows * width));
  CHECK(cudaMemcpy(masked.data(), logits, masked.size() * 4, cudaMemcpyDeviceToHost));
  const std::vector<int32_t> fused_chosen = download(fused_out, size_t(rows) * kTopk);
  r.differing = rows_differing(download(dense_out, size_t(rows) * kTopk), fused_chosen, masked, rows, kTopk, width);
  compact_logits(0);
  compact_topk(0);
  CHECK(cudaStreamSynchronize(stream));
  r.fused_is_two_kernels = download(fused_out, size_t(rows) * kTopk) == fused_chosen;
  CHECK(cudaStreamDestroy(stream));
  for (void* p : {(void*)logits, (void*)compact, (void*)blocks, (void*)dense_out, (void*)fused_out,
                  (void*)dense_schedule, (void*)compact_schedule})
    CHECK(cudaFree(p));
  return r;
}

// A comma-separated list of whole numbers, each accepted by `valid`, into `out` (replacing it).
template <class Valid>
bool parse_list(const char* text, std::vector<int>& out, Valid&& valid) {
  out.clear();
  for (const char* c = text; *c;) {
    char* end = nullptr;
    const long v = std::strtol(c, &end, 10);
    if (end == c || (*end != ',' && *end != '\0') || !valid(v)) return false;
    out.push_back(int(v));
    c = *end == ',' ? end + 1 : end;
  }
  return !out.empty();
}

}  // namespace

int main(int argc, char** argv) {
  std::string json;
  int reps = 30;
  std::vector<int> block_sizes = {8}, batches = {8, 64};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--block-sizes") && i + 1 < argc) {
      if (!parse_list(argv[++i], block_sizes, [](long b) { return b == 8 || b == 16 || b == 32 || b == 64; })) {
        std::fprintf(stderr, "candidate_path_speed: --block-sizes takes 8, 16, 32 or 64, comma-separated\n");
        return 2;
      }
    } else if (!std::strcmp(argv[i], "--batches") && i + 1 < argc) {
      if (!parse_list(argv[++i], batches, [](long b) { return b >= 1 && b <= 1024; })) {
        std::fprintf(stderr, "candidate_path_speed: --batches takes request counts from 1 to 1024, comma-separated\n");
        return 2;
      }
    } else {
      std::fprintf(stderr, "usage: candidate_path_speed [--json FILE] [--reps N] [--block-sizes 8,16,32,64] "
                           "[--batches 8,64,...]\n");
      return 2;
    }
  }
  const dsa::cuda::DeviceInfo& dev = dsa::cuda::device_info();
  if (!dsa::cuda::sm90_available()) {
    std::fprintf(stderr, "candidate_path_speed: no sm_90 GPU (%s)\n",
                 dev.present ? dev.name.c_str() : dev.why_absent.c_str());
    return 1;
  }
  std::string records;
  bool same = true;
  for (const int block_size : block_sizes) {
    const int32_t slots = kCandidateEntries / block_size;
    std::printf("consumer step, 128k context, %d blocks of %d, top %d, H %d D %d, us:\n", slots, block_size, kTopk,
                kHeads, kHeadDim);
    std::printf("%6s %9s %7s %9s %10s | %9s %9s %9s %9s %7s | %8s %7s %8s %7s %8s %8s\n", "batch", "dense lg",
                "mask", "dense tk", "dense path", "cmp lg", "cmp tk", "2 kernels", "fused", "=2 krn", "gather",
                "ratio", "best", "bytes", "rows !=", "!= vals");
    for (const int batch : batches) {
      const PathResult r = time_batch(batch, block_size, reps, dev);
      const double bytes_ratio = r.dense_k_bytes / r.compact_k_bytes;
      std::printf("%6d %9.1f %7.1f %9.1f %10.1f | %9.1f %9.1f %9.1f %9.1f %7s | %8.1f %7.2f %8.2f %7.2f %8lld %8lld\n",
                  r.batch, r.dense_logits, r.mask, r.dense_topk, r.dense_path, r.compact_logits, r.compact_topk,
                  r.two_kernels, r.fused, r.fused_is_two_kernels ? "yes" : "NO", r.gather, r.dense_path / r.fused,
                  r.dense_path / r.gather, bytes_ratio, (long long)r.differing.rows, (long long)r.differing.beyond_ties);
      std::fflush(stdout);
      same = same && r.differing.beyond_ties == 0 && r.fused_is_two_kernels;
      char rec[1024];
      std::snprintf(rec, sizeof rec,
                    "%s{\"batch\": %d, \"context\": %d, \"slots\": %d, \"block_size\": %d, \"k\": %d, "
                    "\"dense_logits_us\": %.2f, \"mask_us\": %.2f, \"dense_topk_us\": %.2f, \"dense_path_us\": %.2f, "
                    "\"compact_logits_us\": %.2f, \"compact_topk_us\": %.2f, \"two_kernels_us\": %.2f, "
                    "\"fused_us\": %.2f, \"gather_us\": %.2f, \"fused_one_launch\": %s, \"fused_is_two_kernels_array\": %s, "
                    "\"dense_k_bytes\": %.0f, \"compact_k_bytes\": %.0f, \"rows_differing\": %lld, "
                    "\"rows_differing_beyond_ties\": %lld}",
                    records.empty() ? "" : ",\n    ", r.batch, kContext, slots, block_size, kTopk, r.dense_logits,
                    r.mask, r.dense_topk, r.dense_path, r.compact_logits, r.compact_topk, r.two_kernels, r.fused,
                    r.gather, r.one_launch ? "true" : "false", r.fused_is_two_kernels ? "true" : "false", r.dense_k_bytes,
                    r.compact_k_bytes, (long long)r.differing.rows, (long long)r.differing.beyond_ties);
      records += rec;
    }
  }
  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", json.c_str());
      return 1;
    }
    std::fprintf(f, "{\"device\": \"%s\", \"heads\": %d, \"head_dim\": %d,\n  \"candidate_path\": [\n    %s\n  ]}\n",
                 dev.name.c_str(), kHeads, kHeadDim, records.c_str());
    std::fclose(f);
  }
  if (!same)
    std::fprintf(stderr, "candidate_path_speed: the two paths chose different values in some row, or the fused "
                         "launch's array is not the two kernels'\n");
  return same ? 0 : 3;
}
