// The accurate variant's unit loops with one query row per promoted chain (kernels/sm90_logits_kernel.cuh,
// kAccurate without kRowPairs): one unit per step, each k32 step its own wgmma from zero, added into the
// fp32 sum (mma/promoted_chain.cuh, dsa_sm90_accurate). As in the row-pair loop the unit count is
// warp-uniform (a uniform loop, ring position and descriptors) and the stores are predicated.
// launch_variant sends paged steps of next_n >= 2 to the row-pair loop instead; these loops take any
// row count all the same.
#pragma once

#include <cstdint>

#include "dsa_cuda/common/ptx.cuh"
#include "dsa_cuda/epilogue/head_sum.cuh"
#include "dsa_cuda/mainloop/sm90_unit_walk.cuh"
#include "dsa_cuda/mma/promoted_chain.cuh"
#include "dsa_cuda/mma/wgmma_e4m3.cuh"

namespace dsa::cuda::mainloop {

template <int kHeads, int kHeadDim, LogitsMode kMode, int kMathWG, int kStepBuffers>
__device__ __forceinline__ void sm90_promoted_units(const LogitsParams& p, const UnitStages& ring, const MathLane& lane,
                                                    const SegmentUnits& seg) {
  using Mma = mma::Wgmma<kHeads>;
  constexpr int kAccum = Mma::kAccum;
  constexpr int kSteps = kHeadDim / 32;
  constexpr uint32_t kAdvance = uint32_t(kMathWG);                // one unit a step (< stages: ring_length)
  constexpr int32_t kEntriesAdvance = int32_t(kAdvance) * kUnit;  // a row's entries from one unit to the next
  RingPosition at_unit = seg.first_unit;
  const uint64_t q_desc = uniform_kmajor_descriptor<kHeadDim>(seg.q_tile);

  // sum = the logits of the unit at desc_a for the query row at desc_b.
  const auto promote = [&](uint64_t desc_a, uint64_t desc_b, float(&sum)[kAccum]) {
    mma::promoted_chain<Mma, kSteps, kStepBuffers>(desc_a, desc_b, sum);
  };
  if (kMode == LogitsMode::compact || (kMode == LogitsMode::paged && seg.rows <= 2)) {
    // At most two rows, each window [0, L_r) (paged next_n 1, compact rows; and 2): the windows
    // stay in registers, a second row is computed unconditionally (its stores predicated), and the
    // stage is released as soon as the unit's last chain has read it, before its head sum.
    const int32_t hi0 = seg.bounds[1], hi1 = seg.rows > 1 ? seg.bounds[3] : 0;
    const bool two_rows = kMode == LogitsMode::paged && __shfl_sync(0xffffffffu, int32_t(seg.rows > 1), 0) != 0;
    const uint64_t q_desc1 = q_desc + uint64_t((kHeads * kHeadDim) >> 4);
    // The rows' outputs from out_row0 made warp-uniform (through a shuffle): ptxas then builds a store's
    // address in 4 instructions fewer a unit. The stores are predicated (ptx::store_if), not branched around.
    float* const out0 = p.out + int64_t(__shfl_sync(0xffffffffu, seg.out_row0, 0)) * p.out_stride;
    const int64_t row_stride = p.out_stride;
    // my_token's slot of the row in unit `local` (its entry position when paged) and where its logit
    // goes: both advance with the unit rather than being rebuilt from its index, a few instructions
    // fewer a unit in a loop whose every instruction outside the FP arithmetic counts (docs/cuda.md).
    int32_t slot_of_row = (seg.k0 + seg.first_local) * kUnit + lane.my_token;
    float* logit_at = out0 + slot_of_row;
    for (int32_t local = seg.first_local; local < seg.count;
         local += int32_t(kAdvance), slot_of_row += kEntriesAdvance, logit_at += kEntriesAdvance) {
      const uint32_t unit_stage = at_unit.stage, unit_phase = at_unit.phase;
      const uint64_t desc_a = ring.tile_desc(unit_stage);
      at_unit.advance(kAdvance, ring.stages);
      ptx::mbar_wait(&ring.full[unit_stage], unit_phase);
      const float scale0 = ring.scale(unit_stage, lane.token0), scale1 = ring.scale(unit_stage, lane.token1);
      // my_token's entry position (compact: its candidate entry, -1 for none).
      int32_t pos;
      if constexpr (kMode == LogitsMode::paged) {
        pos = slot_of_row;
      } else {
        const int32_t base = ring.block_first(unit_stage, lane.my_block);
        pos = base < 0 ? -1 : base + lane.my_offset;
      }
      const bool seen0 = lane.storer && pos >= 0 && pos < hi0, seen1 = lane.storer && pos >= 0 && pos < hi1;
      float sum[kAccum];
      promote(desc_a, q_desc, sum);
      if (!two_rows) ptx::mbar_arrive(&ring.empty[unit_stage]);
      const float v0 = epilogue::sm90_head_sum<kHeads>(sum, seg.w_tile, lane.quad_lane, scale0, scale1);
      ptx::store_if(logit_at, v0, seen0);
      if (two_rows) {
        promote(desc_a, q_desc1, sum);
        ptx::mbar_arrive(&ring.empty[unit_stage]);
        const float v1 = epilogue::sm90_head_sum<kHeads>(sum, seg.w_tile + kHeads, lane.quad_lane, scale0, scale1);
        ptx::store_if(logit_at + row_stride, v1, seen1);
      }
    }
  } else if constexpr (kMode != LogitsMode::compact) {
    // Any number of rows (prefill groups; paged next_n 3 and 4): windows from shared memory, and a row
    // that does not see the unit (a padded row, a shorter row of 2-D lengths) skipped by a
    // warp-uniform decision, so that the descriptors stay uniform values.
    for (int32_t local = seg.first_local; local < seg.count; local += int32_t(kAdvance)) {
      const uint32_t unit_stage = at_unit.stage, unit_phase = at_unit.phase;
      const uint64_t desc_a = ring.tile_desc(unit_stage);
      at_unit.advance(kAdvance, ring.stages);
      ptx::mbar_wait(&ring.full[unit_stage], unit_phase);
      const float scale0 = ring.scale(unit_stage, lane.token0), scale1 = ring.scale(unit_stage, lane.token1);
      // The unit's first entry position, and my_token's.
      const int32_t first = kMode == LogitsMode::paged ? (seg.k0 + local) * kUnit : ring.block_first(unit_stage, 0);
      const int32_t pos = first + lane.my_token;
      float* out_j = seg.seg_out;
      for (int32_t j = 0; j < seg.rows; ++j, out_j += p.out_stride) {
        const int32_t lo = seg.bounds[2 * j], hi = seg.bounds[2 * j + 1];
        const bool unseen = first >= hi || first + kUnit <= lo;
        if (__shfl_sync(0xffffffffu, int32_t(unseen), 0)) continue;
        float sum[kAccum];
        promote(desc_a, q_desc + uint64_t((j * kHeads * kHeadDim) >> 4), sum);
        const float v = epilogue::sm90_head_sum<kHeads>(sum, seg.w_tile + j * kHeads, lane.quad_lane, scale0, scale1);
        if (lane.storer && pos >= lo && pos < hi) out_j[pos] = v;
      }
      ptx::mbar_arrive(&ring.empty[unit_stage]);
    }
  }
}

}  // namespace dsa::cuda::mainloop
