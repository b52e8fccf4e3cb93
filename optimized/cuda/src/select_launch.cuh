// Launching a selection kernel on a persistent grid (select_launch.cu, and
// the mutant build's select_mutants.cu).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

#include "cuda_check.hpp"
#include "dsa_cuda/kernels/select_kernel.cuh"

#include <cstdint>

namespace dsa::cuda::select_kernels {

// Every SM's resident blocks, and no more blocks than work items: the
// blocks walk the items, so a grid never waits on another launch's blocks.
template <class Source, common::select::Bug kBug, int kBlocksPerSm>
int persistent_grid(int64_t items) {
  static const int resident = [] {
    int device = 0, sms = 0, per_sm = 0;
    DSA_CUDA_CHECK(cudaGetDevice(&device));
    DSA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    DSA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tree_topk<Source, kBug, kBlocksPerSm>, kThreads, 0));
    return std::max(1, sms * per_sm);
  }();
  return int(std::min<int64_t>(items, resident));
}

template <class Source, common::select::Bug kBug, int kBlocksPerSm = kMinBlocks>
void launch(const Source& src, const common::select::TreePlan& plan, const common::select::TreeOutput& out,
            void* stream) {
  const int64_t items = src.rows() * plan.max_leaves;
  if (items == 0) return;
  tree_topk<Source, kBug, kBlocksPerSm><<<persistent_grid<Source, kBug, kBlocksPerSm>(items), kThreads, 0,
                                          static_cast<cudaStream_t>(stream)>>>(src, plan, out);
  DSA_CUDA_CHECK(cudaGetLastError());
}

// The group kernel's launch: rows * group blocks in clusters of `group`.
// Set up once per instantiation: the dynamic shared memory it needs, cluster
// sizes past 8 where the GPU places them, and the resident blocks.
template <class Source, int kCache = kCacheTiles, int kBlocksPerSm = 1, int kT = kThreads, int kI = kItems>
struct GroupLaunch {
  using Shared = typename Group<kCache, common::select::Bug::none, kT, kI>::Shared;
  int resident = 0;
  int max_group = 8;
  int clusters16 = 0;  // clusters of 16 blocks the GPU holds at once

  static const GroupLaunch& get() {
    static const GroupLaunch g = [] {
      GroupLaunch l;
      auto kernel = group_topk<Source, kCache, kBlocksPerSm, kT, kI>;
      DSA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sizeof(Shared))));
      int device = 0, sms = 0, per_sm = 0;
      DSA_CUDA_CHECK(cudaGetDevice(&device));
      DSA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
      DSA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kT, sizeof(Shared)));
      l.resident = std::max(1, sms * per_sm);
      if (cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess) {
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(16 * 8);
        cfg.blockDim = dim3(kT);
        cfg.dynamicSmemBytes = sizeof(Shared);
        cudaLaunchAttribute attr{};
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = 16;
        attr.val.clusterDim.y = 1;
        attr.val.clusterDim.z = 1;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) == cudaSuccess && clusters >= 1) {
          l.max_group = 16;
          l.clusters16 = clusters;
        }
      }
      (void)cudaGetLastError();  // a refused query leaves no error behind
      return l;
    }();
    return g;
  }
};

// Blocks per row (common::select::choose_group on this GPU); clusters of 16
// only where the GPU holds one per row at once.
template <class Source, int kCache = kCacheTiles, int kBlocksPerSm = 1, int kT = kThreads, int kI = kItems>
int32_t group_size(int64_t rows, int64_t widest, int max_group = common::select::kMaxGroup) {
  const auto& l = GroupLaunch<Source, kCache, kBlocksPerSm, kT, kI>::get();
  int32_t g = common::select::choose_group(rows, widest, kCapacity, kCache * kCapacity, l.resident,
                                           std::min(max_group, l.max_group));
  if (g > 8 && rows > l.clusters16)
    g = common::select::choose_group(rows, widest, kCapacity, kCache * kCapacity, l.resident, 8);
  return g;
}

template <class Source, int kCache = kCacheTiles, int kBlocksPerSm = 1, int kT = kThreads, int kI = kItems>
void launch_group(const Source& src, const common::select::GroupPlan& plan, int32_t* out, void* stream) {
  using L = GroupLaunch<Source, kCache, kBlocksPerSm, kT, kI>;
  const int64_t rows = src.rows();
  if (rows == 0) return;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(rows * plan.group));
  cfg.blockDim = dim3(kT);
  cfg.dynamicSmemBytes = sizeof(typename L::Shared);
  cfg.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = unsigned(plan.group);
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  L::get();
  DSA_CUDA_CHECK(cudaLaunchKernelEx(&cfg, group_topk<Source, kCache, kBlocksPerSm, kT, kI>, src, plan, out));
}

// The row and short-row kernels' launch: a persistent grid of at most one block per row and no more
// than the device holds at once, kThreadsPerBlock threads and kSmem bytes of dynamic shared memory each.
template <auto kKernel, int kThreadsPerBlock, size_t kSmem>
int resident_blocks() {
  static const int resident = [] {
    DSA_CUDA_CHECK(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem)));
    int device = 0, sms = 0, per_sm = 0;
    DSA_CUDA_CHECK(cudaGetDevice(&device));
    DSA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    DSA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, kThreadsPerBlock, kSmem));
    return std::max(1, sms * per_sm);
  }();
  return resident;
}

template <auto kKernel, int kThreadsPerBlock, size_t kSmem, class Source>
void launch_persistent(const Source& src, int32_t k, int32_t* out, void* stream) {
  const int64_t rows = src.rows();
  if (rows == 0) return;
  const int grid = int(std::min<int64_t>(rows, resident_blocks<kKernel, kThreadsPerBlock, kSmem>()));
  kKernel<<<grid, kThreadsPerBlock, kSmem, static_cast<cudaStream_t>(stream)>>>(src, k, out);
  DSA_CUDA_CHECK(cudaGetLastError());
}

template <class Source, int kT = kThreads>
void launch_row(const Source& src, int32_t k, int32_t* out, void* stream) {
  launch_persistent<row_topk<Source, kT>, kT, sizeof(typename RowOf<kT>::Shared)>(src, k, out, stream);
}

template <class Source>
void launch_short(const Source& src, int32_t k, int32_t* out, void* stream) {
  launch_persistent<short_row_topk<Source>, kShortThreads, sizeof(ShortRow::Shared)>(src, k, out, stream);
}

}  // namespace dsa::cuda::select_kernels
