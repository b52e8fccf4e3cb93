// The accurate variant's chain (dsa_sm90_accurate): each k32 step its own wgmma from zero (scale-d =
// 0), its result added into an fp32 sum by one RN add per accumulator register, so that the tensor
// core's 13-bit accumulation (NUMERICS.md) never spans two steps: sum = ((p0 + p1) + p2) + p3 for
// D = 128. The standard variant chains the steps inside the tensor core instead (scale-d = 1).
#pragma once

#include <cstdint>

#include "dsa_cuda/layout/smem_desc.cuh"
#include "dsa_cuda/mma/wgmma_e4m3.cuh"

namespace dsa::cuda::mma {

// sum = the promoted chain of the K tile at desc_a and the Q row at desc_b over kSteps k32 steps.
// kStepBuffers: where a step lands before its add. 1: step 0 straight into the sum, each further step
// into one buffer (the sum and the buffer fit in the 104 registers of four math warpgroups; the other
// warpgroups cover each step's latency). 2: two buffers in turn, so that the add of step s overlaps
// the wgmma of step s + 1 (three math warpgroups' registers).
template <class Mma, int kSteps, int kStepBuffers>
__device__ __forceinline__ void promoted_chain(uint64_t desc_a, uint64_t desc_b, float (&sum)[Mma::kAccum]) {
  constexpr int kAccum = Mma::kAccum;
  const auto issue = [&](int s, float(&buffer)[kAccum]) {
    fence_operands(buffer);
    wgmma_fence();
    Mma::mma(desc_a + layout::k32_step(s), desc_b + layout::k32_step(s), buffer, 0u);
    wgmma_commit();
  };
  if constexpr (kStepBuffers == 1) {
    float step[kAccum];
    issue(0, sum);
    wgmma_wait<0>();
    fence_operands(sum);
#pragma unroll
    for (int s = 1; s < kSteps; ++s) {
      issue(s, step);
      wgmma_wait<0>();
      fence_operands(step);
#pragma unroll
      for (int i = 0; i < kAccum; ++i) sum[i] = __fadd_rn(sum[i], step[i]);
    }
  } else {
    static_assert(kStepBuffers == 2, "one or two step buffers");
    float step[kAccum], other[kAccum];
    issue(0, step);
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      if (s + 1 < kSteps) {
        if (s % 2 == 0) issue(s + 1, other); else issue(s + 1, step);
        wgmma_wait<1>();
      } else {
        wgmma_wait<0>();
      }
      const auto add = [&](float(&done)[kAccum]) {
        fence_operands(done);
#pragma unroll
        for (int i = 0; i < kAccum; ++i) sum[i] = s == 0 ? done[i] : __fadd_rn(sum[i], done[i]);
      };
      if (s % 2 == 0) add(step); else add(other);
    }
  }
}

}  // namespace dsa::cuda::mma
