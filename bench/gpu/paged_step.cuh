// A decode step of the SM90 logits kernels on the device for the speed
// programs (logits_speed, candidate_path_speed): e4m3fn codes of moderate size,
// positive per-entry scales, and the K cache in `sets` page sets, each
// request's pages scattered over the pool, so that launches rotated over the
// sets read from HBM (the sets together several times the L2).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dsa/optimized/cuda/sm90_logits.hpp"
#include "gpu_timing.cuh"

namespace dsa::bench_gpu {

__device__ inline uint32_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return uint32_t(x);
}

// e4m3fn codes of moderate size with both signs, never NaN (0x7f / 0xff).
__global__ inline void fill_codes(uint8_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint32_t r = mix(seed * 0x9E3779B97F4A7C15ull + i);
    p[i] = uint8_t((r & 0x80) | (0x20 + (r >> 8) % 0x38));  // exponents around 2^-3 .. 2^3
  }
}

// Block-flat pages: 64 * D codes, then 64 positive fp32 scales.
__global__ inline void fill_scales(uint8_t* cache, int64_t pages, int64_t page_bytes, int head_dim) {
  const int64_t n = pages * 64;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float* s = reinterpret_cast<float*>(cache + (i / 64) * page_bytes + 64 * head_dim) + i % 64;
    *s = 1.0f / 448.0f * (1.0f + float(mix(i) % 1000) / 1000.0f);
  }
}

__global__ inline void fill_floats(float* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = float(int(mix(seed + i) % 2001) - 1000) / 1000.0f;
}

// `batch` requests of `context` entries (1-D lengths), H heads of D, pages of 64.
class PagedStep {
public:
  static constexpr int kPage = 64;
  PagedStep(int batch, int context, int next_n, int heads, int head_dim, size_t l2_bytes)
      : batch_(batch), pages_per_request_((context + kPage - 1) / kPage) {
    const int64_t page_bytes = int64_t(kPage) * (head_dim + 4);
    k_bytes_ = double(batch) * pages_per_request_ * page_bytes;
    // Enough sets that the K bytes of all sets are at least 4x the L2 (and at least 2 sets).
    sets_ = std::max(2, int(4.0 * double(l2_bytes) / k_bytes_ + 0.999));
    const int64_t pages = int64_t(sets_) * batch * pages_per_request_;
    CHECK(cudaMalloc(&cache_, size_t(pages * page_bytes)));
    CHECK(cudaMalloc(&q_, size_t(batch) * next_n * heads * head_dim));
    CHECK(cudaMalloc(&weights_, size_t(batch) * next_n * heads * 4));
    CHECK(cudaMalloc(&tables_, size_t(sets_) * batch * pages_per_request_ * 4));
    CHECK(cudaMalloc(&lens_, size_t(batch) * 4));
    fill_codes<<<4096, 256>>>(cache_, size_t(pages * page_bytes), 11);
    fill_scales<<<4096, 256>>>(cache_, pages, page_bytes, head_dim);
    fill_codes<<<256, 256>>>(q_, size_t(batch) * next_n * heads * head_dim, 13);
    fill_floats<<<256, 256>>>(weights_, size_t(batch) * next_n * heads, 17);
    // Set s, request b, page k -> a page of its own, scattered over the pool.
    std::vector<int32_t> t(size_t(sets_) * batch * pages_per_request_);
    for (size_t i = 0; i < t.size(); ++i) t[i] = int32_t(i);
    uint64_t x = 12345;
    for (size_t i = t.size() - 1; i > 0; --i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      std::swap(t[i], t[size_t((x >> 33) % (i + 1))]);
    }
    CHECK(cudaMemcpy(tables_, t.data(), t.size() * 4, cudaMemcpyHostToDevice));
    const std::vector<int32_t> l(static_cast<size_t>(batch), context);
    CHECK(cudaMemcpy(lens_, l.data(), l.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaDeviceSynchronize());
    step_.batch = batch, step_.next_n = next_n, step_.heads = heads, step_.head_dim = head_dim;
    step_.q = q_, step_.weights = weights_, step_.seq_lens = lens_;
    step_.max_pages = pages_per_request_, step_.cache = cache_, step_.num_pages = int32_t(pages);
    step_.block_size = kPage;
    step_.logits_width = context;
  }
  PagedStep(const PagedStep&) = delete;
  PagedStep& operator=(const PagedStep&) = delete;
  ~PagedStep() {
    cudaFree(cache_);
    cudaFree(q_);
    cudaFree(weights_);
    cudaFree(tables_);
    cudaFree(lens_);
  }

  // The step reading page set i % sets.
  dsa::cuda::DeviceDecodeStep at_set(int i) const {
    dsa::cuda::DeviceDecodeStep s = step_;
    s.block_table = tables_ + size_t(i % sets_) * batch_ * pages_per_request_;
    return s;
  }
  int sets() const { return sets_; }
  double k_bytes() const { return k_bytes_; }  // one set's K cache bytes
  const int32_t* seq_lens() const { return lens_; }

private:
  int batch_, pages_per_request_, sets_ = 0;
  double k_bytes_ = 0;
  uint8_t *cache_ = nullptr, *q_ = nullptr;
  float* weights_ = nullptr;
  int32_t *tables_ = nullptr, *lens_ = nullptr;
  dsa::cuda::DeviceDecodeStep step_;
};

}  // namespace dsa::bench_gpu
