// The SM100 (tcgen05) descriptors of the sparse logits kernel: shared-memory matrix descriptors for
// K-major tiles without swizzle, and the instruction descriptors of kind::f8f6f4 (e4m3) and the
// block-scaled kind::mxf4 (e2m1 with ue8m0 scales per 32). Plain integers, host and device, so
// the tests pin every field on the CPU.
//
// A tile of R rows of kRowBytes bytes (packed e2m1 or e4m3 codes, K-major) is stored as core
// matrices of 8 rows x 16 bytes (128 contiguous bytes): byte (row, b) at
//   (row / 8) * 8 * kRowBytes + (b / 16) * 128 + (row % 8) * 16 + b % 16,
// so core matrices adjacent in K are 128 bytes apart (the leading byte offset) and 8-row groups
// 8 * kRowBytes apart (the stride byte offset). Every instruction reads 32 bytes of K per row
// (K = 64 e2m1 or K = 32 e4m3): step s starts 256 * s bytes into the tile.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

namespace dsa::cuda::layout {

DSA_HD constexpr uint32_t core_matrix_offset(uint32_t row, uint32_t byte, uint32_t row_bytes) {
  return (row / 8) * 8 * row_bytes + (byte / 16) * 128 + (row % 8) * 16 + byte % 16;
}
inline constexpr uint32_t kKStepBytes = 256;  // two core matrices: 32 bytes of K per row

// Shared-memory matrix descriptor (tcgen05): start address >> 4 in bits 0-13, leading byte offset
// >> 4 in 16-29, stride byte offset >> 4 in 32-45, version 1 in bits 46-47 (SM100), base offset
// 0, absolute leading offset mode 0, layout type 0 (no swizzle) in bits 61-63.
DSA_HD constexpr uint64_t smem_descriptor(uint32_t smem_address, uint32_t leading_bytes, uint32_t stride_bytes) {
  return uint64_t((smem_address & 0x3FFFF) >> 4) | uint64_t((leading_bytes & 0x3FFFF) >> 4) << 16 |
         uint64_t((stride_bytes & 0x3FFFF) >> 4) << 32 | uint64_t(1) << 46;
}
DSA_HD constexpr uint64_t kmajor_tile_descriptor(uint32_t tile_address, uint32_t row_bytes, uint32_t k_step) {
  return smem_descriptor(tile_address + k_step * kKStepBytes, 128, 8 * row_bytes);
}
// The scale factors' source for the 32 x 128-bit copy: one atom of 8 rows of 16 bytes after
// another (stride 128 bytes), a single atom along K.
DSA_HD constexpr uint64_t scale_descriptor(uint32_t smem_address) { return smem_descriptor(smem_address, 0, 128); }

// Instruction descriptor of kind::f8f6f4, e4m3 x e4m3 into fp32, both K-major: D format F32 (1) in
// bits 4-5, A and B format E4M3 (0) in 7-9 and 10-12, N >> 3 in 17-22, M >> 4 in 24-28.
DSA_HD constexpr uint32_t f8f6f4_e4m3_idesc(uint32_t m, uint32_t n) {
  return uint32_t(1) << 4 | (n >> 3) << 17 | (m >> 4) << 24;
}

// Instruction descriptor of kind::mxf4 (block-scaled e2m1 x e2m1 into fp32, both K-major, K = 64):
// the B scale id in bits 4-5, A and B format E2M1 (1) in 7-9 and 10-12, N >> 3 in 17-22, scale
// format UE8M0 (1) in bit 23, M >> 4 in 24-28, the A scale id in 29-30, K = 64 (0) in bit 31. The
// ids pick the byte of each 32-bit TMEM scale word where this instruction's two scales start:
// step s of a D = 128 chain reads bytes 2s and 2s + 1 (elements [64s, 64s + 64)).
DSA_HD constexpr uint32_t mxf4_idesc(uint32_t m, uint32_t n, uint32_t scale_id) {
  return (scale_id & 3) << 4 | uint32_t(1) << 7 | uint32_t(1) << 10 | (n >> 3) << 17 | uint32_t(1) << 23 |
         (m >> 4) << 24 | (scale_id & 3) << 29;
}

// Where the 32 x 128-bit scale copy puts token m of 128: TMEM lane m % 32 (of every lane
// quarter), column m / 32; so the staging buffer holds word m at (m % 32) * 4 + m / 32.
DSA_HD constexpr uint32_t scale_staging_index(uint32_t m) { return (m % 32) * 4 + m / 32; }

}  // namespace dsa::cuda::layout
