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
// kStepBuffers: the registers a step lands in before its add (1: the sum and one buffer, in the 96
// registers ptxas gives a thread of four math warpgroups, or at N = 2H in the 160 of the row pairs'
// split, logits_params.cuh; 2: three math warpgroups' 128 at N = H). The steps
// issue in groups, one warpgroup arrival, commit and wait a group: step 0 straight into the sum with
// the next kStepBuffers steps into the buffers, then kStepBuffers steps at a time. The arrival before
// each wgmma was where the math warps stalled most (bench/gpu/RESULTS.md run 17), and a step's latency
// is covered by the other warpgroups: D = 128 takes three groups with one buffer (four arrivals
// before), two with two.
template <class Mma, int kSteps, int kStepBuffers>
__device__ __forceinline__ void promoted_chain(uint64_t desc_a, uint64_t desc_b, float (&sum)[Mma::kAccum]) {
  constexpr int kAccum = Mma::kAccum;
  static_assert(kStepBuffers >= 1, "at least one step buffer");
  float buffer[kStepBuffers][kAccum];
  // Steps first .. first + kStepBuffers - 1 (those below kSteps) into the buffers, in one group with
  // step 0 into the sum when first = 1; then their adds in step order.
  const auto group = [&](int first) {
    if (first == 1) fence_operands(sum);
#pragma unroll
    for (int b = 0; b < kStepBuffers; ++b)
      if (first + b < kSteps) fence_operands(buffer[b]);
    wgmma_fence();
    if (first == 1) Mma::mma(desc_a, desc_b, sum, 0u);
#pragma unroll
    for (int b = 0; b < kStepBuffers; ++b)
      if (first + b < kSteps)
        Mma::mma(desc_a + layout::k32_step(first + b), desc_b + layout::k32_step(first + b), buffer[b], 0u);
    wgmma_commit();
    wgmma_wait<0>();
    if (first == 1) fence_operands(sum);
#pragma unroll
    for (int b = 0; b < kStepBuffers; ++b) {
      if (first + b < kSteps) {
        fence_operands(buffer[b]);
#pragma unroll
        for (int i = 0; i < kAccum; ++i) sum[i] = __fadd_rn(sum[i], buffer[b][i]);
      }
    }
  };
#pragma unroll
  for (int first = 1; first < kSteps; first += kStepBuffers) group(first);
}

}  // namespace dsa::cuda::mma
