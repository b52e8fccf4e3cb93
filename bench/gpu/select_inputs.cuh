// The selection benchmarks' inputs (select_speed, row_phases): rows of logits of three kinds, every row at its full
// width, and how many input sets a replay rotates through so that every launch reads from HBM.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dsa/common/row_span.hpp"
#include "gpu_timing.cuh"

namespace dsa::bench_gpu::select_inputs {

using dsa::common::RowSpan;

__device__ inline uint32_t hash(uint64_t x) {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  x ^= x >> 33;
  return uint32_t(x);
}

enum class Kind { normal, minus_inf, ties16 };
inline const char* name_of(Kind k) { return k == Kind::normal ? "normal" : k == Kind::minus_inf ? "7/8 -inf" : "16 levels"; }

// normal: N(0, 1) (Box-Muller); minus_inf: 7 of 8 blocks of 8 columns -inf
// (a candidate-masked row); ties16: 16 levels, massive ties at the cut.
__global__ inline void fill(float* p, int64_t rows, int64_t cols, int kind, uint64_t seed) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t s = seed * 0x9e3779b97f4a7c15ull + uint64_t(i);
    const float u1 = (float(hash(s) >> 8) + 1.0f) * (1.0f / 16777216.0f);
    const float u2 = float(hash(s ^ 0x5555) >> 8) * (1.0f / 16777216.0f);
    float v = sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
    if (kind == int(Kind::minus_inf) && hash(seed * 31 + uint64_t(i / 8)) % 8 != 0) v = -INFINITY;
    if (kind == int(Kind::ties16)) v = float(hash(s) % 16) * 0.25f;
    p[i] = v;
  }
}

// Every row at its full width `cols`, as per-row lengths on the device (d_lens: the caller frees it).
inline RowSpan full_rows(int64_t rows, int64_t cols, int32_t*& d_lens) {
  const std::vector<int32_t> lens(static_cast<size_t>(rows), int32_t(cols));
  CHECK(cudaMalloc(&d_lens, lens.size() * 4));
  CHECK(cudaMemcpy(d_lens, lens.data(), lens.size() * 4, cudaMemcpyHostToDevice));
  RowSpan span;
  span.kind = RowSpan::Kind::per_row_2d;
  span.rows = rows;
  span.width = cols;
  span.seq_lens = d_lens;
  return span;
}

// Input sets of `bytes` each that a replay rotates through: at least 3, and together at least 3 x the L2, so every
// launch reads from HBM.
inline int input_sets(size_t bytes, const cudaDeviceProp& prop) {
  return std::max<int>(3, int((3 * size_t(prop.l2CacheSize) + bytes - 1) / bytes));
}

}  // namespace dsa::bench_gpu::select_inputs
