// Stand-in for the slice of PyTorch's stable C++ API that vLLM's sampler.cu
// and topk.cu use (see ../cuda_compat.h): a tensor is a contiguous device
// pointer with a shape, `empty` takes device memory from a small cache (as
// PyTorch's caching allocator would, so a timed call pays no cudaMalloc), the
// current stream is the one the benchmark sets, and the device properties are
// read once per device (as PyTorch caches them). A failed check throws with
// vLLM's own message, so a caller sees what vLLM refused.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace torch::headeronly {
enum class ScalarType { Float, Int, Byte };
}

namespace torch::stable {

struct Device {
  int index = 0;
};

class Tensor {
public:
  Tensor() = default;
  Tensor(void* data, std::vector<int64_t> sizes, headeronly::ScalarType type, std::shared_ptr<void> owner = nullptr)
      : data_(data), sizes_(std::move(sizes)), type_(type), owner_(std::move(owner)) {}
  int64_t size(int64_t d) const { return sizes_[size_t(d < 0 ? d + int64_t(sizes_.size()) : d)]; }
  int64_t dim() const { return int64_t(sizes_.size()); }
  // Contiguous (row-major) strides: every tensor here is one.
  int64_t stride(int64_t d) const {
    int64_t s = 1;
    for (size_t i = size_t(d < 0 ? d + dim() : d) + 1; i < sizes_.size(); ++i) s *= sizes_[i];
    return s;
  }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes_) n *= s;
    return n;
  }
  template <class T>
  const T* const_data_ptr() const {
    return static_cast<const T*>(data_);
  }
  template <class T>
  T* mutable_data_ptr() const {
    return static_cast<T*>(data_);
  }
  int get_device_index() const { return 0; }
  bool is_contiguous() const { return true; }
  bool is_cuda() const { return true; }
  headeronly::ScalarType scalar_type() const { return type_; }
  Device device() const { return {}; }

private:
  void* data_ = nullptr;
  std::vector<int64_t> sizes_;
  headeronly::ScalarType type_ = headeronly::ScalarType::Float;
  std::shared_ptr<void> owner_;
};

namespace accelerator {
struct DeviceGuard {
  explicit DeviceGuard(int) {}
};
}  // namespace accelerator

// Freed blocks by size, reused by the next `empty` of that size.
inline std::multimap<size_t, void*>& free_blocks() {
  static std::multimap<size_t, void*> blocks;
  return blocks;
}

inline Tensor empty(std::initializer_list<int64_t> sizes, headeronly::ScalarType type, std::nullopt_t, Device) {
  size_t bytes = 4;
  for (int64_t s : sizes) bytes *= size_t(s);
  void* p = nullptr;
  auto& blocks = free_blocks();
  if (auto it = blocks.find(bytes); it != blocks.end()) {
    p = it->second;
    blocks.erase(it);
  } else if (cudaMalloc(&p, bytes) != cudaSuccess) {
    std::fprintf(stderr, "vllm shim: cudaMalloc of %zu bytes failed\n", bytes);
    std::abort();
  }
  std::shared_ptr<void> owner(p, [bytes](void* q) { free_blocks().emplace(bytes, q); });
  return Tensor(p, std::vector<int64_t>(sizes), type, owner);
}

}  // namespace torch::stable

inline cudaStream_t& vllm_shim_stream() {
  static cudaStream_t stream = nullptr;
  return stream;
}
inline cudaStream_t get_current_cuda_stream() { return vllm_shim_stream(); }

// The current device's properties, read on first use per device.
inline const cudaDeviceProp* get_device_prop() {
  static std::map<int, cudaDeviceProp> props;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) throw std::runtime_error("vllm shim: cudaGetDevice failed");
  auto [it, fresh] = props.try_emplace(device);
  if (fresh && cudaGetDeviceProperties(&it->second, device) != cudaSuccess) {
    props.erase(it);
    throw std::runtime_error("vllm shim: cudaGetDeviceProperties failed");
  }
  return &it->second;
}

template <class... Parts>
std::string vllm_shim_message(const Parts&... parts) {
  std::ostringstream s;
  ((s << parts), ...);
  return s.str();
}

#define STD_TORCH_CHECK(cond, ...)                                                                 \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      throw std::runtime_error(std::string("vllm: check failed: " #cond ": ") +                   \
                               vllm_shim_message(__VA_ARGS__));                                    \
    }                                                                                              \
  } while (0)
