// Host launcher of the candidate expansion (kernels/sm100_expand_kernel.cuh). Plain CUDA: it runs
// on any device the binary has code for (sm_90a, sm_100a).
#include <cuda_runtime.h>

#include <string>

#include "cuda_check.hpp"
#include "dsa/error.hpp"
#include "dsa/optimized/cuda/sm100_sparse.hpp"
#include "dsa_cuda/kernels/sm100_expand_kernel.cuh"

namespace dsa::cuda {

static_assert(kExpandMaxSlots == kernels::kExpandKeys);

void launch_expand_candidates(const SparseRows& shape, const int32_t* candidates, const int32_t* row_ks,
                              const int32_t* row_ke, int32_t* sparse_ids, int32_t* end, void* stream) {
  const std::string what = "cuda candidate expansion: ";
  if (shape.sparse_block_kv != 8 && shape.sparse_block_kv != 16)
    throw Unsupported(what + "sparse blocks of 8 or 16 entries, got " + std::to_string(shape.sparse_block_kv));
  if (shape.block_size < 1 || shape.block_size % shape.sparse_block_kv != 0)
    throw Unsupported(what + "candidate blocks of " + std::to_string(shape.block_size) + " entries are not sparse blocks of " +
                      std::to_string(shape.sparse_block_kv));
  if (shape.slots < 1 || shape.slots > kExpandMaxSlots)
    throw Unsupported(what + "takes 1 to " + std::to_string(kExpandMaxSlots) + " candidate blocks per row, got " +
                      std::to_string(shape.slots));
  if (shape.rows > INT32_MAX) throw Unsupported(what + "at most 2^31 - 1 rows");
  if (shape.rows == 0) return;
  kernels::ExpandParams p;
  p.candidates = candidates, p.row_ks = row_ks, p.row_ke = row_ke, p.sparse_ids = sparse_ids, p.end = end;
  p.slots = shape.slots, p.ratio = shape.block_size / shape.sparse_block_kv, p.sbk = shape.sparse_block_kv;
  kernels::sm100_expand_candidates<<<unsigned(shape.rows), kernels::kExpandThreads, 0,
                                     static_cast<cudaStream_t>(stream)>>>(p);
  DSA_CUDA_CHECK(cudaGetLastError());
}

}  // namespace dsa::cuda
