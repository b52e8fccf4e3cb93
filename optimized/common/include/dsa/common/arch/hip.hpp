// The vendor layer for AMD gfx942 (MI300): a wave of 64 lanes, 64-bit
// ballots. The same interface as arch/cuda.hpp (documented there), so the
// shared selection code (dsa/common/select) builds for wave 64 unchanged.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

#if defined(__HIPCC__)

#include <hip/hip_runtime.h>

namespace dsa::common::arch {

struct Hip {
  static constexpr int kLanes = 64;
  using LaneMask = uint64_t;

  __device__ int thread() const { return int(threadIdx.x); }
  __device__ int block() const { return int(blockIdx.x); }
  __device__ int grid() const { return int(gridDim.x); }
  __device__ void sync() const { __syncthreads(); }
  __device__ LaneMask ballot(bool p) const { return __ballot(p); }
  template <class T>
  __device__ T shfl(T v, int src) const {
    return __shfl(v, src, kLanes);
  }
  template <class T>
  __device__ T shfl_up(T v, int delta) const {
    return __shfl_up(v, unsigned(delta), kLanes);
  }
  __device__ int atomic_add_shared(int* p, int v) const { return atomicAdd(p, v); }
  __device__ uint32_t atomic_or_shared(uint32_t* p, uint32_t v) const { return atomicOr(p, v); }
  __device__ uint32_t atomic_max_shared(uint32_t* p, uint32_t v) const { return atomicMax(p, v); }
  __device__ uint32_t atomic_add_global(uint32_t* p, uint32_t v) const { return atomicAdd(p, v); }
  __device__ void fence() const { __threadfence(); }
  // Device-coherent loads of another block's writes (past the non-coherent L1/L0).
  __device__ uint32_t load_cg(const uint32_t* p) const {
    return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  }
  __device__ uint64_t load_cg(const uint64_t* p) const {
    return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  }
  __device__ void load4(const float* p, float (&v)[4]) const {
    const float4 x = *reinterpret_cast<const float4*>(p);
    v[0] = x.x;
    v[1] = x.y;
    v[2] = x.z;
    v[3] = x.w;
  }
  // gfx942 has no thread block clusters: a group is one block (the launch gives each row one block).
  __device__ int group_rank() const { return 0; }
  __device__ int group_size() const { return 1; }
  __device__ void group_sync() const { __syncthreads(); }
  template <class T>
  __device__ T* group_shared(T* p, int) const {
    return p;
  }
};

}  // namespace dsa::common::arch

#endif
