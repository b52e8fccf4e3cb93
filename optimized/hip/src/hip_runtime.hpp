// The HIP runtime, opened at run time (dlopen of libamdhip64): the launchers
// compile against the HIP headers only and every binary runs without it. A
// process without a gfx942 device never loads the library past the probe.
#pragma once

#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace dsa::gfx942::detail {

struct HipRuntime {
  decltype(&hipGetDeviceCount) get_device_count = nullptr;
  decltype(&hipGetDeviceProperties) get_device_properties = nullptr;
  decltype(&hipGetErrorString) get_error_string = nullptr;
  decltype(&hipModuleLoadData) module_load_data = nullptr;
  decltype(&hipModuleGetFunction) module_get_function = nullptr;
  decltype(&hipModuleLaunchKernel) module_launch_kernel = nullptr;
  decltype(&hipMemsetAsync) memset_async = nullptr;
  decltype(&hipGetLastError) get_last_error = nullptr;
  hipError_t (*malloc)(void**, size_t) = nullptr;  // hipMalloc (overloaded in C++: the C entry point)
  decltype(&hipFree) free = nullptr;
  decltype(&hipMemcpy) memcpy = nullptr;
  decltype(&hipDeviceSynchronize) synchronize = nullptr;
  decltype(&hipModuleOccupancyMaxActiveBlocksPerMultiprocessor) occupancy = nullptr;
  int compute_units = 0;  // device 0's
};

// The runtime when a gfx942 device is present, else null with the reason.
const HipRuntime* runtime(std::string* why);

// Launches kernel `symbol` of code object `code_object` with one by-value
// argument of `arg_bytes` bytes and `dynamic_lds` bytes of dynamic LDS.
// Returns an empty string or the failure.
std::string launch(std::string_view code_object, const char* symbol, const void* arg, size_t arg_bytes,
                   uint32_t grid_x, uint32_t grid_y, uint32_t block_x, hipStream_t stream, uint32_t dynamic_lds = 0);

// The blocks of `block_x` threads of kernel `symbol` the whole device holds at
// once (the persistent grids' size). Returns an empty string or the failure.
std::string resident_blocks(std::string_view code_object, const char* symbol, uint32_t block_x, int* blocks);

}  // namespace dsa::gfx942::detail
