// The standard variant's one-row unit loop (kernels/sm90_logits_kernel.cuh: paged next_n = 1 and
// compact rows; launch_variant sends every other step to the row-pair or promoted loops): two units a
// step, both units' wgmma chains issued back to back before one wait, then both head sums, so that
// the tensor-core latency and the epilogue's dependency chains overlap. The row's window stays in
// registers for the segment, and no unit is skipped (a paged unit is a page of the row's, a compact
// one a slot of its): the stores are predicated.
#pragma once

#include <cstdint>

#include "dsa_cuda/common/ptx.cuh"
#include "dsa_cuda/epilogue/head_sum.cuh"
#include "dsa_cuda/layout/smem_desc.cuh"
#include "dsa_cuda/mainloop/sm90_unit_walk.cuh"
#include "dsa_cuda/mma/wgmma_e4m3.cuh"

namespace dsa::cuda::mainloop {

template <int kHeads, int kHeadDim, LogitsMode kMode, int kMathWG>
__device__ __forceinline__ void sm90_unit_pairs(const UnitStages& ring, const MathLane& lane, const SegmentUnits& seg) {
  using Mma = mma::Wgmma<kHeads>;
  constexpr int kAccum = Mma::kAccum;
  constexpr int kSteps = kHeadDim / 32;
  constexpr uint32_t kAdvance = uint32_t(2 * kMathWG);  // two units a step (< stages: ring_length)

  const int32_t hi = seg.bounds[1];  // the window is [0, L_r)
  const uint64_t q_desc = uniform_kmajor_descriptor<kHeadDim>(seg.q_tile);
  const uint32_t stages = ring.stages;
  RingPosition at_unit = seg.first_unit;

  // my_token's entry position in unit `local` at `unit_stage` (compact: its candidate entry, -1 for none).
  const auto my_position = [&](int32_t local, uint32_t unit_stage) {
    if constexpr (kMode == LogitsMode::paged) {
      return (seg.k0 + local) * kUnit + lane.my_token;
    } else {
      const int32_t base = ring.block_first(unit_stage, lane.my_block);
      return base < 0 ? -1 : base + lane.my_offset;
    }
  };
  // Unit `local`'s logit of my_token, into the row (compact: its slot of the compact row).
  const auto store = [&](int32_t local, int32_t pos, float v) {
    if constexpr (kMode == LogitsMode::compact) {
      if (lane.storer && pos >= 0 && pos < hi) seg.seg_out[(seg.k0 + local) * kUnit + lane.my_token] = v;
    } else {
      if (lane.storer && pos < hi) seg.seg_out[pos] = v;
    }
  };
  for (int32_t local = seg.first_local; local < seg.count; local += int32_t(kAdvance)) {
    const bool pair = local + kMathWG < seg.count;
    const uint32_t stage_a = at_unit.stage, phase_a = at_unit.phase;
    uint32_t stage_b = at_unit.stage + kMathWG, phase_b = at_unit.phase;
    if (stage_b >= stages) stage_b -= stages, phase_b ^= 1;
    at_unit.advance(kAdvance, stages);
    // Without a pair the second chain reads unit a's tile again, and its result is not used.
    if (!pair) stage_b = stage_a;
    const uint64_t desc_a = ring.tile_desc(stage_a);
    const uint64_t desc_b = ring.tile_desc(stage_b);
    ptx::mbar_wait(&ring.full[stage_a], phase_a);
    if (pair) ptx::mbar_wait(&ring.full[stage_b], phase_b);
    float acc0[kAccum], acc1[kAccum];
    mma::fence_operands(acc0);
    mma::fence_operands(acc1);
    mma::wgmma_fence();
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
      Mma::mma(desc_a + layout::k32_step(s), q_desc + layout::k32_step(s), acc0, s > 0 ? 1u : 0u);
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
      Mma::mma(desc_b + layout::k32_step(s), q_desc + layout::k32_step(s), acc1, s > 0 ? 1u : 0u);
    mma::wgmma_commit();
    const float scale_a0 = ring.scale(stage_a, lane.token0), scale_a1 = ring.scale(stage_a, lane.token1);
    const float scale_b0 = ring.scale(stage_b, lane.token0), scale_b1 = ring.scale(stage_b, lane.token1);
    const int32_t pos_a = my_position(local, stage_a), pos_b = my_position(local + kMathWG, stage_b);
    mma::wgmma_wait<0>();
    mma::fence_operands(acc0);
    mma::fence_operands(acc1);
    ptx::mbar_arrive(&ring.empty[stage_a]);
    if (pair) ptx::mbar_arrive(&ring.empty[stage_b]);
    const float v_a = epilogue::sm90_head_sum<kHeads>(acc0, seg.w_tile, lane.quad_lane, scale_a0, scale_a1);
    const float v_b = epilogue::sm90_head_sum<kHeads>(acc1, seg.w_tile, lane.quad_lane, scale_b0, scale_b1);
    store(local, pos_a, v_a);
    if (pair) store(local + kMathWG, pos_b, v_b);
  }
}

}  // namespace dsa::cuda::mainloop
