// The SM90 FP8 MQA logits kernel: paged decode, compact candidate logits and prefill share it.
//
// One persistent block per SM, warp-specialised, with M = kMathWG (3 or 4) math warpgroups:
//   - warpgroup M (the last) loads: one loader warp per math warpgroup loads the units (64 K entries
//     and their scales) into a ring of shared-memory stages through the copy engine, in unit order,
//     each warp every M-th unit; each segment's Q and weights are loaded by warp 0 (M = 3: warps 1-3
//     are the loaders) or by loader warp 0 before its first unit of the segment (M = 4);
//   - warpgroups 0 .. M - 1: unit i goes to warpgroup i % M, which runs wgmma m64nHk32 (M = the 64
//     entries, N = the H heads of one query row, 2H in the row pairs) over D, then the head sum of
//     epilogue/head_sum.cuh, and stores the two logits of each quad. This file walks the segments;
//     a segment's units go through one of the unit loops of mainloop/: sm90_unit_pairs.cuh (the
//     standard variant's one row, two units a step), sm90_row_pair_units.cuh (two rows a chain) or
//     sm90_promoted_units.cuh (the accurate variant's one row a chain).
// With M = 4 (640 threads, 96 registers each at launch), and in the accurate variant's row pairs (M = 3),
// setmaxnreg moves registers from the loaders to the math warps (logits_params.cuh: register_split).
// Every entry's logit depends on that entry alone (each wgmma row is independent), so a compact
// unit gathered from candidate blocks gives the same bits as the dense kernel at that position.
//
// kAccurate: each k32 step is its own wgmma from zero, added into an fp32 sum with one RN add after
// every step (mma/promoted_chain.cuh, the dsa_sm90_accurate profile); otherwise the D / 32 steps
// chain inside the tensor core (13-bit accumulation, the dsa_sm90 profile).
// kRankRows (compact only): the fused candidate launch; after its units the block ranks the compact
// rows it completed (epilogue/rank_compact_rows.cuh).
#pragma once

#include <cstdint>

#include "dsa_cuda/common/ptx.cuh"
#include "dsa_cuda/epilogue/rank_compact_rows.cuh"
#include "dsa_cuda/kernels/logits_params.cuh"
#include "dsa_cuda/kernels/sm90_logits_loader.cuh"
#include "dsa_cuda/layout/smem_desc.cuh"
#include "dsa_cuda/mainloop/sm90_promoted_units.cuh"
#include "dsa_cuda/mainloop/sm90_row_pair_units.cuh"
#include "dsa_cuda/mainloop/sm90_unit_pairs.cuh"
#include "dsa_cuda/mainloop/sm90_unit_walk.cuh"
#include "dsa_cuda/scheduler/unit_schedule.cuh"

namespace dsa::cuda::kernels {

// kStepBuffers: the accurate variant's step buffers (mma/promoted_chain.cuh).
// kRowPairs: two query rows per chain (wgmma N = 2H, where a segment has several rows): the K tile is
// read once for both rows, one unit per step (the accurate variant: three math warpgroups, given the
// registers of a sum and a step buffer of N = 2H by setmaxnreg); otherwise N = H and two units per
// step (one unit for the accurate variant, whose promotion needs a second accumulator set).
template <int kHeads, int kHeadDim, bool kAccurate, LogitsMode kMode, bool kRowPairs, int kMathWG,
          int kStepBuffers = 2, bool kRankRows = false>
__global__ void __launch_bounds__(logits_threads(kMathWG), 1)
    sm90_logits_kernel(const __grid_constant__ LogitsParams p) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(kMathWG == 3 || kMathWG == 4, "one loader warp per math warpgroup (warpgroup kMathWG's four warps)");
  static_assert(!kRankRows || kMode == LogitsMode::compact, "the fused launch ranks compact rows");
  constexpr RegisterSplit kRegisters = register_split(kMathWG, kAccurate && kRowPairs);

  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = ptx::smem_addr(smem_raw);
  uint8_t* smem = smem_raw + (((raw + 1023u) & ~1023u) - raw);
  const LogitsSmem layout(kHeads, kHeadDim, p.group_rows, p.stages);
  const uint32_t S = layout.stages;
  uint64_t* barriers = reinterpret_cast<uint64_t*>(smem + layout.barrier_offset);
  uint64_t* q_full = barriers;       // [2]
  uint64_t* q_empty = barriers + 2;  // [2]
  uint64_t* full = barriers + 4;     // [S]
  uint64_t* empty = barriers + 4 + S;
  float* scales = reinterpret_cast<float*>(smem + layout.scale_offset);      // [S][64]
  int32_t* block_pos = reinterpret_cast<int32_t*>(smem + layout.meta_offset);  // [S][8]
  int32_t* ranked = reinterpret_cast<int32_t*>(smem + layout.ranked_offset);   // kRankRows

  // Through a shuffle, so that the compiler knows them warp-uniform: the ring positions, tile
  // addresses and wgmma descriptors derived from them then stay in uniform registers.
  const uint32_t warpgroup = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
  const uint32_t warp = __shfl_sync(0xffffffffu, (threadIdx.x / 32) % 4, 0);
  const uint32_t lane = threadIdx.x % 32;

  if (threadIdx.x == kMathWG * 128) {
    ptx::prefetch_tensor_map(&p.q_map);
    ptx::prefetch_tensor_map(&p.w_map);
    ptx::prefetch_tensor_map(&p.k_map);
    if (kMode == LogitsMode::prefill) ptx::prefetch_tensor_map(&p.s_map);
    for (int i = 0; i < 2; ++i) {
      ptx::mbar_init(&q_full[i], 1);
      ptx::mbar_init(&q_empty[i], kMathWG * 128);
    }
    for (uint32_t i = 0; i < S; ++i) {
      ptx::mbar_init(&full[i], 1);
      ptx::mbar_init(&empty[i], 128);
    }
    if constexpr (kRankRows) ranked[0] = 0;
    ptx::fence_barrier_init();
  }
  __syncthreads();

  if (warpgroup == kMathWG) {
    sm90_load_units<kHeads, kHeadDim, kMode, kMathWG, kRegisters.loader>(p, layout, smem, barriers, warp, lane);
    if constexpr (kRankRows) epilogue::rank_compact_rows(p, smem + layout.tile_offset, ranked);
    return;
  }
  if constexpr (kRegisters.math != 0) ptx::warpgroup_reg_alloc<kRegisters.math>();

  // Math warpgroups: the segments of the block's range of units, each segment's units taken by one of
  // the unit loops of mainloop/ (warpgroup w takes units w, w + M, ... of the range).
  const uint32_t quad_lane = lane % 4;
  const int32_t token0 = int32_t(warp * 16 + lane / 4), token1 = token0 + 8;
  const int32_t my_token = quad_lane == 0 ? token0 : token1;
  // compact: the candidate block (of the unit's blocks_per_unit) holding my_token, and its offset there.
  const mainloop::MathLane math_lane{.quad_lane = quad_lane,
                                     .token0 = token0,
                                     .token1 = token1,
                                     .my_token = my_token,
                                     .storer = quad_lane < 2,
                                     .my_block = my_token / p.block,
                                     .my_offset = my_token % p.block};
  int32_t* row_bounds = reinterpret_cast<int32_t*>(smem + layout.bounds_offset) + warpgroup * 2 * 2 * kMaxRows;

  const int32_t walk_begin = scheduler::SegmentWalk(p).begin;
  // Stage 0's tile; stage s's is s tiles on (tiles are contiguous, their addresses below 2^18).
  const uint64_t tile_desc0 = mainloop::uniform_kmajor_descriptor<kHeadDim>(smem + layout.tile_offset);
  const mainloop::UnitStages ring{.full = full,
                                  .empty = empty,
                                  .scales = scales,
                                  .block_pos = block_pos,
                                  .tile_desc0 = tile_desc0,
                                  .tile_desc_step = layout.tile_bytes >> 4,
                                  .stages = S};
  scheduler::SegmentWalk walk(p);
  for (int32_t u = walk.begin; !walk.done(u); u = walk.last(), walk.next()) {
    const uint32_t slot = walk.ordinal & 1;
    const int32_t seg = walk.segment;
    const int32_t seg_first = p.unit_prefix[seg];
    int32_t rows, out_row0;
    if constexpr (kMode == LogitsMode::paged) {
      rows = p.next_n, out_row0 = seg * p.next_n;
    } else if constexpr (kMode == LogitsMode::compact) {
      rows = 1, out_row0 = seg;
    } else {
      out_row0 = seg * p.group_rows, rows = min(p.group_rows, p.query_rows - out_row0);
    }
    // The rows' windows [lo, hi), once per segment (double-buffered by the segment's parity: the
    // barrier of segment s + 1 orders every read of segment s before the writes of segment s + 2).
    int32_t* bounds = row_bounds + slot * 2 * kMaxRows;
    const int32_t me = int32_t(threadIdx.x % 128);
    if (me < rows) {
      const int32_t row = out_row0 + me;
      if constexpr (kMode == LogitsMode::prefill) {
        bounds[2 * me] = p.ks[row], bounds[2 * me + 1] = p.ke[row];
      } else {
        bounds[2 * me] = 0, bounds[2 * me + 1] = visible_len(p, row / p.next_n, row % p.next_n);
      }
    }
    ptx::named_barrier(1 + warpgroup, 128);
    ptx::mbar_wait(&q_full[slot], (walk.ordinal >> 1) & 1);
    const uint8_t* q_tile = smem + layout.q_offset(slot);
    const float* w_tile = reinterpret_cast<const float*>(smem + layout.w_offset_of(slot));
    float* const seg_out = p.out + int64_t(out_row0) * p.out_stride;

    const int32_t last = walk.last();
    int32_t first_local = u - walk.begin;
    first_local += (int32_t(warpgroup) - first_local % kMathWG + kMathWG) % kMathWG;
    // Warp-uniform (through a shuffle), as is the unit count: the loops, the ring position, the
    // barriers' and the tiles' addresses derived from them then stay in uniform registers.
    first_local = __shfl_sync(0xffffffffu, first_local, 0);
    const mainloop::SegmentUnits units{.first_local = first_local,
                                       .first_unit = mainloop::RingPosition(uint32_t(first_local), S),
                                       .count = __shfl_sync(0xffffffffu, last - walk.begin, 0),
                                       .k0 = walk_begin - seg_first,
                                       .rows = rows,
                                       .out_row0 = out_row0,
                                       .bounds = bounds,
                                       .w_tile = w_tile,
                                       .q_tile = q_tile,
                                       .seg_out = seg_out};
    if constexpr (kRowPairs) {
      using mainloop::sm90_row_pair_units;
      sm90_row_pair_units<kHeads, kHeadDim, kAccurate, kMode, kMathWG, kStepBuffers>(p, ring, math_lane, units);
    } else if constexpr (kAccurate) {
      mainloop::sm90_promoted_units<kHeads, kHeadDim, kMode, kMathWG, kStepBuffers>(p, ring, math_lane, units);
    } else {
      mainloop::sm90_unit_pairs<kHeads, kHeadDim, kMode, kMathWG>(ring, math_lane, units);
    }
    if constexpr (kRankRows) {
      // This warpgroup's units of the segment: the locals of its residue from first_local on.
      const int32_t mine = max(0, (last - walk.begin - first_local + kMathWG - 1) / kMathWG);
      epilogue::release_row_units(p, seg, mine, p.unit_prefix[seg + 1] - seg_first, warpgroup, ranked);
    }
    ptx::mbar_arrive(&q_empty[slot]);
  }
  if constexpr (kRankRows) epilogue::rank_compact_rows(p, smem + layout.tile_offset, ranked);
#endif
}

}  // namespace dsa::cuda::kernels
