// CUDA error handling of the host code: every call is checked, a failure is a CudaError naming it.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "dsa/optimized/cuda/runtime.hpp"

namespace dsa::cuda {

inline void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  throw CudaError(std::string(call) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

}  // namespace dsa::cuda

#define DSA_CUDA_CHECK(call) ::dsa::cuda::check((call), #call)
