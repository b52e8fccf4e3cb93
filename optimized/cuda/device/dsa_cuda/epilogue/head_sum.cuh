// The head sum of the SM90 logits kernels, in the order of the `dsa_sm90` profiles (the order of
// DeepGEMM's SM90 kernel, SPEC 8, which the wgmma accumulator layout gives): lane q of a quad holds
// heads 8g + 2q (even partial) and 8g + 2q + 1 (odd partial) of two tokens; each partial starts as
// fma(w_g0, r_g0, RN(w_g1 * r_g1)) and goes on by fma in g order; the K scale multiplies each
// lane's RN(even + odd) before the lanes combine by shuffles xor 1, then xor 2. Every operation is
// written as the rounding intrinsic it must be, so no compiler contraction can change the bits.
#pragma once

#include <cstdint>

namespace dsa::cuda::epilogue {

// relu as fmaxf: a NaN dot product gives 0 (the profiles' relu_propagates_nan = false).
__device__ __forceinline__ float relu(float x) { return fmaxf(x, 0.0f); }

// acc: one row's kHeads / 2 accumulator registers (layout of mma/wgmma_e4m3.cuh; indexed with
// constants only, so they stay registers); w: that row's H weights in shared memory; scale0 /
// scale1: the K scales of the thread's two tokens. Returns the logit lane q of the quad stores:
// token q & 1's (lanes 2 and 3 return their pair's partial sums, unused).
// Each lane reduces only the token it keeps: in the exchange at distance 1 an even lane keeps its
// token0 value and sends its token1 value, an odd lane the other way round, so every add has the
// operands, in the order, of the reduction of both tokens in every lane (v + shfl(v, 1), then
// + shfl(., 2)) with half the shuffles.
template <int kHeads>
__device__ __forceinline__ float sm90_head_sum(const float* acc, const float* w, uint32_t quad_lane, float scale0,
                                               float scale1) {
  static_assert(kHeads % 16 == 0, "at least two groups of 8 heads");
  constexpr int kGroups = kHeads / 8;
  // float2 k of the row holds heads 2k and 2k + 1: group g's pair for this lane is float2 4g + q.
  const float2* pairs = reinterpret_cast<const float2*>(w) + quad_lane;
  const float2 w0 = pairs[0], w1 = pairs[4];
  float even0 = __fmaf_rn(w0.x, relu(acc[0]), __fmul_rn(w1.x, relu(acc[4])));
  float odd0 = __fmaf_rn(w0.y, relu(acc[1]), __fmul_rn(w1.y, relu(acc[5])));
  float even1 = __fmaf_rn(w0.x, relu(acc[2]), __fmul_rn(w1.x, relu(acc[6])));
  float odd1 = __fmaf_rn(w0.y, relu(acc[3]), __fmul_rn(w1.y, relu(acc[7])));
#pragma unroll
  for (int g = 2; g < kGroups; ++g) {
    const float2 wg = pairs[4 * g];
    even0 = __fmaf_rn(wg.x, relu(acc[4 * g + 0]), even0);
    odd0 = __fmaf_rn(wg.y, relu(acc[4 * g + 1]), odd0);
    even1 = __fmaf_rn(wg.x, relu(acc[4 * g + 2]), even1);
    odd1 = __fmaf_rn(wg.y, relu(acc[4 * g + 3]), odd1);
  }
  const float v0 = __fmul_rn(__fadd_rn(even0, odd0), scale0);
  const float v1 = __fmul_rn(__fadd_rn(even1, odd1), scale1);
  const bool odd_lane = (quad_lane & 1) != 0;
  const float keep = odd_lane ? v1 : v0, send = odd_lane ? v0 : v1;
  const float pair_sum = __fadd_rn(keep, __shfl_xor_sync(0xffffffffu, send, 1));
  return __fadd_rn(pair_sum, __shfl_xor_sync(0xffffffffu, pair_sum, 2));
}

}  // namespace dsa::cuda::epilogue
