// The gfx942 "SHUFFLE" K cache (SPEC 3): each page holds block_size * 128 fp8
// values, then block_size fp32 scales. Inside the values, token t and dim d
// sit at (t / 16) * 2048 + (d / 16) * 256 + (t % 16) * 16 + d % 16, so that 16
// consecutive tokens' 16-dim slices are one 256-byte run: a lane's 16-byte
// load of dims [16j, 16j + 16) of its token is the k_width = 16 MFMA operand,
// and 16 lanes load 256 consecutive bytes.
#pragma once

#include <cstdint>

namespace dsa::gfx942 {

inline constexpr int kHeadDim = 128;
inline constexpr int kTokensPerGroup = 16;

struct PreshuffleCache {
  const uint8_t* pages = nullptr;
  int64_t page_bytes = 0;  // page_size * (kHeadDim + 4)
  int32_t page_size = 0;   // a multiple of 16

  // The 16 bytes of dims [16 * dim_group, 16 * dim_group + 16) of slot t of a page.
  __device__ const uint8_t* dims16(int32_t page, int32_t t, int dim_group) const {
    return pages + int64_t(page) * page_bytes + (t / kTokensPerGroup) * (kTokensPerGroup * kHeadDim) + dim_group * 256 +
           (t % kTokensPerGroup) * 16;
  }
  __device__ float scale(int32_t page, int32_t t) const {
    return reinterpret_cast<const float*>(pages + int64_t(page) * page_bytes + int64_t(page_size) * kHeadDim)[t];
  }
};

}  // namespace dsa::gfx942
