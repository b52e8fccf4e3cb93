// Launching a selection kernel on a persistent grid (select_launch.cu, and
// the mutant build's select_mutants.cu).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

#include "cuda_check.hpp"
#include "dsa_cuda/kernels/select_kernel.cuh"

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

}  // namespace dsa::cuda::select_kernels
