// Tensor maps of the copy engine, encoded through the driver's entry point (no link to libcuda).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <initializer_list>

namespace dsa::cuda {

// dims and box in elements (innermost first), strides in bytes for dims 1.. (rank - 1 of them).
CUtensorMap encode_tensor_map(const char* what, CUtensorMapDataType type, const void* address, std::initializer_list<uint64_t> dims,
                              std::initializer_list<uint64_t> strides, std::initializer_list<uint32_t> box,
                              CUtensorMapSwizzle swizzle);

}  // namespace dsa::cuda
