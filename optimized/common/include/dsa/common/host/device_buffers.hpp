// The buffer half of a SelectionOps backend (selection_ops.hpp), written once
// for every vendor: the vendor's DeviceBuffer<T> copies host data in when it is
// made, clears itself (zero) and copies out (download). The CUDA and HIP
// backends then differ only in their launches.
#pragma once

#include <cstddef>
#include <span>

namespace dsa::common::host {

template <template <class> class DeviceBuffer>
struct DeviceBuffers {
  template <class T>
  using Buffer = DeviceBuffer<T>;

  template <class T>
  Buffer<T> upload(std::span<const T> host) {
    return Buffer<T>(host);
  }
  template <class T>
  Buffer<T> zeros(size_t n) {
    Buffer<T> b(n);
    b.zero();
    return b;
  }
  template <class T>
  void download(const Buffer<T>& b, std::span<T> host) {
    b.download(host);
  }
};

}  // namespace dsa::common::host
