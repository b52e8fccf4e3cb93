// What a gfx942 wave is: 64 lanes, e4m3fnuz operands, and the one cross-lane
// move that reaches lane distance 32 (ds_bpermute through the LDS crossbar;
// DPP rows and ds_swizzle stop at 16 and 32 lanes).
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>

namespace dsa::gfx942 {

inline constexpr int kWaveSize = 64;

__device__ inline int lane_id() { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }

// The value `v` of lane (lane_id() ^ distance).
__device__ inline float shuffle_xor(float v, int distance) {
  const int source_byte = (lane_id() ^ distance) << 2;
  return __int_as_float(__builtin_amdgcn_ds_bpermute(source_byte, __float_as_int(v)));
}

__device__ inline uint32_t shuffle_xor(uint32_t v, int distance) {
  const int source_byte = (lane_id() ^ distance) << 2;
  return uint32_t(__builtin_amdgcn_ds_bpermute(source_byte, int(v)));
}

}  // namespace dsa::gfx942
