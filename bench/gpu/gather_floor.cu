// The physical floor of the compact candidate logits' gather (CUDA events; not a test): how fast
// this GPU reads a K cache's candidate blocks, chunks of `chunk` contiguous bytes at random places,
// when nothing else is done with them. A chunk is a candidate block's K values (block size x 128
// bytes at D 128: 1 KB for blocks of 8, 8 KB for a whole page of 64), at a block-aligned place in
// a page of the block-flat cache (64 entries of 132 bytes). The same 128 MiB is read at every chunk
// size (64 rows x 16384 candidate entries of 128 bytes), from a cache of 2 GiB, over eight chunk
// lists so that one replay's chunks are not in L2 for the next. Each warp reads whole chunks with
// 16-byte streaming loads, every chunk's loads issued before any is used. Each chunk size is read
// twice: its values alone, then with its entries' fp32 scales as well (chunk / 32 bytes at the
// page's scale area, 8 KB past its start: a second, small read at another place of the page, as
// the compact logits kernel makes for every candidate block). Then the 1 KB gather with scales again,
// each chunk's warp writing one fp32 result an entry (4 bytes a 132, as the logits kernels write
// their logits), with plain stores, streaming ones (st.global.cs) or an L2 evict_last policy, into
// one output every replay rewrites (it can stay in L2) or into 32 outputs, one a launch (128 MiB
// of them, more than the L2 holds): what the writes cost beside the reads.
//   gather_floor [--json FILE]
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dsa/optimized/cuda/runtime.hpp"
#include "gpu_timing.cuh"

namespace {

constexpr int64_t kEntryBytes = 128, kPageEntries = 64, kPageBytes = kPageEntries * (kEntryBytes + 4);
constexpr int64_t kCacheBytes = int64_t(2) << 30, kPages = kCacheBytes / kPageBytes;
constexpr int64_t kReadBytes = int64_t(64) * 16384 * kEntryBytes;  // 128 MiB of K values
constexpr int kLists = 8;

// How the gather writes its results, if it does.
enum class Store : int { none, plain, streaming, evict_last };

// One warp a chunk at a time: each lane loads its kWords 16-byte words of the chunk (a chunk of
// 32 * kWords * 16 bytes), then folds them into its sum (and writes the chunk's results, kStore).
template <int kWords, bool kScales, Store kStore = Store::none>
__global__ void __launch_bounds__(512) gather_chunks(const uint8_t* cache, const int64_t* chunk_at, int64_t chunks,
                                                     uint4* sink, float* out) {
  // The chunk's scales: 4 bytes an entry of 128 bytes, 16 bytes a lane (lanes 0 .. kWords / 2 - 1).
  constexpr int kScaleLanes = kWords * 32 * 16 / kEntryBytes * 4 / 16;
  const int lane = int(threadIdx.x % 32);
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (int64_t c = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32; c < chunks; c += warps) {
    const uint4* p = reinterpret_cast<const uint4*>(cache + chunk_at[c]);
    uint4 v[kWords];
#pragma unroll
    for (int i = 0; i < kWords; ++i) v[i] = __ldcs(p + i * 32 + lane);
    uint4 scale = make_uint4(0, 0, 0, 0);
    if (kScales && lane < kScaleLanes) {
      const int64_t page = chunk_at[c] / kPageBytes, in_page = chunk_at[c] % kPageBytes;
      const uint8_t* s = cache + page * kPageBytes + kPageEntries * kEntryBytes + in_page / kEntryBytes * 4;
      scale = __ldcs(reinterpret_cast<const uint4*>(s) + lane);
    }
    acc.x ^= scale.x;
#pragma unroll
    for (int i = 0; i < kWords; ++i) acc.x ^= v[i].x, acc.y ^= v[i].y, acc.z ^= v[i].z, acc.w ^= v[i].w;
    if constexpr (kStore != Store::none) {
      // One result an entry of the chunk, written after the chunk's loads (as a logit after its K).
      constexpr int kEntries = kWords * 32 * 16 / kEntryBytes;
      if (lane < kEntries) {
        float* at = out + c * kEntries + lane;
        const float value = __uint_as_float(v[0].x ^ scale.x);
        if constexpr (kStore == Store::plain) {
          *at = value;
        } else if constexpr (kStore == Store::streaming) {
          __stcs(at, value);
        } else {
          uint64_t policy;
          asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
          asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;\n" ::"l"(at), "f"(value), "l"(policy) : "memory");
        }
      }
    }
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9e3779b9u) sink[blockIdx.x] = acc;
}

struct Row {
  int64_t chunk_bytes = 0;
  bool scales = false;
  float us = 0;
};

struct WriteRow {
  const char* store = "";
  int outputs = 0;
  float us = 0;
};

constexpr int kWriteOutputs = 32;  // launches a graph, each with its own output in the spread case

}  // namespace

int main(int argc, char** argv) {
  std::string json;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) {
      json = argv[++i];
    } else {
      std::fprintf(stderr, "usage: gather_floor [--json FILE]\n");
      return 2;
    }
  }
  const dsa::cuda::DeviceInfo& dev = dsa::cuda::device_info();
  if (!dsa::cuda::sm90_available()) {
    std::fprintf(stderr, "gather_floor: no sm_90 GPU (%s)\n", dev.present ? dev.name.c_str() : dev.why_absent.c_str());
    return 1;
  }
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int blocks = dev.sm_count * 4;
  const double read_gbs = dsa::bench_gpu::read_bandwidth_gbs(blocks, stream);
  uint8_t* cache = nullptr;
  uint4* sink = nullptr;
  int64_t* chunk_at = nullptr;
  CHECK(cudaMalloc(&cache, size_t(kPages * kPageBytes)));
  CHECK(cudaMemset(cache, 1, size_t(kPages * kPageBytes)));
  CHECK(cudaMalloc(&sink, size_t(blocks) * sizeof(uint4)));
  const int64_t max_chunks = kReadBytes / 1024;
  CHECK(cudaMalloc(&chunk_at, size_t(kLists * max_chunks) * sizeof(int64_t)));
  std::mt19937_64 rng(20261203);
  std::vector<Row> rows;
  std::printf("gather floor: %lld MiB of K values in chunks at random block-aligned places of a %lld MiB cache\n",
              (long long)(kReadBytes >> 20), (long long)(kCacheBytes >> 20));
  std::printf("read bandwidth: %.3f TB/s (4 GiB reduction)\n", read_gbs / 1e3);
  std::printf("%12s %7s %8s %10s %8s %8s %11s\n", "chunk bytes", "scales", "chunks", "us", "TB/s", "of read",
              "TB/s all");
  for (const int64_t chunk_bytes : {int64_t(1024), int64_t(2048), int64_t(4096), int64_t(8192)}) {
    const int64_t chunks = kReadBytes / chunk_bytes, per_page = kPageEntries * kEntryBytes / chunk_bytes;
    std::vector<int64_t> at(size_t(kLists * chunks));
    for (int64_t& a : at) {
      const int64_t page = int64_t(rng() % uint64_t(kPages)), slot = int64_t(rng() % uint64_t(per_page));
      a = page * kPageBytes + slot * chunk_bytes;
    }
    CHECK(cudaMemcpy(chunk_at, at.data(), at.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
    for (const bool scales : {false, true}) {
      const auto launch = [&](int list, cudaStream_t st) {
        const int64_t* list_at = chunk_at + int64_t(list) * chunks;
        const auto run = [&](auto kernel) { kernel<<<blocks, 512, 0, st>>>(cache, list_at, chunks, sink, nullptr); };
        switch (chunk_bytes) {
          case 1024: scales ? run(gather_chunks<2, true>) : run(gather_chunks<2, false>); break;
          case 2048: scales ? run(gather_chunks<4, true>) : run(gather_chunks<4, false>); break;
          case 4096: scales ? run(gather_chunks<8, true>) : run(gather_chunks<8, false>); break;
          default: scales ? run(gather_chunks<16, true>) : run(gather_chunks<16, false>); break;
        }
        CHECK(cudaGetLastError());
      };
      const float us = dsa::bench_gpu::graph_median_us(launch, kLists, 20, 2, stream);
      const double tbps = double(kReadBytes) / (double(us) * 1e-6) / 1e12;
      const double all = tbps * (scales ? double(kEntryBytes + 4) / kEntryBytes : 1.0);
      std::printf("%12lld %7s %8lld %10.1f %8.2f %7.0f%% %11.2f\n", (long long)chunk_bytes, scales ? "yes" : "no",
                  (long long)chunks, us, tbps, 100.0 * tbps * 1e3 / read_gbs, all);
      rows.push_back({chunk_bytes, scales, us});
    }
  }
  // The 1 KB gather with scales, writing one fp32 result an entry.
  std::vector<WriteRow> writes;
  {
    const int64_t chunk_bytes = 1024, chunks = kReadBytes / chunk_bytes, per_page = kPageEntries * kEntryBytes / chunk_bytes;
    const int64_t out_floats = chunks * (chunk_bytes / kEntryBytes);
    std::vector<int64_t> at(size_t(kLists * chunks));
    for (int64_t& a : at) {
      const int64_t page = int64_t(rng() % uint64_t(kPages)), slot = int64_t(rng() % uint64_t(per_page));
      a = page * kPageBytes + slot * chunk_bytes;
    }
    CHECK(cudaMemcpy(chunk_at, at.data(), at.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
    float* out = nullptr;
    CHECK(cudaMalloc(&out, size_t(kWriteOutputs * out_floats) * sizeof(float)));
    std::printf("\nthe 1 KB gather with scales, one fp32 result an entry written (%lld MiB a launch)\n",
                (long long)(out_floats * 4 >> 20));
    std::printf("%12s %8s %10s %12s\n", "stores", "outputs", "us", "over none");
    float none_us = 0;
    const std::pair<Store, const char*> stores[] = {
        {Store::none, "none"}, {Store::plain, "plain"}, {Store::streaming, "cs"}, {Store::evict_last, "evict_last"}};
    for (const auto& [store, name] : stores) {
      for (const int outputs : {1, kWriteOutputs}) {
        if (store == Store::none && outputs > 1) continue;
        const auto launch = [&, store = store](int i, cudaStream_t st) {
          const int64_t* list_at = chunk_at + int64_t(i % kLists) * chunks;
          float* at_out = out + int64_t(i % outputs) * out_floats;
          const auto run = [&](auto kernel) { kernel<<<blocks, 512, 0, st>>>(cache, list_at, chunks, sink, at_out); };
          switch (store) {
            case Store::none: run(gather_chunks<2, true>); break;
            case Store::plain: run(gather_chunks<2, true, Store::plain>); break;
            case Store::streaming: run(gather_chunks<2, true, Store::streaming>); break;
            case Store::evict_last: run(gather_chunks<2, true, Store::evict_last>); break;
          }
          CHECK(cudaGetLastError());
        };
        const float us = dsa::bench_gpu::graph_median_us(launch, kWriteOutputs, 10, 2, stream);
        if (store == Store::none) none_us = us;
        std::printf("%12s %8d %10.1f %11.1f%%\n", name, outputs, us, 100.0 * (us - none_us) / none_us);
        writes.push_back({name, outputs, us});
      }
    }
    CHECK(cudaFree(out));
  }
  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "gather_floor: cannot write %s\n", json.c_str());
      return 1;
    }
    std::fprintf(f, "{\"device\": \"%s\", \"read_gbs\": %.1f, \"read_bytes\": %lld, \"gather\": [", dev.name.c_str(),
                 read_gbs, (long long)kReadBytes);
    for (size_t i = 0; i < rows.size(); ++i)
      std::fprintf(f, "%s{\"chunk_bytes\": %lld, \"scales\": %s, \"us\": %.2f}", i ? ", " : "",
                   (long long)rows[i].chunk_bytes, rows[i].scales ? "true" : "false", rows[i].us);
    std::fprintf(f, "], \"writes\": [");
    for (size_t i = 0; i < writes.size(); ++i)
      std::fprintf(f, "%s{\"stores\": \"%s\", \"outputs\": %d, \"us\": %.2f}", i ? ", " : "", writes[i].store,
                   writes[i].outputs, writes[i].us);
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }
  CHECK(cudaFree(cache));
  CHECK(cudaFree(sink));
  CHECK(cudaFree(chunk_at));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
