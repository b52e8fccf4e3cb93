// Device memory for the IndexerOps adapter and the selection backend: n T,
// allocated and freed through the runtime opened at run time; failures throw
// Unsupported with the HIP error (a device problem, not a wrong answer).
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "dsa/error.hpp"
#include "hip_runtime.hpp"

namespace dsa::gfx942::detail {

inline void require_hip(const HipRuntime& rt, hipError_t e, const char* what) {
  if (e != hipSuccess) throw Unsupported(fmt::format("gfx942: {}: {}", what, rt.get_error_string(e)));
}

// The runtime, or Unsupported with the reason there is none.
inline const HipRuntime& device() {
  std::string why;
  const HipRuntime* rt = runtime(&why);
  if (!rt) throw Unsupported("gfx942: " + why);
  return *rt;
}

template <typename T>
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) : rt_(&device()), n_(n) {
    require_hip(*rt_, rt_->malloc(&ptr_, n_ ? n_ * sizeof(T) : 16), "hipMalloc");
  }
  explicit DeviceBuffer(std::span<const T> host) : DeviceBuffer(host.size()) {
    if (n_) require_hip(*rt_, rt_->memcpy(ptr_, host.data(), n_ * sizeof(T), hipMemcpyHostToDevice), "hipMemcpy to device");
  }
  ~DeviceBuffer() {
    if (ptr_) (void)rt_->free(ptr_);  // a failed free after a failed launch changes nothing here
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    DeviceBuffer(std::move(o)).swap(*this);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() const { return static_cast<T*>(ptr_); }
  size_t size() const { return n_; }
  void zero() {
    if (n_) require_hip(*rt_, rt_->memset_async(ptr_, 0, n_ * sizeof(T), nullptr), "hipMemsetAsync");
  }
  void download(std::span<T> host) const {
    if (n_) require_hip(*rt_, rt_->memcpy(host.data(), ptr_, n_ * sizeof(T), hipMemcpyDeviceToHost), "hipMemcpy to host");
  }

private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(rt_, o.rt_);
    std::swap(n_, o.n_);
    std::swap(ptr_, o.ptr_);
  }
  const HipRuntime* rt_ = nullptr;
  size_t n_ = 0;
  void* ptr_ = nullptr;
};

}  // namespace dsa::gfx942::detail
