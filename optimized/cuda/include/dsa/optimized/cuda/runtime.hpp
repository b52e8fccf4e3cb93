// The CUDA device as the implementations see it, and CUDA's errors as exceptions. Plain C++: the
// users of this header need no CUDA header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace dsa::cuda {

// A CUDA call failed (a launch, a copy, an allocation): the message names the call and CUDA's
// error. Distinct from dsa::Unsupported, which is a call the kernel refuses before any work.
class CudaError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct DeviceInfo {
  bool present = false;    // a device and a driver that can run it
  std::string why_absent;  // when not present: CUDA's answer
  std::string name;
  int major = 0, minor = 0;
  int sm_count = 0;
  size_t smem_per_block_optin = 0;
  size_t l2_bytes = 0;
  int driver_version = 0;   // e.g. 13000
  int runtime_version = 0;
};

// Device 0, queried once per process.
const DeviceInfo& device_info();
// A device of compute capability 9.0 (H100, H200), on which the sm_90a kernels run.
bool sm90_available();
// A device of compute capability 10.0 (B200), on which the sm_100a kernels run. Never true here.
bool sm100_available();
// Either: the plain CUDA kernels (built for sm_90a and sm_100a) run on both.
bool sparse_select_available();

}  // namespace dsa::cuda
