// The vendor layer for NVIDIA: a warp of 32 lanes. The shared selection code
// (dsa/common/select) is written against this interface, so the HIP build
// (arch/hip.hpp, wave 64) and the host emulator (arch/host_simt.hpp) swap
// only this header.
//
// An Arch object is one thread's view of its block:
//   kLanes, LaneMask               lanes per warp and a ballot's width
//   thread(), block(), grid()      1-D indices
//   sync()                         a barrier of the block
//   ballot(p), shfl(v, src), shfl_up(v, d)   warp collectives (all lanes converged)
//   atomic_add_shared/global       returns the old value; atomic_or_shared, atomic_max_shared
//   fence()                        orders this thread's global writes before later ones (device scope)
//   load_cg(p)                     a global load that bypasses the non-coherent L1 (another block's writes)
//   load4(p, v)                    four floats from a 16-byte aligned address
//   group_rank(), group_size()     this block's place in its group (the blocks that share one row of a
//                                  group launch: a thread block cluster here, of at most 16 blocks)
//   group_sync()                   a barrier of the group's threads; orders shared and global memory
//   group_shared(p, rank)          the address of *p (this block's shared memory) in block `rank` of the group
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

#if defined(__CUDACC__)

#include <cooperative_groups.h>

namespace dsa::common::arch {

struct Cuda {
  static constexpr int kLanes = 32;
  using LaneMask = uint32_t;

  __device__ int thread() const { return int(threadIdx.x); }
  __device__ int block() const { return int(blockIdx.x); }
  __device__ int grid() const { return int(gridDim.x); }
  __device__ void sync() const { __syncthreads(); }
  __device__ LaneMask ballot(bool p) const { return __ballot_sync(0xffffffffu, p); }
  template <class T>
  __device__ T shfl(T v, int src) const {
    return __shfl_sync(0xffffffffu, v, src);
  }
  template <class T>
  __device__ T shfl_up(T v, int delta) const {
    return __shfl_up_sync(0xffffffffu, v, unsigned(delta));
  }
  __device__ int atomic_add_shared(int* p, int v) const { return atomicAdd(p, v); }
  __device__ uint32_t atomic_or_shared(uint32_t* p, uint32_t v) const { return atomicOr(p, v); }
  __device__ uint32_t atomic_max_shared(uint32_t* p, uint32_t v) const { return atomicMax(p, v); }
  __device__ uint32_t atomic_add_global(uint32_t* p, uint32_t v) const { return atomicAdd(p, v); }
  __device__ void fence() const { __threadfence(); }
  __device__ uint32_t load_cg(const uint32_t* p) const { return __ldcg(reinterpret_cast<const unsigned int*>(p)); }
  __device__ uint64_t load_cg(const uint64_t* p) const {
    return __ldcg(reinterpret_cast<const unsigned long long*>(p));
  }
  __device__ void load4(const float* p, float (&v)[4]) const {
    const float4 x = *reinterpret_cast<const float4*>(p);
    v[0] = x.x;
    v[1] = x.y;
    v[2] = x.z;
    v[3] = x.w;
  }
  // A launch without cluster dimensions is a group of one block.
  __device__ int group_rank() const { return int(cooperative_groups::this_cluster().block_rank()); }
  __device__ int group_size() const { return int(cooperative_groups::this_cluster().num_blocks()); }
  __device__ void group_sync() const { cooperative_groups::this_cluster().sync(); }
  template <class T>
  __device__ T* group_shared(T* p, int rank) const {
    return cooperative_groups::this_cluster().map_shared_rank(p, unsigned(rank));
  }
};

}  // namespace dsa::common::arch

#endif
