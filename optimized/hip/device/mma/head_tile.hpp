// One 16-head x 16-token tile of q . k over D = 128: four chained
// v_mfma_f32_16x16x32_fp8_fp8 from zero, in the operand order of AITER's
// Gluon kernel (dot operands with k_width = 16, so Triton issues the two
// 8-dim halves of each lane's 16 dims as consecutive instructions).
//
// Instruction i = 2c + half takes, from lane group g = lane / 16, the dims
// 64c + 16g + 8half + [0, 8) of head (A) or token (B) lane % 16. The result
// lane holds heads 4g + [0, 4) of token lane % 16 (the MFMA's fixed D layout).
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>

#include "../common/wave.hpp"
#include "../layout/preshuffle.hpp"

namespace dsa::gfx942 {

using f32x4 = float __attribute__((ext_vector_type(4)));

inline constexpr int kMfmaPerTile = kHeadDim / 32;

// The 8-byte operands of the four instructions for one head or token: two
// 16-byte runs, dims [64c + 16g, 64c + 16g + 16) for c = 0, 1.
struct TileOperand {
  long part[kMfmaPerTile];
};

__device__ inline TileOperand operand_from_runs(const uint8_t* run0, const uint8_t* run1) {
  const uint4 a = *reinterpret_cast<const uint4*>(run0);
  const uint4 b = *reinterpret_cast<const uint4*>(run1);
  TileOperand o;
  o.part[0] = long(uint64_t(a.x) | uint64_t(a.y) << 32);
  o.part[1] = long(uint64_t(a.z) | uint64_t(a.w) << 32);
  o.part[2] = long(uint64_t(b.x) | uint64_t(b.y) << 32);
  o.part[3] = long(uint64_t(b.z) | uint64_t(b.w) << 32);
  return o;
}

// Row `head` of a [heads][128] fp8 query: this lane's operand.
__device__ inline TileOperand query_operand(const uint8_t* q_head_row) {
  const int g = lane_id() / 16;
  return operand_from_runs(q_head_row + 16 * g, q_head_row + 64 + 16 * g);
}

// Slot t of `page`: this lane's operand (its token is the lane's column).
__device__ inline TileOperand key_operand(const PreshuffleCache& cache, int32_t page, int32_t t) {
  const int g = lane_id() / 16;
  return operand_from_runs(cache.dims16(page, t, g), cache.dims16(page, t, 4 + g));
}

__device__ inline f32x4 tile_dots(const TileOperand& q, const TileOperand& k) {
  f32x4 acc = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int i = 0; i < kMfmaPerTile; ++i) acc = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(q.part[i], k.part[i], acc, 0, 0, 0);
  return acc;
}

}  // namespace dsa::gfx942
