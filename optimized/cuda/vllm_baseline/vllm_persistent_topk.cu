// vLLM's persistent_topk built from vLLM's own source, for the speed table
// (README.md): csrc/libtorch_stable/topk.cu at 1051220e, which holds that op
// alone (its host function persistent_topk and launch_persistent_topk<512 |
// 1024 | 2048>), with the kernel header persistent_topk.cuh at 05c713c9 and
// its helpers topk_histogram_4096.cuh and topk_histogram_4096_overflow.cuh at
// 068c8751, fetched into the git-ignored third_party/vllm and compiled as they
// are against the stand-ins of shim/. So the dispatch, the launches and the
// kernels are vLLM's: persistent_topk_kernel<k, vec> for at most 32 rows,
// FilteredTopKRaggedTransform for more (and where the cooperative launch
// would not fit). This wrapper only turns device pointers into its tensors.
#include "dsa/optimized/cuda/vllm_topk.hpp"

#include <stdexcept>
#include <string>

// persistent_topk.cuh at 05c713c9 calls topk_histogram_4096::exact_topk_rescan
// (its fallback when a coarse bin overflows the candidate buffer), which at
// 068c8751 lives in topk_histogram_4096_overflow.cuh, not in the
// topk_histogram_4096.cuh it includes: a qualified name in a template must be
// declared before the template, so that header comes first.
#include "../../../third_party/vllm/csrc/libtorch_stable/topk_histogram_4096_overflow.cuh"
#include "../../../third_party/vllm/csrc/libtorch_stable/topk.cu"

namespace dsa::cuda {

bool vllm_persistent_topk_takes(int64_t k) { return k == 512 || k == 1024 || k == 2048; }

// RadixRowState is 3088 bytes a group and launch_persistent_topk runs at most
// num_sms x occupancy groups (2 blocks of 1024 threads an SM: 264 on an H200),
// so 1 MiB holds 339; vLLM checks it and the shim throws if it falls short.
int64_t vllm_persistent_topk_workspace_bytes() { return int64_t(1) << 20; }

void vllm_persistent_topk(const float* logits, int64_t rows, int64_t columns, const int32_t* lengths,
                          int64_t max_seq_len, int32_t* indices, int64_t k, void* workspace, void* stream) {
  if (!vllm_persistent_topk_takes(k)) {
    throw std::invalid_argument("vllm_persistent_topk: vLLM's persistent_topk takes k = 512, 1024 or 2048, not k = " +
                                std::to_string(k));
  }
  using torch::headeronly::ScalarType;
  vllm_shim_stream() = static_cast<cudaStream_t>(stream);
  const torch::stable::Tensor t_logits(const_cast<float*>(logits), {rows, columns}, ScalarType::Float);
  const torch::stable::Tensor t_lengths(const_cast<int32_t*>(lengths), {rows}, ScalarType::Int);
  torch::stable::Tensor t_indices(indices, {rows, k}, ScalarType::Int);
  torch::stable::Tensor t_workspace(workspace, {vllm_persistent_topk_workspace_bytes()}, ScalarType::Byte);
  persistent_topk(t_logits, t_lengths, t_indices, t_workspace, k, max_seq_len);
}

}  // namespace dsa::cuda
