// Shared-memory matrix descriptors of wgmma for K-major fp8 tiles as the copy engine writes them:
// rows of D bytes (D = 128 or 64), swizzled in atoms of 8 rows (SWIZZLE_128B / SWIZZLE_64B), each
// tile 1024-byte aligned. One k32 step is the same descriptor with its start moved 32 bytes on.
#pragma once

#include <cstdint>

#include "dsa_cuda/common/ptx.cuh"

namespace dsa::cuda::layout {

// Bytes of one row of the tile: the head dimension in fp8 codes.
template <int kRowBytes>
struct KMajorSwizzle {
  static_assert(kRowBytes == 128 || kRowBytes == 64, "rows of 128 or 64 bytes");
  // The descriptor's layout-type field (bits 62-63): 1 = 128-byte swizzle, 2 = 64-byte swizzle.
  static constexpr uint64_t kLayoutType = kRowBytes == 128 ? 1 : 2;
  // Between two atoms of 8 rows (the "stride byte offset"); the leading offset is unused when one
  // row of K fits in the swizzle width.
  static constexpr uint32_t kAtomBytes = 8 * kRowBytes;
  static constexpr uint32_t kAlignment = 1024;
};

// The descriptor of the tile at shared-memory address `address`.
template <int kRowBytes>
__device__ __forceinline__ uint64_t kmajor_descriptor(uint32_t address) {
  using L = KMajorSwizzle<kRowBytes>;
  uint64_t desc = uint64_t((address & 0x3FFFF) >> 4);
  desc |= uint64_t(L::kAtomBytes >> 4) << 32;
  desc |= L::kLayoutType << 62;
  return desc;
}

template <int kRowBytes>
__device__ __forceinline__ uint64_t kmajor_descriptor(const void* tile, uint32_t k_byte_offset) {
  return kmajor_descriptor<kRowBytes>(ptx::smem_addr(tile) + k_byte_offset);
}

// The descriptor of k32 step s from step 0's: its start 32 s bytes on, i.e. 2 s in the start field
// (16-byte units). The field cannot carry into the next one: it holds address bits 4-17, and every
// shared-memory address, a tile's last step included, is below 2^18.
__device__ __forceinline__ constexpr uint64_t k32_step(int s) { return uint64_t(s) * (32 >> 4); }

}  // namespace dsa::cuda::layout
