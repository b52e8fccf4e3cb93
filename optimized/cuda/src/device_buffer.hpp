// A typed device allocation that frees itself, with checked copies in and out.
#pragma once

#include <cuda_runtime.h>

#include <span>
#include <utility>

#include "cuda_check.hpp"

namespace dsa::cuda {

template <class T>
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count > 0) DSA_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  // A device copy of host data.
  explicit DeviceBuffer(std::span<const T> host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(count_, o.count_);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }

  void upload(std::span<const T> host) {
    if (host.size() != count_) throw CudaError("DeviceBuffer::upload: size mismatch");
    if (count_ > 0) DSA_CUDA_CHECK(cudaMemcpy(data_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  void download(std::span<T> host) const {
    if (host.size() != count_) throw CudaError("DeviceBuffer::download: size mismatch");
    if (count_ > 0) DSA_CUDA_CHECK(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
  }
  void zero() {
    if (count_ > 0) DSA_CUDA_CHECK(cudaMemset(data_, 0, count_ * sizeof(T)));
  }
  T* data() const { return data_; }
  size_t size() const { return count_; }

private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace dsa::cuda
