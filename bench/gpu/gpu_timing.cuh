// What the GPU speed programs (logits_speed, select_speed) time with: checked
// CUDA calls, the read-bandwidth probe, and the timing of a launch sequence as
// the median of CUDA-graph replays measured by events (host work between
// launches then costs nothing, as with DeepGEMM's own graph timing).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

namespace dsa::bench_gpu {

// Every 16-byte word read once, XOR-reduced; a block writes its word only if
// the sum is a magic value, so the compiler cannot drop the reads.
__global__ void __launch_bounds__(512) read_all(const uint4* p, size_t n, uint4* sink) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcs(p + i);
    acc.x ^= v.x, acc.y ^= v.y, acc.z ^= v.z, acc.w ^= v.w;
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9e3779b9u) sink[blockIdx.x] = acc;
}

// The PCI bus id of the current CUDA device ("0000:19:00.0"), by which NVML (gpu_clock.hpp) finds the
// same device; empty if CUDA does not say.
inline std::string current_pci_bus_id() {
  int device = 0;
  char bus[64] = {};
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetPCIBusId(bus, int(sizeof bus), device) != cudaSuccess)
    return {};
  return bus;
}

// n int32 values of device memory, copied to the host (after the work before it on the device).
inline std::vector<int32_t> download(const int32_t* d, size_t n) {
  std::vector<int32_t> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(int32_t), cudaMemcpyDeviceToHost));
  return h;
}

inline float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// launch(i, stream) for i in [0, per_graph) is run once directly (first-call
// work such as kernel attributes stays outside the capture), then captured in
// one graph; after `warmup` replays, `reps` replays are timed by events.
// Returns the median replay time divided by per_graph, in microseconds.
template <class F>
float graph_median_us(F&& launch, int per_graph, int reps, int warmup, cudaStream_t stream) {
  for (int i = 0; i < per_graph; ++i) launch(i, stream);
  CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < per_graph; ++i) launch(i, stream);
  CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < warmup; ++i) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> us;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(a, stream));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaEventRecord(b, stream));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    us.push_back(ms * 1000.0f / float(per_graph));
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return median(us);
}

// The device's read bandwidth in GB/s: 4 GiB read once per launch, `blocks` blocks of 512 threads.
inline double read_bandwidth_gbs(int blocks, cudaStream_t stream) {
  const size_t bytes = size_t(4) << 30;
  uint4* p = nullptr;
  uint4* sink = nullptr;
  CHECK(cudaMalloc(&p, bytes));
  CHECK(cudaMalloc(&sink, size_t(blocks) * sizeof(uint4)));
  CHECK(cudaMemset(p, 1, bytes));
  const float us = graph_median_us(
      [&](int, cudaStream_t st) { read_all<<<blocks, 512, 0, st>>>(p, bytes / 16, sink); }, 8, 10, 1, stream);
  CHECK(cudaFree(p));
  CHECK(cudaFree(sink));
  return double(bytes) / (double(us) * 1e3);
}

}  // namespace dsa::bench_gpu
