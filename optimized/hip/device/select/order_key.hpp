// The top-k value order of SPEC 6 as unsigned keys: NaN above +inf (all NaNs
// equal), -0 equal to +0, -inf the lowest value; key 0 is kept for a column
// that is not a candidate at all (below every value, never chosen).
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>

namespace dsa::gfx942 {

inline constexpr uint32_t kAbsentKey = 0;

__device__ inline uint32_t order_key(float v) {
  if (v != v) return 0xFFFFFFFFu;
  if (v == 0.f) v = 0.f;
  const uint32_t bits = __float_as_uint(v);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

}  // namespace dsa::gfx942
