#include "hip_runtime.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <unistd.h>

#include "code_objects.hpp"

namespace dsa::gfx942::detail {
namespace {

struct Probe {
  HipRuntime rt;
  bool ok = false;
  std::string why;
};

template <typename F>
bool bind(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}

Probe probe() {
  Probe p;
  // The ROCm runtime reaches GPUs only through /dev/kfd: without it there is
  // nothing to find, and the library is not loaded at all.
  if (access("/dev/kfd", F_OK) != 0) {
    p.why = "no gfx942 device: /dev/kfd is absent (no AMD GPU on this machine)";
    return p;
  }
  void* lib = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    p.why = "no HIP runtime: libamdhip64 cannot be opened";
    return p;
  }
  HipRuntime& rt = p.rt;
  if (!bind(lib, "hipGetDeviceCount", rt.get_device_count) ||
      // The HIP 5 entry point, whose hipDeviceProp_t is the one of these headers.
      !bind(lib, "hipGetDeviceProperties", rt.get_device_properties) ||
      !bind(lib, "hipGetErrorString", rt.get_error_string) || !bind(lib, "hipModuleLoadData", rt.module_load_data) ||
      !bind(lib, "hipModuleGetFunction", rt.module_get_function) ||
      !bind(lib, "hipModuleLaunchKernel", rt.module_launch_kernel) ||
      !bind(lib, "hipMemsetAsync", rt.memset_async) || !bind(lib, "hipGetLastError", rt.get_last_error) ||
      !bind(lib, "hipMalloc", rt.malloc) || !bind(lib, "hipFree", rt.free) || !bind(lib, "hipMemcpy", rt.memcpy) ||
      !bind(lib, "hipDeviceSynchronize", rt.synchronize) ||
      !bind(lib, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", rt.occupancy)) {
    p.why = "the HIP runtime lacks an entry point the launchers use";
    return p;
  }
  int count = 0;
  if (rt.get_device_count(&count) != hipSuccess || count == 0) {
    p.why = "no gfx942 device: the HIP runtime finds no GPU";
    return p;
  }
  hipDeviceProp_t props{};
  if (rt.get_device_properties(&props, 0) != hipSuccess) {
    p.why = "no gfx942 device: the device's properties cannot be read";
    return p;
  }
  const std::string arch = props.gcnArchName;
  if (arch.rfind("gfx942", 0) != 0) {
    p.why = fmt::format("no gfx942 device: device 0 is {}", arch);
    return p;
  }
  rt.compute_units = props.multiProcessorCount;
  p.ok = true;
  return p;
}

}  // namespace

const HipRuntime* runtime(std::string* why) {
  static const Probe p = probe();
  if (!p.ok && why) *why = p.why;
  return p.ok ? &p.rt : nullptr;
}

// The kernel `symbol` of a code object of this build, loaded once.
std::string function(const HipRuntime& rt, std::string_view code_object_name, const char* symbol, hipFunction_t* fn) {
  const std::span<const uint8_t> image = code_object(code_object_name);
  if (image.empty()) return fmt::format("this build holds no code object {}", code_object_name);
  static std::mutex mutex;
  static std::map<std::string, hipFunction_t> functions;
  const std::lock_guard<std::mutex> lock(mutex);
  const std::string key = fmt::format("{}/{}", code_object_name, symbol);
  auto it = functions.find(key);
  if (it == functions.end()) {
    hipModule_t module = nullptr;
    hipError_t e = rt.module_load_data(&module, image.data());
    if (e == hipSuccess) e = rt.module_get_function(fn, module, symbol);
    if (e != hipSuccess) return fmt::format("{}: {}", key, rt.get_error_string(e));
    it = functions.emplace(key, *fn).first;
  }
  *fn = it->second;
  return {};
}

std::string launch(std::string_view code_object_name, const char* symbol, const void* arg, size_t arg_bytes,
                   uint32_t grid_x, uint32_t grid_y, uint32_t block_x, hipStream_t stream, uint32_t dynamic_lds) {
  std::string why;
  const HipRuntime* rt = runtime(&why);
  if (!rt) return why;
  hipFunction_t fn = nullptr;
  if (why = function(*rt, code_object_name, symbol, &fn); !why.empty()) return why;
  size_t size = arg_bytes;
  void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, const_cast<void*>(arg), HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                    HIP_LAUNCH_PARAM_END};
  const hipError_t e =
      rt->module_launch_kernel(fn, grid_x, grid_y, 1, block_x, 1, 1, dynamic_lds, stream, nullptr, config);
  if (e != hipSuccess) return fmt::format("{}: {}", symbol, rt->get_error_string(e));
  return {};
}

std::string resident_blocks(std::string_view code_object_name, const char* symbol, uint32_t block_x, int* blocks) {
  std::string why;
  const HipRuntime* rt = runtime(&why);
  if (!rt) return why;
  hipFunction_t fn = nullptr;
  if (why = function(*rt, code_object_name, symbol, &fn); !why.empty()) return why;
  int per_cu = 0;
  if (const hipError_t e = rt->occupancy(&per_cu, fn, int(block_x), 0); e != hipSuccess)
    return fmt::format("{}: occupancy: {}", symbol, rt->get_error_string(e));
  *blocks = std::max(1, per_cu * rt->compute_units);
  return {};
}

}  // namespace dsa::gfx942::detail
