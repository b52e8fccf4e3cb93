// The row-pair unit loop of the SM90 logits kernel (kernels/sm90_logits_kernel.cuh, kRowPairs): one
// unit per step, query rows j and j + 1 in one m64n(2H)k32 chain, so the K tile is read once for both
// rows; a pair's two head sums unconditionally, interleaved (the stores are predicated). The accurate
// variant's chain is the promoted one (mma/promoted_chain.cuh) at N = 2H, in the registers setmaxnreg
// gives its three math warpgroups (kernels::register_split).
#pragma once

#include <cstdint>

#include "dsa_cuda/common/ptx.cuh"
#include "dsa_cuda/epilogue/head_sum.cuh"
#include "dsa_cuda/layout/smem_desc.cuh"
#include "dsa_cuda/mainloop/sm90_unit_walk.cuh"
#include "dsa_cuda/mma/promoted_chain.cuh"
#include "dsa_cuda/mma/wgmma_e4m3.cuh"

namespace dsa::cuda::mainloop {

// With one pair (next_n = 2) its windows stay in registers for the whole segment and the stage is
// released as soon as the chain and the scales have been read. The unit count is warp-uniform (the
// kernel takes it through a shuffle), so that the loop, the ring position and the descriptors live in
// uniform registers: the math warps issue the head sums and little else (at H 64 about 235 instructions
// a unit in the standard variant, 336 before; 414-419 in the accurate one, 332 of them its arithmetic).
template <int kHeads, int kHeadDim, bool kAccurate, LogitsMode kMode, int kMathWG, int kStepBuffers>
__device__ __forceinline__ void sm90_row_pair_units(const LogitsParams& p, const UnitStages& ring, const MathLane& lane,
                                                    const SegmentUnits& seg) {
  using Mma = mma::Wgmma<2 * kHeads>;
  constexpr int kAccum = Mma::kAccum;
  constexpr int kRowAccum = kHeads / 2;  // one row's registers
  constexpr int kSteps = kHeadDim / 32;
  constexpr uint32_t kAdvance = uint32_t(kMathWG);                // one unit a step (< stages: ring_length)
  constexpr int32_t kEntriesAdvance = int32_t(kAdvance) * kUnit;  // a row's entries from one unit to the next
  constexpr bool paged = kMode == LogitsMode::paged;              // a paged row's window starts at 0
  RingPosition at_unit = seg.first_unit;
  const uint64_t q_desc = uniform_kmajor_descriptor<kHeadDim>(seg.q_tile);

  // The unit's chain for rows j and j + 1 into acc (an odd row count's last chain reads Q and
  // weights past its rows, whose results are not stored); the accurate variant's promoted one.
  const auto pair_chain = [&](uint64_t tile_desc, int32_t j, float(&acc)[kAccum]) {
    const uint64_t b_desc = q_desc + uint64_t((j * kHeads * kHeadDim) >> 4);
    if constexpr (kAccurate) {
      mma::promoted_chain<Mma, kSteps, kStepBuffers>(tile_desc, b_desc, acc);
    } else {
      mma::fence_operands(acc);
      mma::wgmma_fence();
#pragma unroll
      for (int s = 0; s < kSteps; ++s)
        Mma::mma(tile_desc + layout::k32_step(s), b_desc + layout::k32_step(s), acc, s > 0 ? 1u : 0u);
      mma::wgmma_commit();
      mma::wgmma_wait<0>();
      mma::fence_operands(acc);
    }
  };
  const auto my_position = [&](int32_t local, uint32_t unit_stage) {
    return (paged ? (seg.k0 + local) * kUnit : ring.block_first(unit_stage, 0)) + lane.my_token;
  };
  if (seg.rows <= 2) {
    const int32_t lo0 = seg.bounds[0], hi0 = seg.bounds[1];
    const int32_t lo1 = seg.rows > 1 ? seg.bounds[2] : 0, hi1 = seg.rows > 1 ? seg.bounds[3] : 0;
    const float* w1 = seg.w_tile + kHeads;
    // The rows' outputs from a warp-uniform row (through a shuffle), and, paged, my_token's position and
    // its logit's address advancing with the unit rather than rebuilt from its index: about 15
    // instructions a unit were the store's address (sm_90a SASS), in a loop the accurate variant
    // issues at the rate of its instructions. The stores are predicated, not branched around.
    const int64_t row_stride = p.out_stride;
    float* const rows_out = p.out + int64_t(__shfl_sync(0xffffffffu, seg.out_row0, 0)) * row_stride;
    int32_t paged_pos = (seg.k0 + seg.first_local) * kUnit + lane.my_token;
    float* paged_at = rows_out + paged_pos;
    for (int32_t local = seg.first_local; local < seg.count;
         local += int32_t(kAdvance), paged_pos += kEntriesAdvance, paged_at += kEntriesAdvance) {
      const uint32_t unit_stage = at_unit.stage, unit_phase = at_unit.phase;
      const uint64_t tile_desc = ring.tile_desc(unit_stage);
      at_unit.advance(kAdvance, ring.stages);
      ptx::mbar_wait(&ring.full[unit_stage], unit_phase);
      float acc[kAccum];
      pair_chain(tile_desc, 0, acc);
      const float scale0 = ring.scale(unit_stage, lane.token0), scale1 = ring.scale(unit_stage, lane.token1);
      const int32_t pos = paged ? paged_pos : my_position(local, unit_stage);
      float* const at = paged ? paged_at : rows_out + pos;
      ptx::mbar_arrive(&ring.empty[unit_stage]);
      const float v0 = epilogue::sm90_head_sum<kHeads>(acc, seg.w_tile, lane.quad_lane, scale0, scale1);
      const float v1 = epilogue::sm90_head_sum<kHeads>(acc + kRowAccum, w1, lane.quad_lane, scale0, scale1);
      ptx::store_if(at, v0, lane.storer && (paged || pos >= lo0) && pos < hi0);
      ptx::store_if(at + row_stride, v1, lane.storer && (paged || pos >= lo1) && pos < hi1);
    }
  } else {
    // Rows in pairs, weights and windows from shared memory (next_n 3 and 4, prefill groups).
    for (int32_t local = seg.first_local; local < seg.count; local += int32_t(kAdvance)) {
      const uint32_t unit_stage = at_unit.stage, unit_phase = at_unit.phase;
      const uint64_t tile_desc = ring.tile_desc(unit_stage);
      at_unit.advance(kAdvance, ring.stages);
      ptx::mbar_wait(&ring.full[unit_stage], unit_phase);
      const float scale0 = ring.scale(unit_stage, lane.token0), scale1 = ring.scale(unit_stage, lane.token1);
      const int32_t pos = my_position(local, unit_stage);
      float* out_j = seg.seg_out;
      for (int32_t j = 0; j < seg.rows; j += 2, out_j += 2 * p.out_stride) {
        const int32_t lo = seg.bounds[2 * j], hi = seg.bounds[2 * j + 1];
        const bool second_row = j + 1 < seg.rows;
        const int32_t lo_b = second_row ? seg.bounds[2 * j + 2] : 0, hi_b = second_row ? seg.bounds[2 * j + 3] : 0;
        float acc[kAccum];
        pair_chain(tile_desc, j, acc);
        const float* w_row = seg.w_tile + j * kHeads;
        const float v0 = epilogue::sm90_head_sum<kHeads>(acc, w_row, lane.quad_lane, scale0, scale1);
        const float v1 =
            epilogue::sm90_head_sum<kHeads>(acc + kRowAccum, w_row + kHeads, lane.quad_lane, scale0, scale1);
        if (lane.storer && pos >= lo && pos < hi) out_j[pos] = v0;
        if (lane.storer && pos >= lo_b && pos < hi_b) out_j[p.out_stride + pos] = v1;
      }
      ptx::mbar_arrive(&ring.empty[unit_stage]);
    }
  }
}

}  // namespace dsa::cuda::mainloop
