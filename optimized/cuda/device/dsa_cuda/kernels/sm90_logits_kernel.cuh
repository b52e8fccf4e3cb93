// The SM90 FP8 MQA logits kernel: paged decode, compact candidate logits and prefill share it.
//
// One persistent block per SM, warp-specialised, with M = kMathWG (3 or 4) math warpgroups:
//   - warpgroup M (the last) loads: one loader warp per math warpgroup loads the units (64 K entries
//     and their scales) into a ring of shared-memory stages through the copy engine, in unit order,
//     each warp every M-th unit; each segment's Q and weights are loaded by warp 0 (M = 3: warps 1-3
//     are the loaders) or by loader warp 0 before its first unit of the segment (M = 4);
//   - warpgroups 0 .. M - 1: unit i goes to warpgroup i % M, which runs wgmma m64nHk32 (M = the 64
//     entries, N = the H heads of one query row) over D, then the head sum of
//     epilogue/head_sum.cuh, and stores the two logits of each quad.
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
#include "dsa_cuda/epilogue/head_sum.cuh"
#include "dsa_cuda/epilogue/rank_compact_rows.cuh"
#include "dsa_cuda/kernels/logits_params.cuh"
#include "dsa_cuda/kernels/sm90_logits_loader.cuh"
#include "dsa_cuda/layout/smem_desc.cuh"
#include "dsa_cuda/mma/promoted_chain.cuh"
#include "dsa_cuda/mma/wgmma_e4m3.cuh"
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
  using Mma = mma::Wgmma<(kRowPairs ? 2 : 1) * kHeads>;
  constexpr int kAccum = Mma::kAccum;
  constexpr int kRowAccum = kHeads / 2;  // one row's registers
  constexpr int kSteps = kHeadDim / 32;
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

  // Math warpgroups. Each takes its units two at a time (the standard variant): both units' wgmma
  // chains issue back to back before one wait, and their two head sums give the scheduler twice the
  // independent work, so the tensor-core latency and the epilogue's dependency chains overlap.
  // The math warps issue at about half their peak rate (ncu, bench/gpu/RESULTS.md), so the work per
  // unit outside the wgmma and the head sum is kept to a few instructions: the ring position advances
  // without a division, a paged or prefill unit's positions follow from its first entry, and each
  // lane stores one logit (lane 0 of a quad token0's, lane 1 token1's).
  const uint32_t quad_lane = lane % 4;
  const int32_t token0 = int32_t(warp * 16 + lane / 4), token1 = token0 + 8;
  const int32_t my_token = quad_lane == 0 ? token0 : token1;
  const bool storer = quad_lane < 2;
  // compact: the candidate block (of the unit's blocks_per_unit) holding my_token, and its offset there.
  const int32_t my_block = my_token / p.block, my_offset = my_token % p.block;
  int32_t* row_bounds = reinterpret_cast<int32_t*>(smem + layout.bounds_offset) + warpgroup * 2 * 2 * kMaxRows;
  constexpr int32_t kUnitsPerStep = (kAccurate || kRowPairs) ? 1 : 2;
  constexpr uint32_t kAdvance = uint32_t(kUnitsPerStep * kMathWG);  // < S (kernels::ring_length)
  constexpr int32_t kEntriesAdvance = int32_t(kAdvance) * kUnit;     // a row's entries from one unit to the next

  const int32_t walk_begin = scheduler::SegmentWalk(p).begin;
  // A tile's or Q's address is the same in every lane: taken from lane 0 by a shuffle, the compiler
  // knows it and builds the descriptors in uniform registers, where wgmma reads them (otherwise each
  // wgmma of a chain cost four moves into uniform registers and the descriptor arithmetic per lane).
  const auto uniform_descriptor = [](const uint8_t* tile) {
    return layout::kmajor_descriptor<kHeadDim>(__shfl_sync(0xffffffffu, ptx::smem_addr(tile), 0));
  };
  // Stage 0's tile; stage s's is s tiles on (tiles are contiguous, their addresses below 2^18).
  const uint64_t tile_desc0 = uniform_descriptor(smem + layout.tile_offset);
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
    // Warp-uniform (through a shuffle), so that the ring position, the barriers' and the tile's
    // addresses derived from it stay in uniform registers.
    first_local = __shfl_sync(0xffffffffu, first_local, 0);
    // The ring position of unit `local` (stage local % S, parity (local / S) & 1), advanced by kAdvance.
    uint32_t stage = uint32_t(first_local) % S, phase = (uint32_t(first_local) / S) & 1;
    if constexpr (kRowPairs) {
      // One unit per step, rows j and j + 1 in one m64n(2H)k32 chain, a pair's two head sums
      // unconditionally, interleaved (the stores are predicated). With one pair (next_n = 2) its
      // windows stay in registers for the whole segment and the stage is released as soon as the
      // chain and the scales have been read. The unit count is made warp-uniform, so that the loop,
      // the ring position and the descriptors live in uniform registers: the math warps issue the
      // head sums and little else (about 235 instructions per unit at H 64, 336 before).
      constexpr bool paged = kMode == LogitsMode::paged;  // a paged row's window starts at 0
      const int32_t count = __shfl_sync(0xffffffffu, last - walk.begin, 0);
      const int32_t k0 = walk_begin - seg_first;  // unit `local` is unit k0 + local of the segment
      const uint64_t q_desc = uniform_descriptor(q_tile);
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
        return (paged ? (k0 + local) * kUnit : block_pos[unit_stage * kMaxBlocksPerUnit]) + my_token;
      };
      if (rows <= 2) {
        const int32_t lo0 = bounds[0], hi0 = bounds[1];
        const int32_t lo1 = rows > 1 ? bounds[2] : 0, hi1 = rows > 1 ? bounds[3] : 0;
        const float* w1 = w_tile + kHeads;
        // The rows' outputs from a warp-uniform row (through a shuffle), and, paged, my_token's position and
        // its logit's address advancing with the unit rather than rebuilt from its index: about 15
        // instructions a unit were the store's address (sm_90a SASS), in a loop the accurate variant
        // issues at the rate of its instructions. The stores are predicated, not branched around.
        const int64_t row_stride = p.out_stride;
        float* const rows_out = p.out + int64_t(__shfl_sync(0xffffffffu, out_row0, 0)) * row_stride;
        int32_t paged_pos = (k0 + first_local) * kUnit + my_token;
        float* paged_at = rows_out + paged_pos;
        for (int32_t local = first_local; local < count;
             local += int32_t(kAdvance), paged_pos += kEntriesAdvance, paged_at += kEntriesAdvance) {
          const uint32_t unit_stage = stage, unit_phase = phase;
          const uint64_t tile_desc = tile_desc0 + uint64_t(unit_stage * (layout.tile_bytes >> 4));
          stage += kAdvance;
          if (stage >= S) stage -= S, phase ^= 1;
          ptx::mbar_wait(&full[unit_stage], unit_phase);
          float acc[kAccum];
          pair_chain(tile_desc, 0, acc);
          const float scale0 = scales[unit_stage * kUnit + token0], scale1 = scales[unit_stage * kUnit + token1];
          const int32_t pos = paged ? paged_pos : my_position(local, unit_stage);
          float* const at = paged ? paged_at : rows_out + pos;
          ptx::mbar_arrive(&empty[unit_stage]);
          const float v0 = epilogue::sm90_head_sum<kHeads>(acc, w_tile, quad_lane, scale0, scale1);
          const float v1 = epilogue::sm90_head_sum<kHeads>(acc + kRowAccum, w1, quad_lane, scale0, scale1);
          ptx::store_if(at, v0, storer && (paged || pos >= lo0) && pos < hi0);
          ptx::store_if(at + row_stride, v1, storer && (paged || pos >= lo1) && pos < hi1);
        }
      } else {
        // Rows in pairs, weights and windows from shared memory (next_n 3 and 4, prefill groups).
        for (int32_t local = first_local; local < count; local += int32_t(kAdvance)) {
          const uint32_t unit_stage = stage, unit_phase = phase;
          const uint64_t tile_desc = tile_desc0 + uint64_t(unit_stage * (layout.tile_bytes >> 4));
          stage += kAdvance;
          if (stage >= S) stage -= S, phase ^= 1;
          ptx::mbar_wait(&full[unit_stage], unit_phase);
          const float scale0 = scales[unit_stage * kUnit + token0], scale1 = scales[unit_stage * kUnit + token1];
          const int32_t pos = my_position(local, unit_stage);
          float* out_j = seg_out;
          for (int32_t j = 0; j < rows; j += 2, out_j += 2 * p.out_stride) {
            const int32_t lo = bounds[2 * j], hi = bounds[2 * j + 1];
            const bool second_row = j + 1 < rows;
            const int32_t lo_b = second_row ? bounds[2 * j + 2] : 0, hi_b = second_row ? bounds[2 * j + 3] : 0;
            float acc[kAccum];
            pair_chain(tile_desc, j, acc);
            const float* w_row = w_tile + j * kHeads;
            const float v0 = epilogue::sm90_head_sum<kHeads>(acc, w_row, quad_lane, scale0, scale1);
            const float v1 =
                epilogue::sm90_head_sum<kHeads>(acc + kRowAccum, w_row + kHeads, quad_lane, scale0, scale1);
            if (storer && pos >= lo && pos < hi) out_j[pos] = v0;
            if (storer && pos >= lo_b && pos < hi_b) out_j[p.out_stride + pos] = v1;
          }
          ptx::mbar_arrive(&empty[unit_stage]);
        }
      }
    } else if constexpr (kAccurate) {
      // One unit per step, one row per promoted chain: each k32 step its own wgmma from zero, added
      // into the fp32 sum (dsa_sm90_accurate). As in the row-pair loop, the unit count is made
      // warp-uniform (a uniform loop, ring position and descriptors) and the store is predicated.
      // launch_variant sends paged steps of next_n >= 2 to the row-pair loop instead; these loops take
      // any row count all the same.
      const int32_t count = __shfl_sync(0xffffffffu, last - walk.begin, 0);
      const int32_t k0 = walk_begin - seg_first;  // unit `local` is unit k0 + local of the segment
      const uint64_t q_desc = uniform_descriptor(q_tile);
      // sum = the logits of the unit at desc_a for the query row at desc_b.
      const auto promote = [&](uint64_t desc_a, uint64_t desc_b, float(&sum)[kAccum]) {
        mma::promoted_chain<Mma, kSteps, kStepBuffers>(desc_a, desc_b, sum);
      };
      if (kMode == LogitsMode::compact || (kMode == LogitsMode::paged && rows <= 2)) {
        // At most two rows, each window [0, L_r) (paged next_n 1, compact rows; and 2): the windows
        // stay in registers, a second row is computed unconditionally (its stores predicated), and the
        // stage is released as soon as the unit's last chain has read it, before its head sum.
        const int32_t hi0 = bounds[1], hi1 = rows > 1 ? bounds[3] : 0;
        const bool two_rows = kMode == LogitsMode::paged && __shfl_sync(0xffffffffu, int32_t(rows > 1), 0) != 0;
        const uint64_t q_desc1 = q_desc + uint64_t((kHeads * kHeadDim) >> 4);
        // The rows' outputs from out_row0 made warp-uniform (through a shuffle): ptxas then builds a store's
        // address in 4 instructions fewer a unit. The stores are predicated (ptx::store_if), not branched around.
        float* const out0 = p.out + int64_t(__shfl_sync(0xffffffffu, out_row0, 0)) * p.out_stride;
        const int64_t row_stride = p.out_stride;
        // my_token's slot of the row in unit `local` (its entry position when paged) and where its logit
        // goes: both advance with the unit rather than being rebuilt from its index, a few instructions
        // fewer a unit in a loop whose every instruction outside the FP arithmetic counts (docs/cuda.md).
        int32_t slot_of_row = (k0 + first_local) * kUnit + my_token;
        float* logit_at = out0 + slot_of_row;
        for (int32_t local = first_local; local < count;
             local += int32_t(kAdvance), slot_of_row += kEntriesAdvance, logit_at += kEntriesAdvance) {
          const uint32_t unit_stage = stage, unit_phase = phase;
          const uint64_t desc_a = tile_desc0 + uint64_t(unit_stage * (layout.tile_bytes >> 4));
          stage += kAdvance;
          if (stage >= S) stage -= S, phase ^= 1;
          ptx::mbar_wait(&full[unit_stage], unit_phase);
          const float scale0 = scales[unit_stage * kUnit + token0], scale1 = scales[unit_stage * kUnit + token1];
          // my_token's entry position (compact: its candidate entry, -1 for none).
          int32_t pos;
          if constexpr (kMode == LogitsMode::paged) {
            pos = slot_of_row;
          } else {
            const int32_t base = block_pos[unit_stage * kMaxBlocksPerUnit + my_block];
            pos = base < 0 ? -1 : base + my_offset;
          }
          const bool seen0 = storer && pos >= 0 && pos < hi0, seen1 = storer && pos >= 0 && pos < hi1;
          float sum[kAccum];
          promote(desc_a, q_desc, sum);
          if (!two_rows) ptx::mbar_arrive(&empty[unit_stage]);
          const float v0 = epilogue::sm90_head_sum<kHeads>(sum, w_tile, quad_lane, scale0, scale1);
          ptx::store_if(logit_at, v0, seen0);
          if (two_rows) {
            promote(desc_a, q_desc1, sum);
            ptx::mbar_arrive(&empty[unit_stage]);
            const float v1 = epilogue::sm90_head_sum<kHeads>(sum, w_tile + kHeads, quad_lane, scale0, scale1);
            ptx::store_if(logit_at + row_stride, v1, seen1);
          }
        }
      } else if constexpr (kMode != LogitsMode::compact) {
        // Any number of rows (prefill groups; paged next_n 3 and 4): windows from shared memory, and a row
        // that does not see the unit (a padded row, a shorter row of 2-D lengths) skipped by a
        // warp-uniform decision, so that the descriptors stay uniform values.
        for (int32_t local = first_local; local < count; local += int32_t(kAdvance)) {
          const uint32_t unit_stage = stage, unit_phase = phase;
          const uint64_t desc_a = tile_desc0 + uint64_t(unit_stage * (layout.tile_bytes >> 4));
          stage += kAdvance;
          if (stage >= S) stage -= S, phase ^= 1;
          ptx::mbar_wait(&full[unit_stage], unit_phase);
          const float scale0 = scales[unit_stage * kUnit + token0], scale1 = scales[unit_stage * kUnit + token1];
          // The unit's first entry position, and my_token's.
          const int32_t first =
              kMode == LogitsMode::paged ? (k0 + local) * kUnit : block_pos[unit_stage * kMaxBlocksPerUnit];
          const int32_t pos = first + my_token;
          float* out_j = seg_out;
          for (int32_t j = 0; j < rows; ++j, out_j += p.out_stride) {
            const int32_t lo = bounds[2 * j], hi = bounds[2 * j + 1];
            const bool unseen = first >= hi || first + kUnit <= lo;
            if (__shfl_sync(0xffffffffu, int32_t(unseen), 0)) continue;
            float sum[kAccum];
            promote(desc_a, q_desc + uint64_t((j * kHeads * kHeadDim) >> 4), sum);
            const float v = epilogue::sm90_head_sum<kHeads>(sum, w_tile + j * kHeads, quad_lane, scale0, scale1);
            if (storer && pos >= lo && pos < hi) out_j[pos] = v;
          }
          ptx::mbar_arrive(&empty[unit_stage]);
        }
      }
    } else {
      // One query row a segment (paged next_n = 1, compact rows: launch_variant sends every other
      // step to the two loops above), two units a step: both units' chains issue back to back before
      // one wait, then both head sums. As in the row-pair loop the unit count is made warp-uniform, so
      // that the loop, the pair decision, the ring positions and both tiles' descriptors are uniform
      // values; the row's window stays in registers for the segment, and no unit is skipped (a paged
      // unit is a page of the row's, a compact one a slot of its: the stores are predicated).
      static_assert(kUnitsPerStep == 2, "the one-row loop takes two units a step");
      const int32_t count = __shfl_sync(0xffffffffu, last - walk.begin, 0);
      const int32_t k0 = walk_begin - seg_first;  // unit `local` is unit k0 + local of the segment
      const int32_t hi = bounds[1];                // the window is [0, L_r)
      const uint64_t q_desc = uniform_descriptor(q_tile);
      // my_token's entry position in unit `local` at `unit_stage` (compact: its candidate entry, -1 for none).
      const auto my_position = [&](int32_t local, uint32_t unit_stage) {
        if constexpr (kMode == LogitsMode::paged) {
          return (k0 + local) * kUnit + my_token;
        } else {
          const int32_t base = block_pos[unit_stage * kMaxBlocksPerUnit + my_block];
          return base < 0 ? -1 : base + my_offset;
        }
      };
      // Unit `local`'s logit of my_token, into the row (compact: its slot of the compact row).
      const auto store = [&](int32_t local, int32_t pos, float v) {
        if constexpr (kMode == LogitsMode::compact) {
          if (storer && pos >= 0 && pos < hi) seg_out[(k0 + local) * kUnit + my_token] = v;
        } else {
          if (storer && pos < hi) seg_out[pos] = v;
        }
      };
      for (int32_t local = first_local; local < count; local += int32_t(kAdvance)) {
        const bool pair = local + kMathWG < count;
        const uint32_t stage_a = stage, phase_a = phase;
        uint32_t stage_b = stage + kMathWG, phase_b = phase;
        if (stage_b >= S) stage_b -= S, phase_b ^= 1;
        stage += kAdvance;
        if (stage >= S) stage -= S, phase ^= 1;
        // Without a pair the second chain reads unit a's tile again, and its result is not used.
        if (!pair) stage_b = stage_a;
        const uint64_t desc_a = tile_desc0 + uint64_t(stage_a * (layout.tile_bytes >> 4));
        const uint64_t desc_b = tile_desc0 + uint64_t(stage_b * (layout.tile_bytes >> 4));
        ptx::mbar_wait(&full[stage_a], phase_a);
        if (pair) ptx::mbar_wait(&full[stage_b], phase_b);
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
        const float scale_a0 = scales[stage_a * kUnit + token0], scale_a1 = scales[stage_a * kUnit + token1];
        const float scale_b0 = scales[stage_b * kUnit + token0], scale_b1 = scales[stage_b * kUnit + token1];
        const int32_t pos_a = my_position(local, stage_a), pos_b = my_position(local + kMathWG, stage_b);
        mma::wgmma_wait<0>();
        mma::fence_operands(acc0);
        mma::fence_operands(acc1);
        ptx::mbar_arrive(&empty[stage_a]);
        if (pair) ptx::mbar_arrive(&empty[stage_b]);
        const float v_a = epilogue::sm90_head_sum<kHeads>(acc0, w_tile, quad_lane, scale_a0, scale_a1);
        const float v_b = epilogue::sm90_head_sum<kHeads>(acc1, w_tile, quad_lane, scale_b0, scale_b1);
        store(local, pos_a, v_a);
        if (pair) store(local + kMathWG, pos_b, v_b);
      }
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
