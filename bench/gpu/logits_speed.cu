// Speed of the SM90 logits kernels on the GPU (CUDA events; not a test). For each shape
// (batch x context, next_n): the median over many graph replays after warm-up of the logits kernel
// (dsa_sm90, then dsa_sm90_accurate), with the K cache rotated over enough page sets that every
// launch reads from HBM (several times the L2), and in the same run the device's read bandwidth
// (a reduction over 4 GiB). Prints a table; --json FILE writes the numbers for programs.
//   logits_speed [--json FILE] [--iters N] [--shapes B:L,...] [--next-n 1,2]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/sm90_logits.hpp"
#include "gpu_timing.cuh"

namespace {

namespace bench_gpu = dsa::bench_gpu;

__device__ uint32_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return uint32_t(x);
}

// e4m3fn codes of moderate size with both signs, never NaN (0x7f / 0xff).
__global__ void fill_codes(uint8_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint32_t r = mix(seed * 0x9E3779B97F4A7C15ull + i);
    p[i] = uint8_t((r & 0x80) | (0x20 + (r >> 8) % 0x38));  // exponents around 2^-3 .. 2^3
  }
}

// Block-flat pages: 64 * D codes, then 64 positive fp32 scales.
__global__ void fill_scales(uint8_t* cache, int64_t pages, int64_t page_bytes, int head_dim) {
  const int64_t n = pages * 64;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float* s = reinterpret_cast<float*>(cache + (i / 64) * page_bytes + 64 * head_dim) + i % 64;
    *s = 1.0f / 448.0f * (1.0f + float(mix(i) % 1000) / 1000.0f);
  }
}

__global__ void fill_floats(float* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = float(int(mix(seed + i) % 2001) - 1000) / 1000.0f;
}

// Launches are captured 8 at a time in a CUDA graph; the result is the median replay over `reps`
// replays after `warmup`, divided by 8 (gpu_timing.cuh).
template <class F>
float time_median_us(F&& launch, int reps, int warmup) {
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const float us = bench_gpu::graph_median_us(launch, 8, reps, warmup, stream);
  CHECK(cudaStreamDestroy(stream));
  return us;
}

struct ShapeResult {
  int batch, context, next_n;
  double k_bytes;
  float us_std, us_accurate, us_schedule;
};

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  int iters = 20;
  std::vector<std::pair<int, int>> shapes = {{64, 65536}, {16, 131072}, {128, 32768}, {4, 131072}};
  std::vector<int> next_ns = {1, 2};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (a == "--iters" && i + 1 < argc) iters = std::atoi(argv[++i]);
    else if (a == "--shapes" && i + 1 < argc) {
      shapes.clear();
      std::string s = argv[++i];
      size_t at = 0;
      while (at < s.size()) {
        const size_t comma = s.find(',', at);
        const std::string item = s.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        shapes.push_back({std::atoi(item.c_str()), std::atoi(item.c_str() + item.find(':') + 1)});
        if (comma == std::string::npos) break;
        at = comma + 1;
      }
    } else if (a == "--next-n" && i + 1 < argc) {
      next_ns.clear();
      for (const char* c = argv[++i]; *c; ++c)
        if (*c >= '1' && *c <= '9') next_ns.push_back(*c - '0');
    } else {
      std::fprintf(stderr, "usage: logits_speed [--json FILE] [--iters N] [--shapes B:L,...] [--next-n 1,2]\n");
      return 2;
    }
  }
  const dsa::cuda::DeviceInfo& dev = dsa::cuda::device_info();
  if (!dsa::cuda::sm90_available()) {
    std::fprintf(stderr, "logits_speed: no sm_90 GPU (%s)\n", dev.present ? dev.name.c_str() : dev.why_absent.c_str());
    return 1;
  }
  const int H = 64, D = 128, kPage = 64;
  const int64_t page_bytes = int64_t(kPage) * (D + 4);

  // Read bandwidth: 4 GiB read once per launch.
  double read_tbps = 0;
  {
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    read_tbps = bench_gpu::read_bandwidth_gbs(dev.sm_count * 4, stream) / 1e3;
    CHECK(cudaStreamDestroy(stream));
    std::printf("read bandwidth: %.3f TB/s (4 GiB reduction, median of 10 graphs of 8)\n", read_tbps);
  }

  std::vector<ShapeResult> results;
  for (const auto& shape : shapes)
    for (int next_n : next_ns) {
      const int batch = shape.first, context = shape.second;
      const int pages_per_request = (context + kPage - 1) / kPage;
      const double k_bytes = double(batch) * pages_per_request * page_bytes;
      // Page sets: enough that the K bytes of all sets are at least 4x the L2 (and at least 2 sets).
      const int sets = std::max(2, int(4.0 * double(dev.l2_bytes) / k_bytes + 0.999));
      const int64_t pages = int64_t(sets) * batch * pages_per_request;
      uint8_t *cache, *q;
      float *weights, *logits;
      int32_t *tables, *lens, *schedule;
      CHECK(cudaMalloc(&cache, size_t(pages * page_bytes)));
      CHECK(cudaMalloc(&q, size_t(batch) * next_n * H * D));
      CHECK(cudaMalloc(&weights, size_t(batch) * next_n * H * 4));
      CHECK(cudaMalloc(&logits, size_t(batch) * next_n * size_t(context) * 4));
      CHECK(cudaMalloc(&tables, size_t(sets) * batch * pages_per_request * 4));
      CHECK(cudaMalloc(&lens, size_t(batch) * 4));
      CHECK(cudaMalloc(&schedule, size_t(batch + 1) * 4));
      fill_codes<<<4096, 256>>>(cache, size_t(pages * page_bytes), 11);
      fill_scales<<<4096, 256>>>(cache, pages, page_bytes, D);
      fill_codes<<<256, 256>>>(q, size_t(batch) * next_n * H * D, 13);
      fill_floats<<<256, 256>>>(weights, size_t(batch) * next_n * H, 17);
      {
        // Set s, request b, page k -> a page of its own, scattered over the pool.
        std::vector<int32_t> t(size_t(sets) * batch * pages_per_request);
        for (size_t i = 0; i < t.size(); ++i) t[i] = int32_t(i);
        uint64_t x = 12345;
        for (size_t i = t.size() - 1; i > 0; --i) {
          x = x * 6364136223846793005ull + 1442695040888963407ull;
          std::swap(t[i], t[size_t((x >> 33) % (i + 1))]);
        }
        CHECK(cudaMemcpy(tables, t.data(), t.size() * 4, cudaMemcpyHostToDevice));
        std::vector<int32_t> l(size_t(batch), context);
        CHECK(cudaMemcpy(lens, l.data(), l.size() * 4, cudaMemcpyHostToDevice));
      }
      CHECK(cudaDeviceSynchronize());
      dsa::cuda::DeviceDecodeStep step;
      step.batch = batch, step.next_n = next_n, step.heads = H, step.head_dim = D;
      step.q = q, step.weights = weights, step.seq_lens = lens;
      step.max_pages = pages_per_request, step.cache = cache, step.num_pages = int32_t(pages), step.block_size = kPage;
      step.logits_width = context;
      const auto at_set = [&](int i) {
        dsa::cuda::DeviceDecodeStep s = step;
        s.block_table = tables + size_t(i % sets) * batch * pages_per_request;
        return s;
      };
      dsa::cuda::sm90_paged_schedule(at_set(0), schedule, nullptr);
      CHECK(cudaDeviceSynchronize());
      ShapeResult r{batch, context, next_n, k_bytes, 0, 0, 0};
      r.us_schedule = time_median_us(
          [&](int i, cudaStream_t st) { dsa::cuda::sm90_paged_schedule(at_set(i), schedule, st); }, iters, 2);
      r.us_std = time_median_us(
          [&](int i, cudaStream_t st) {
            dsa::cuda::sm90_paged_logits(at_set(i), dsa::cuda::Sm90Variant::standard, schedule, logits, false, st);
          },
          iters, 2);
      r.us_accurate = time_median_us(
          [&](int i, cudaStream_t st) {
            dsa::cuda::sm90_paged_logits(at_set(i), dsa::cuda::Sm90Variant::accurate, schedule, logits, false, st);
          },
          iters, 2);
      results.push_back(r);
      std::printf("B %4d x %6d next_n %d: dsa_sm90 %8.1f us (%.2f TB/s, %.0f%% of read)  accurate %8.1f us  "
                  "schedule %.1f us  (%d page sets)\n",
                  batch, context, next_n, r.us_std, k_bytes / (r.us_std * 1e-6) / 1e12,
                  100.0 * k_bytes / (r.us_std * 1e-6) / 1e12 / read_tbps, r.us_accurate, r.us_schedule, sets);
      std::fflush(stdout);
      CHECK(cudaFree(cache));
      CHECK(cudaFree(q));
      CHECK(cudaFree(weights));
      CHECK(cudaFree(logits));
      CHECK(cudaFree(tables));
      CHECK(cudaFree(lens));
      CHECK(cudaFree(schedule));
    }

  if (!json_path.empty()) {
    FILE* f = std::fopen(json_path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", json_path.c_str());
      return 1;
    }
    std::fprintf(f, "{\"gpu\": \"%s\", \"sm_count\": %d, \"l2_bytes\": %zu, \"driver\": %d, \"runtime\": %d,\n",
                 dev.name.c_str(), dev.sm_count, dev.l2_bytes, dev.driver_version, dev.runtime_version);
    std::fprintf(f, " \"read_tbps\": %.4f, \"iters\": %d, \"heads\": %d, \"head_dim\": %d, \"shapes\": [\n", read_tbps,
                 iters, H, D);
    for (size_t i = 0; i < results.size(); ++i) {
      const ShapeResult& r = results[i];
      std::fprintf(f,
                   "  {\"batch\": %d, \"context\": %d, \"next_n\": %d, \"k_bytes\": %.0f, \"us_dsa_sm90\": %.2f, "
                   "\"us_dsa_sm90_accurate\": %.2f, \"us_schedule\": %.2f}%s\n",
                   r.batch, r.context, r.next_n, r.k_bytes, r.us_std, r.us_accurate, r.us_schedule,
                   i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }
  return 0;
}
