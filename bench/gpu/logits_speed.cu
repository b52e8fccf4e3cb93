// Speed of the SM90 logits kernels on the GPU (CUDA events; not a test). For each shape
// (batch x context, next_n): the median over many graph replays after warm-up of the logits kernel
// (dsa_sm90, then dsa_sm90_accurate, in turn for `rounds` rounds), with the K cache rotated over
// enough page sets that every launch reads from HBM (several times the L2), and in the same run the
// device's read bandwidth (a reduction over 4 GiB). The SM clock, the power and the driver's reasons
// for holding the clock down are sampled while each is timed (gpu_clock.hpp): the H100's power cap
// moves an issue-bound kernel's time by up to 14 % from one call to the next. Prints a table; --json
// FILE writes the numbers for programs.
//   logits_speed [--json FILE] [--iters N] [--rounds N] [--shapes B:L,...] [--next-n 1,2]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/sm90_logits.hpp"
#include "gpu_clock.hpp"
#include "gpu_timing.cuh"
#include "paged_step.cuh"

namespace {

namespace bench_gpu = dsa::bench_gpu;

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

// One variant's time and clock samples over the rounds.
struct Timed {
  std::vector<float> us;
  std::vector<bench_gpu::ClockStats> clock;
  float median_us() const { return bench_gpu::median(us); }
  // The median over the rounds that have samples of one of their statistics; 0 where none has.
  template <class T>
  float median_of(T bench_gpu::ClockStats::*field) const {
    std::vector<float> v;
    for (const auto& c : clock)
      if (c.samples > 0) v.push_back(float(c.*field));
    return v.empty() ? 0.0f : bench_gpu::median(v);
  }
  unsigned median_mhz() const { return unsigned(median_of(&bench_gpu::ClockStats::median_mhz)); }
  double median_watts() const { return median_of(&bench_gpu::ClockStats::median_watts); }
  double power_capped() const {  // the fraction of all samples
    double capped = 0;
    int n = 0;
    for (const auto& c : clock) capped += c.power_capped * c.samples, n += c.samples;
    return n > 0 ? capped / n : 0.0;
  }
};

template <class F>
void time_round(Timed& t, const bench_gpu::Nvml& nvml, F&& launch, int reps, int warmup) {
  bench_gpu::ClockSampler sampler(nvml);
  sampler.start();
  t.us.push_back(time_median_us(launch, reps, warmup));
  t.clock.push_back(sampler.stop());
}

struct ShapeResult {
  int batch, context, next_n;
  double k_bytes;
  Timed standard, accurate;
  float us_schedule;
  // accurate / standard of each round (the two timed one after the other).
  std::vector<float> ratios() const {
    std::vector<float> r;
    for (size_t i = 0; i < standard.us.size(); ++i) r.push_back(accurate.us[i] / standard.us[i]);
    return r;
  }
};

std::string json_floats(const std::vector<float>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  int iters = 20, rounds = 3;
  std::vector<std::pair<int, int>> shapes = {{64, 65536}, {16, 131072}, {128, 32768}, {4, 131072}};
  std::vector<int> next_ns = {1, 2};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (a == "--iters" && i + 1 < argc) iters = std::atoi(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
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
      std::fprintf(stderr,
                   "usage: logits_speed [--json FILE] [--iters N] [--rounds N] [--shapes B:L,...] [--next-n 1,2]\n");
      return 2;
    }
  }
  if (iters < 1 || rounds < 1 || shapes.empty() || next_ns.empty()) {
    std::fprintf(stderr, "logits_speed: --iters and --rounds take a positive count, --shapes and --next-n a list\n");
    return 2;
  }
  const dsa::cuda::DeviceInfo& dev = dsa::cuda::device_info();
  if (!dsa::cuda::sm90_available()) {
    std::fprintf(stderr, "logits_speed: no sm_90 GPU (%s)\n", dev.present ? dev.name.c_str() : dev.why_absent.c_str());
    return 1;
  }
  const int H = 64, D = 128;
  bench_gpu::Nvml nvml;
  const bool clocked = nvml.open(bench_gpu::current_pci_bus_id());
  const std::string no_clock = clocked ? "" : nvml.why_absent();
  if (clocked)
    std::printf("clock: sampled through NVML every 2 ms while each variant is timed\n");
  else
    std::printf("clock: not sampled (%s)\n", no_clock.c_str());

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
      const bench_gpu::PagedStep paged(batch, context, next_n, H, D, dev.l2_bytes);
      const double k_bytes = paged.k_bytes();
      const int sets = paged.sets();
      float* logits;
      int32_t* schedule;
      CHECK(cudaMalloc(&logits, size_t(batch) * next_n * size_t(context) * 4));
      CHECK(cudaMalloc(&schedule, size_t(batch + 1) * 4));
      const auto at_set = [&](int i) { return paged.at_set(i); };
      dsa::cuda::sm90_paged_schedule(at_set(0), schedule, nullptr);
      CHECK(cudaDeviceSynchronize());
      ShapeResult r{batch, context, next_n, k_bytes, {}, {}, 0};
      r.us_schedule = time_median_us(
          [&](int i, cudaStream_t st) { dsa::cuda::sm90_paged_schedule(at_set(i), schedule, st); }, iters, 2);
      for (int round = 0; round < rounds; ++round) {
        time_round(
            r.standard, nvml,
            [&](int i, cudaStream_t st) {
              dsa::cuda::sm90_paged_logits(at_set(i), dsa::cuda::Sm90Variant::standard, schedule, logits, false, st);
            },
            iters, 2);
        time_round(
            r.accurate, nvml,
            [&](int i, cudaStream_t st) {
              dsa::cuda::sm90_paged_logits(at_set(i), dsa::cuda::Sm90Variant::accurate, schedule, logits, false, st);
            },
            iters, 2);
      }
      results.push_back(r);
      const float us = r.standard.median_us();
      const std::vector<float> ratios = r.ratios();
      std::printf("B %4d x %6d next_n %d: dsa_sm90 %8.1f us (%.2f TB/s, %.0f%% of read, %u MHz, capped %.0f%%)  "
                  "accurate %8.1f us (%u MHz, capped %.0f%%)  accurate / ours %.3f (rounds %.3f-%.3f)  "
                  "schedule %.1f us  (%d page sets)\n",
                  batch, context, next_n, us, k_bytes / (us * 1e-6) / 1e12,
                  100.0 * k_bytes / (us * 1e-6) / 1e12 / read_tbps, r.standard.median_mhz(),
                  100 * r.standard.power_capped(), r.accurate.median_us(), r.accurate.median_mhz(),
                  100 * r.accurate.power_capped(), bench_gpu::median(ratios),
                  *std::min_element(ratios.begin(), ratios.end()), *std::max_element(ratios.begin(), ratios.end()),
                  r.us_schedule, sets);
      std::fflush(stdout);
      CHECK(cudaFree(logits));
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
    std::fprintf(f, " \"read_tbps\": %.4f, \"iters\": %d, \"rounds\": %d, \"heads\": %d, \"head_dim\": %d,\n",
                 read_tbps, iters, rounds, H, D);
    std::fprintf(f, " \"clock\": \"%s\", \"shapes\": [\n", no_clock.empty() ? "nvml" : no_clock.c_str());
    for (size_t i = 0; i < results.size(); ++i) {
      const ShapeResult& r = results[i];
      std::fprintf(f,
                   "  {\"batch\": %d, \"context\": %d, \"next_n\": %d, \"k_bytes\": %.0f, \"us_dsa_sm90\": %.2f, "
                   "\"us_dsa_sm90_accurate\": %.2f, \"us_schedule\": %.2f,\n   \"rounds_dsa_sm90\": %s, "
                   "\"rounds_dsa_sm90_accurate\": %s, \"accurate_over_ours\": %.4f,\n   \"mhz_dsa_sm90\": %u, "
                   "\"mhz_dsa_sm90_accurate\": %u, \"watts_dsa_sm90\": %.1f, \"watts_dsa_sm90_accurate\": %.1f, "
                   "\"power_capped_dsa_sm90\": %.3f, \"power_capped_dsa_sm90_accurate\": %.3f}%s\n",
                   r.batch, r.context, r.next_n, r.k_bytes, r.standard.median_us(), r.accurate.median_us(),
                   r.us_schedule, json_floats(r.standard.us).c_str(), json_floats(r.accurate.us).c_str(),
                   bench_gpu::median(r.ratios()), r.standard.median_mhz(), r.accurate.median_mhz(),
                   r.standard.median_watts(), r.accurate.median_watts(), r.standard.power_capped(),
                   r.accurate.power_capped(), i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }
  return 0;
}
