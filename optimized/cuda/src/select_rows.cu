// The row kernels around the selection (select.hpp): padding pack/unpack
// and the candidate mask, the shared block bodies of optimized/common.
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda_check.hpp"
#include "dsa/common/arch/cuda.hpp"
#include "dsa/common/candidate_mask.hpp"
#include "dsa/common/padding.hpp"
#include "dsa/optimized/cuda/select.hpp"

namespace dsa::cuda {
namespace {

constexpr int kThreads = 256;
// Rows a launch runs at once; the blocks stride over the rest.
constexpr int64_t kMaxGrid = 4096;

__global__ void __launch_bounds__(kThreads) pack_rows_kernel(common::PackRows p) {
  common::pack_rows_block<kThreads>(common::arch::Cuda{}, p);
}
__global__ void __launch_bounds__(kThreads) unpack_topk_kernel(common::UnpackTopk p) {
  common::unpack_topk_block<kThreads>(common::arch::Cuda{}, p);
}
__global__ void __launch_bounds__(kThreads) candidate_mask_kernel(common::CandidateMaskRows p) {
  extern __shared__ uint32_t bitmap[];
  common::candidate_mask_block<kThreads>(common::arch::Cuda{}, p, bitmap);
}

int grid_of(int64_t rows) { return int(std::clamp<int64_t>(rows, 1, kMaxGrid)); }

}  // namespace

int64_t candidate_mask_bitmap_words() { return kMaskBitmapBytes / 4; }

void launch_pack_rows(const common::PackRows& p, void* stream) {
  const int64_t rows = int64_t(p.batch) * p.next_n;
  if (rows == 0) return;
  pack_rows_kernel<<<grid_of(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
  DSA_CUDA_CHECK(cudaGetLastError());
}

void launch_unpack_topk(const common::UnpackTopk& p, void* stream) {
  if (p.out_rows == 0) return;
  unpack_topk_kernel<<<grid_of(p.out_rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
  DSA_CUDA_CHECK(cudaGetLastError());
}

void launch_candidate_mask(const common::CandidateMaskRows& p, void* stream) {
  if (p.span.rows == 0) return;
  const size_t bytes = size_t(std::max<int64_t>(1, p.bitmap_words())) * 4;
  static const bool raised = [] {
    DSA_CUDA_CHECK(
        cudaFuncSetAttribute(candidate_mask_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaskBitmapBytes));
    return true;
  }();
  (void)raised;
  candidate_mask_kernel<<<grid_of(p.items()), kThreads, bytes, static_cast<cudaStream_t>(stream)>>>(p);
  DSA_CUDA_CHECK(cudaGetLastError());
}

}  // namespace dsa::cuda
