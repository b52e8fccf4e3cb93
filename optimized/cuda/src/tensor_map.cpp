#include "tensor_map.hpp"

#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <string>
#include <vector>

#include "cuda_check.hpp"

namespace dsa::cuda {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_function() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    DSA_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || f == nullptr)
      throw CudaError("cuTensorMapEncodeTiled: not found in the driver");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

}  // namespace

CUtensorMap encode_tensor_map(const char* what, CUtensorMapDataType type, const void* address, std::initializer_list<uint64_t> dims,
                              std::initializer_list<uint64_t> strides, std::initializer_list<uint32_t> box,
                              CUtensorMapSwizzle swizzle) {
  CUtensorMap map{};
  const std::vector<cuuint64_t> d(dims.begin(), dims.end()), s(strides.begin(), strides.end());
  const std::vector<cuuint32_t> b(box.begin(), box.end()), e(d.size(), 1);
  const CUresult r = encode_function()(&map, type, cuuint32_t(d.size()), const_cast<void*>(address), d.data(),
                                       s.empty() ? nullptr : s.data(), b.data(), e.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
                                       swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::string shape;
    for (size_t i = 0; i < d.size(); ++i) shape += (i ? " x " : "") + std::to_string(d[i]);
    throw CudaError(std::string("cuTensorMapEncodeTiled (") + what + ", dims " + shape + ") failed with CUresult " +
                    std::to_string(int(r)));
  }
  return map;
}

}  // namespace dsa::cuda
