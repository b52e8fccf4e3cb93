// vLLM's top_k_per_row_decode built from vLLM's own source, for the speed
// table and the fuzzer (README.md): csrc/libtorch_stable/sampler.cu at
// 030ea52e (the commit SPEC 10 names), fetched into the git-ignored
// third_party/vllm and compiled as it is against the stand-ins of shim/. This
// wrapper only turns device pointers into its tensors.
#include "dsa/optimized/cuda/vllm_topk.hpp"

#include "../../../third_party/vllm/csrc/libtorch_stable/sampler.cu"

namespace dsa::cuda {

void vllm_top_k_per_row_decode(const float* logits, int64_t rows, int64_t columns, int64_t next_n,
                               const int32_t* seq_lens, bool seq_lens_2d, int32_t* indices, int64_t k,
                               void* stream) {
  using torch::headeronly::ScalarType;
  vllm_shim_stream() = static_cast<cudaStream_t>(stream);
  const torch::stable::Tensor t_logits(const_cast<float*>(logits), {rows, columns}, ScalarType::Float);
  const int64_t batch = rows / next_n;
  const torch::stable::Tensor t_lens(const_cast<int32_t*>(seq_lens),
                                     seq_lens_2d ? std::vector<int64_t>{batch, next_n} : std::vector<int64_t>{batch},
                                     ScalarType::Int);
  torch::stable::Tensor t_indices(indices, {rows, k}, ScalarType::Int);
  top_k_per_row_decode(t_logits, next_n, t_lens, t_indices, rows, columns, 1, k);
}

}  // namespace dsa::cuda
