// Host launcher of the SM100 sparse logits kernel (kernels/sm100_sparse_logits_kernel.cuh): the
// checks of each launch and the dispatch onto its instantiations (H 32/64, D 64/128, MXFP4/e4m3).
#include <cuda_runtime.h>

#include <string>

#include "cuda_check.hpp"
#include "dsa/error.hpp"
#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/sm100_sparse.hpp"
#include "dsa_cuda/kernels/sm100_sparse_logits_kernel.cuh"

namespace dsa::cuda {
namespace {

void refuse(const std::string& why) { throw Unsupported("cuda_sm100_sparse_logits: " + why); }

template <int kHeads, int kRowBytes, bool kMxfp4>
void launch(const kernels::SparseLogitsParams& p, const DeviceInfo& d, cudaStream_t stream) {
  const auto kernel = kernels::sm100_sparse_logits_kernel<kHeads, kRowBytes, kMxfp4>;
  const uint32_t smem = kernels::SparseSmem<kHeads, kRowBytes>::kTotal;
  DSA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  kernel<<<d.sm_count, kernels::kSparseThreads, smem, stream>>>(p);
  DSA_CUDA_CHECK(cudaGetLastError());
}

template <int kHeads>
void dispatch(const kernels::SparseLogitsParams& p, int32_t head_dim, bool mxfp4, const DeviceInfo& d,
              cudaStream_t stream) {
  if (mxfp4) {
    if (head_dim == 128) launch<kHeads, 64, true>(p, d, stream);
    else launch<kHeads, 32, true>(p, d, stream);
  } else {
    if (head_dim == 128) launch<kHeads, 128, false>(p, d, stream);
    else launch<kHeads, 64, false>(p, d, stream);
  }
}

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

void launch_sm100_sparse_logits(const SparseLogitsStep& step, const SparseRows& shape, const int32_t* sparse_ids,
                                const int32_t* end, uint16_t* logits, void* stream) {
  const DeviceInfo& d = device_info();
  if (!d.present) refuse("no CUDA device (" + d.why_absent + ")");
  if (d.major != 10 || d.minor != 0)
    refuse("needs an sm_100 device (B200), found " + d.name + " (sm_" + std::to_string(d.major) +
           std::to_string(d.minor) + "): the kernel is sm_100a code");
  if (step.heads != 32 && step.heads != 64) refuse("takes H 32 or 64, got " + std::to_string(step.heads));
  if (step.head_dim != 64 && step.head_dim != 128) refuse("takes D 64 or 128, got " + std::to_string(step.head_dim));
  const bool mxfp4 = step.element == ElementFormat::mxfp4;
  if (!mxfp4 && step.element != ElementFormat::e4m3fn)
    refuse("reads an MXFP4 or e4m3fn cache, not " + std::string(to_string(step.element)));
  if (shape.sparse_block_kv != 8 && shape.sparse_block_kv != 16)
    refuse("sparse blocks of 8 or 16 entries, got " + std::to_string(shape.sparse_block_kv));
  if (step.block_size < 1 || step.block_size % shape.sparse_block_kv != 0)
    refuse("cache pages of " + std::to_string(step.block_size) + " entries are not a multiple of " +
           std::to_string(shape.sparse_block_kv));
  if (!aligned(step.q) || !aligned(step.cache) || (mxfp4 && step.q_scales == nullptr))
    refuse("q and the cache must be 16-byte aligned (and MXFP4 needs q_scales)");
  if (shape.rows != step.rows) refuse("sparse rows and step rows differ");
  if (step.rows == 0 || shape.num_sparse() == 0) return;
  const int32_t row_bytes = mxfp4 ? step.head_dim / 2 : step.head_dim;
  kernels::SparseLogitsParams p;
  p.rows = step.rows;
  p.next_n = step.next_n;
  p.q = step.q;
  p.q_scales = reinterpret_cast<const uint32_t*>(step.q_scales);
  p.weights = reinterpret_cast<const __nv_bfloat16*>(step.weights);
  p.block_table = step.block_table;
  p.max_pages = step.max_pages;
  p.cache = step.cache;
  p.page_bytes = int64_t(step.block_size) * (row_bytes + 4);
  p.block_size = step.block_size;
  p.sparse_ids = sparse_ids;
  p.end = end;
  p.num_sparse = shape.num_sparse();
  p.sbk = shape.sparse_block_kv;
  p.width = shape.width();
  p.units_per_row = (shape.width() + kernels::kSparseUnit - 1) / kernels::kSparseUnit;
  p.logits = reinterpret_cast<__nv_bfloat16*>(logits);
  const auto s = static_cast<cudaStream_t>(stream);
  if (step.heads == 64) dispatch<64>(p, step.head_dim, mxfp4, d, s);
  else dispatch<32>(p, step.head_dim, mxfp4, d, s);
}

}  // namespace dsa::cuda
