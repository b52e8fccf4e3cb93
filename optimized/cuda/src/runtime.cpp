// Device queries, once per process.
#include "dsa/optimized/cuda/runtime.hpp"

#include <cuda_runtime.h>

namespace dsa::cuda {

const DeviceInfo& device_info() {
  static const DeviceInfo info = [] {
    DeviceInfo d;
    cudaRuntimeGetVersion(&d.runtime_version);
    cudaDriverGetVersion(&d.driver_version);
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
      d.why_absent = status != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status)
                                           : "no CUDA device";
      cudaGetLastError();  // leave no sticky error behind
      return d;
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
      d.why_absent = "cudaGetDeviceProperties failed";
      cudaGetLastError();
      return d;
    }
    d.present = true;
    d.name = prop.name;
    d.major = prop.major;
    d.minor = prop.minor;
    d.sm_count = prop.multiProcessorCount;
    d.smem_per_block_optin = prop.sharedMemPerBlockOptin;
    d.l2_bytes = size_t(prop.l2CacheSize);
    return d;
  }();
  return info;
}

bool sm90_available() {
  const DeviceInfo& d = device_info();
  return d.present && d.major == 9 && d.minor == 0;
}

}  // namespace dsa::cuda
