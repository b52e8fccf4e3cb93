// The bf16 head reduction of DeepGEMM's SM100 kernel with bf16 weights (SPEC 8, profile
// deepgemm_sm100_bf16): one thread holds every head of one entry; relu then one rounding to bf16
// per pair of heads (cvt.rn.relu.bf16x2.f32: NaN stays NaN); two bf16x2 fused multiply-add chains
// from +0, sum_0 over heads (4g, 4g + 1), sum_1 over (4g + 2, 4g + 3), g ascending; then
// __hadd2_rn(sum_0, sum_1) and __hadd_rn of its halves. The e4m3 form multiplies by the entry's
// scale cast to bf16 (one bf16 multiply); MXFP4's scales are inside the MMA.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace dsa::cuda::epilogue {

// relu(lo) in the low half (.x), relu(hi) in the high half, each rounded to nearest bf16.
__device__ __forceinline__ __nv_bfloat162 relu_bf16x2(float lo, float hi) {
  uint32_t packed;
  asm("cvt.rn.relu.bf16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(hi), "f"(lo));
  __nv_bfloat162 r;
  static_assert(sizeof(r) == sizeof(packed));
  __builtin_memcpy(&r, &packed, sizeof(r));
  return r;
}

// acc[h]: head h's q.k (fp32); weights[p]: heads (2p, 2p + 1).
template <int kHeads>
__device__ __forceinline__ __nv_bfloat16 bf16_head_sum(const float (&acc)[kHeads],
                                                       const __nv_bfloat162 (&weights)[kHeads / 2]) {
  static_assert(kHeads % 4 == 0, "the kernel's two chains take heads in fours");
  __nv_bfloat162 sum_0 = __floats2bfloat162_rn(0.0f, 0.0f), sum_1 = sum_0;
#pragma unroll
  for (int j = 0; j < kHeads; j += 4) {
    sum_0 = __hfma2(relu_bf16x2(acc[j], acc[j + 1]), weights[j / 2], sum_0);
    sum_1 = __hfma2(relu_bf16x2(acc[j + 2], acc[j + 3]), weights[j / 2 + 1], sum_1);
  }
  const __nv_bfloat162 sum = __hadd2_rn(sum_0, sum_1);
  return __hadd_rn(sum.x, sum.y);
}

}  // namespace dsa::cuda::epilogue
