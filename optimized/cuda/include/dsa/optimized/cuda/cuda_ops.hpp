// The CUDA kernels as implementations under test (IndexerOps): the adapter copies a call's
// inputs to the device, copies the caller's (poisoned) output buffers there too, launches, and
// copies the outputs back, so "every entry written" judges what the kernel wrote.
#pragma once

#include <memory>

#include "dsa/indexer_ops.hpp"
#include "dsa/optimized/cuda/sm90_logits.hpp"

namespace dsa::cuda {

// cuda_sm90 / cuda_sm90_accurate: dense paged logits (clean: -inf past each row's length, as the
// reference), compact candidate logits and prefill logits on an sm_90 GPU, under the profile
// profile_of(variant). Other ops and profiles throw Unsupported, as does a machine without one.
std::unique_ptr<IndexerOps> make_cuda_sm90_ops(Sm90Variant variant);

// The SM100 sparse backend's kernels (sm100_sparse.hpp) as two implementations: `select` (the
// candidate expansion and the top-k over `end`: plain CUDA, on an sm_90 or sm_100 GPU) and `logits`
// (the bf16 sparse logits on block-scaled tcgen05, deepgemm_sm100_bf16: only on an sm_100 GPU).
enum class Sm100SparseKernels : uint8_t { select, logits };
std::unique_ptr<IndexerOps> make_cuda_sm100_sparse_ops(Sm100SparseKernels kernels);

}  // namespace dsa::cuda
