// Device copies of host tensors for the IndexerOps adapter: allocated and
// freed through the runtime opened at run time; failures throw Unsupported
// with the HIP error (a device problem, not a wrong answer).
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <span>
#include <string>

#include "dsa/error.hpp"
#include "hip_runtime.hpp"

namespace dsa::gfx942::detail {

inline void require_hip(const HipRuntime& rt, hipError_t e, const char* what) {
  if (e != hipSuccess) throw Unsupported(fmt::format("gfx942: {}: {}", what, rt.get_error_string(e)));
}

class DeviceBuffer {
public:
  DeviceBuffer(const HipRuntime& rt, size_t bytes) : rt_(rt), bytes_(bytes) {
    require_hip(rt_, rt_.malloc(&ptr_, bytes_ ? bytes_ : 16), "hipMalloc");
  }
  template <typename T>
  DeviceBuffer(const HipRuntime& rt, std::span<const T> host) : DeviceBuffer(rt, host.size_bytes()) {
    if (bytes_) require_hip(rt_, rt_.memcpy(ptr_, host.data(), bytes_, hipMemcpyHostToDevice), "hipMemcpy to device");
  }
  ~DeviceBuffer() { (void)rt_.free(ptr_); }  // a failed free after a failed launch changes nothing here
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  template <typename T>
  void copy_to(std::span<T> host) const {
    if (bytes_) require_hip(rt_, rt_.memcpy(host.data(), ptr_, bytes_, hipMemcpyDeviceToHost), "hipMemcpy to host");
  }

private:
  const HipRuntime& rt_;
  size_t bytes_ = 0;
  void* ptr_ = nullptr;
};

}  // namespace dsa::gfx942::detail
