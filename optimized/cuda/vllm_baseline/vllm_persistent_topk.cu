// vLLM's persistent_topk built from vLLM's own source, for the speed table
// (README.md): the kernel headers csrc/persistent_topk*.cuh and the host
// function persistent_topk of csrc/topk.cu at 02bc7c5f (the version the
// search index holds; it takes k = 2048 only), fetched into the git-ignored
// third_party/vllm and compiled as they are. The host function comes alone
// (topk.cu's other ops need PyTorch and FlashInfer): the build includes it
// after the few stand-ins below (a tensor of a device pointer, TORCH_CHECK,
// the current stream), so the launch and the kernels are vLLM's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../../../third_party/vllm/csrc/persistent_topk.cuh"
#include "dsa/optimized/cuda/vllm_topk.hpp"

namespace vllm_persistent_shim {

enum class Dtype { Float32, Int32, UInt8 };

class Tensor {
public:
  Tensor(void* data, std::vector<int64_t> sizes, Dtype dtype) : data_(data), sizes_(std::move(sizes)), dtype_(dtype) {}
  bool is_cuda() const { return true; }
  Dtype dtype() const { return dtype_; }
  int64_t dim() const { return int64_t(sizes_.size()); }
  int64_t size(int64_t d) const { return sizes_[size_t(d)]; }
  template <class T>
  T* data_ptr() const {
    return static_cast<T*>(data_);
  }

private:
  void* data_;
  std::vector<int64_t> sizes_;
  Dtype dtype_;
};

inline cudaStream_t& current_stream() {
  static cudaStream_t s = nullptr;
  return s;
}

}  // namespace vllm_persistent_shim

namespace torch {
using Tensor = vllm_persistent_shim::Tensor;
inline constexpr auto kFloat32 = vllm_persistent_shim::Dtype::Float32;
inline constexpr auto kInt32 = vllm_persistent_shim::Dtype::Int32;
inline constexpr auto kUInt8 = vllm_persistent_shim::Dtype::UInt8;
}  // namespace torch
namespace at::cuda {
inline cudaStream_t getCurrentCUDAStream() { return vllm_persistent_shim::current_stream(); }
}  // namespace at::cuda

#define TORCH_CHECK(cond, ...)                                             \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "vllm persistent shim: check failed: %s\n", #cond); \
      std::abort();                                                        \
    }                                                                      \
  } while (0)

namespace vllm_persistent_shim {
#include "../../../third_party/vllm/csrc/topk_cu_persistent_topk.inc"
}  // namespace vllm_persistent_shim

namespace dsa::cuda {

int64_t vllm_persistent_topk_k() { return vllm::persistent::TopK; }
int64_t vllm_persistent_topk_workspace_bytes() { return int64_t(1) << 20; }

void vllm_persistent_topk(const float* logits, int64_t rows, int64_t columns, const int32_t* lengths,
                          int32_t* indices, int64_t k, void* workspace, void* stream) {
  using vllm_persistent_shim::Dtype;
  using vllm_persistent_shim::Tensor;
  vllm_persistent_shim::current_stream() = static_cast<cudaStream_t>(stream);
  const Tensor t_logits(const_cast<float*>(logits), {rows, columns}, Dtype::Float32);
  const Tensor t_lengths(const_cast<int32_t*>(lengths), {rows}, Dtype::Int32);
  Tensor t_out(indices, {rows, k}, Dtype::Int32);
  Tensor t_ws(workspace, {vllm_persistent_topk_workspace_bytes()}, Dtype::UInt8);
  vllm_persistent_shim::persistent_topk(t_logits, t_lengths, t_out, t_ws, k);
}

}  // namespace dsa::cuda
