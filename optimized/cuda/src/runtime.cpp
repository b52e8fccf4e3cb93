// Device queries, once per process.
#include "dsa/optimized/cuda/runtime.hpp"

#include <cuda_runtime.h>

#include <atomic>

#include "dsa/error.hpp"
#include "dsa/optimized/cuda/sm90_logits.hpp"

namespace dsa::cuda {

namespace {
std::atomic<int32_t> grid_limit{0};
std::atomic<bool> candidate_two_kernels{false};
std::atomic<int32_t> page_base{0};
}  // namespace

void set_sm90_page_base(int32_t first_page) {
  if (first_page < 0)
    throw InvalidInput("first_page", "must be 0 (the step's own cache) or positive, got " + std::to_string(first_page));
  page_base = first_page;
}
int32_t sm90_page_base() { return page_base; }

void set_sm90_candidate_two_kernels(bool on) { candidate_two_kernels = on; }
bool sm90_candidate_two_kernels_forced() { return candidate_two_kernels; }

void set_sm90_grid_limit(int32_t blocks) {
  if (blocks < 0) throw InvalidInput("blocks", "must be 0 (one per SM) or positive, got " + std::to_string(blocks));
  grid_limit = blocks;
}

namespace launch {
int32_t grid_blocks(const DeviceInfo& d) {
  const int32_t limit = grid_limit;
  return limit > 0 && limit < d.sm_count ? limit : d.sm_count;
}
}  // namespace launch

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

bool sm100_available() {
  const DeviceInfo& d = device_info();
  return d.present && d.major == 10 && d.minor == 0;
}

bool sparse_select_available() { return sm90_available() || sm100_available(); }

}  // namespace dsa::cuda
