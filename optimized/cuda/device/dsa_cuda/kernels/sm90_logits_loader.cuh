// The loader warpgroup of the SM90 logits kernel (kernels/sm90_logits_kernel.cuh): one loader warp per
// math warpgroup loads the units (64 K entries and their scales) into the ring of shared-memory
// stages through the copy engine, in unit order, each warp every kMathWG-th unit; each segment's Q
// and weights go into one of two buffers, loaded by warp 0 (kMathWG = 3: warps 1-3 are the loaders)
// or by loader warp 0 before its first unit of the segment (kMathWG = 4).
#pragma once

#include <cstdint>

#include "dsa_cuda/common/ptx.cuh"
#include "dsa_cuda/kernels/logits_params.cuh"
#include "dsa_cuda/scheduler/unit_schedule.cuh"

namespace dsa::cuda::kernels {

// barriers: q_full[2], q_empty[2], full[S], empty[S] (the kernel's layout); warp: the warp in the
// loader warpgroup, lane: the lane in the warp; kRegisters: what setmaxnreg leaves a loader warp (0:
// the launch's).
template <int kHeads, int kHeadDim, LogitsMode kMode, int kMathWG, int kRegisters>
__device__ __forceinline__ void sm90_load_units(const LogitsParams& p, const LogitsSmem& layout, uint8_t* smem,
                                                uint64_t* barriers, uint32_t warp, uint32_t lane) {
  const uint32_t S = layout.stages;
  uint64_t* q_full = barriers;
  uint64_t* q_empty = barriers + 2;
  uint64_t* full = barriers + 4;
  uint64_t* empty = barriers + 4 + S;
  float* scales = reinterpret_cast<float*>(smem + layout.scale_offset);
  int32_t* block_pos = reinterpret_cast<int32_t*>(smem + layout.meta_offset);
  const int32_t blocks_per_unit = kUnit / p.block;
  if constexpr (kRegisters != 0) ptx::warpgroup_reg_dealloc<kRegisters>();
  // Q and weights of each segment, into buffer (ordinal % 2), through segment `through` (the
  // segments of this block in order; a buffer is refilled once every math warpgroup released it).
  scheduler::SegmentWalk q_walk(p);
  int32_t q_unit = q_walk.begin;
  const auto load_q_through = [&](int32_t through) {
    for (; !q_walk.done(q_unit) && q_walk.segment <= through; q_unit = q_walk.last(), q_walk.next()) {
      if (lane == 0) {
        const uint32_t slot = q_walk.ordinal & 1;
        ptx::mbar_wait(&q_empty[slot], ((q_walk.ordinal >> 1) & 1) ^ 1);
        const int32_t q_row = kMode == LogitsMode::prefill ? q_walk.segment * p.group_rows
                            : kMode == LogitsMode::paged   ? q_walk.segment * p.next_n
                                                           : q_walk.segment;
        ptx::mbar_arrive_expect_tx(&q_full[slot], layout.q_bytes + uint32_t(p.group_rows * kHeads * 4));
        ptx::tma_load_2d(smem + layout.q_offset(slot), &p.q_map, &q_full[slot], 0, q_row * kHeads);
        ptx::tma_load_2d(smem + layout.w_offset_of(slot), &p.w_map, &q_full[slot], 0, q_row);
      }
      __syncwarp();
    }
  };
  constexpr int32_t kNoSegment = 0x7fffffff;
  const int32_t loader = int32_t(warp) - (4 - kMathWG);  // -1: warp 0 of kMathWG = 3, Q only
  if (loader < 0) {
    load_q_through(kNoSegment);
  } else {
    // Units i = loader, loader + kMathWG, ... of this block; a batch of 32 / blocks_per_unit units
    // per round, one candidate block (or the whole unit) per lane. With kMathWG = 4 loader 0 also
    // loads the Q of every segment up to each unit's before the unit (Q(n) waits for the release of
    // segment n - 2, whose units every loader has issued by then: no cycle).
    const bool loads_q = kMathWG == 4 && warp == 0;
    const uint64_t policy = ptx::evict_first_policy();
    scheduler::SegmentWalk walk(p);
    const int32_t count = walk.end - walk.begin;
    const int32_t units_per_batch = 32 / blocks_per_unit;
    const int32_t my_unit = int32_t(lane) / blocks_per_unit, my_block = int32_t(lane) % blocks_per_unit;
    // A lane's copy is found in two steps, each a round ahead of its use, so that the lookups' latency
    // hides behind the copies of the rounds before: with candidate blocks of 8 a round is only four
    // units, and a chain of dependent lookups per round held the compact launch at 2.3 TB/s where the
    // paged one (32 units a round) reads 3.8 (bench/gpu/SELECT_RESULTS.md, run 19). `locate` finds the
    // unit's segment and issues the first lookup (the page id, the candidate block id or the first
    // tile) two rounds ahead; `resolve` turns it into the copy's coordinates a round ahead (for a
    // compact unit, the second lookup: its block's page id).
    scheduler::UnitCursor cursor(p, walk.segment);
    struct Located {
      bool ok = false;
      int32_t s = 0, k = 0, first = -1, len = 0;  // first: the first lookup; len: the row's L_r (compact)
    };
    struct Copy {
      int32_t s = 0, pos = -1, c1 = 0, c2 = 0;  // pos < 0: nothing to copy
    };
    const auto locate = [&](int32_t m0) {
      Located l;
      const int32_t local = loader + kMathWG * (m0 + my_unit);
      if (local >= count) return l;
      const int32_t u = walk.begin + local;
      cursor.seek(u);
      l.ok = true;
      l.s = cursor.segment;
      l.k = u - cursor.first;
      if constexpr (kMode == LogitsMode::paged) {
        l.first = p.block_table[int64_t(l.s) * p.max_pages + l.k];
      } else if constexpr (kMode == LogitsMode::compact) {
        const int32_t slot = l.k * blocks_per_unit + my_block;
        l.first = slot < p.slots ? p.candidates[int64_t(l.s) * p.slots + slot] : -1;
        l.len = visible_len(p, l.s / p.next_n, l.s % p.next_n);
      } else {
        l.first = p.first_tile[l.s];
      }
      return l;
    };
    const auto resolve = [&](const Located& l) {
      Copy c;
      c.s = l.s;
      if (!l.ok) return c;
      if constexpr (kMode == LogitsMode::paged) {
        c.pos = l.k * kUnit;
        c.c2 = l.first;
      } else if constexpr (kMode == LogitsMode::compact) {
        const int64_t start = int64_t(l.first) * p.block;
        if (l.first >= 0 && start < l.len) {
          c.pos = int32_t(start);
          c.c1 = c.pos % kUnit;
          c.c2 = p.block_table[int64_t(l.s / p.next_n) * p.max_pages + c.pos / kUnit];
        }
      } else {
        c.pos = (l.first + l.k) * kUnit;
        c.c1 = c.pos;
      }
      return c;
    };
    // A compact block of 8 has 32 bytes of scales. As a copy-engine copy beside its 1 KB of values, a
    // unit of such blocks took 16 copies, and the copy engine's rate held the launch at 52 us where the
    // values alone take 43 (bench/gpu/SELECT_RESULTS.md, runs 21-24); loads into registers put their
    // latency into the loader's rounds (run 22). Its lane copies them itself, two 16-byte asynchronous
    // copies that complete on the stage's barrier like the copy engine's.
    const bool lane_scales = kMode == LogitsMode::compact && p.block == 8;
    const Located first = locate(0);
    Located ahead = locate(units_per_batch);
    Copy next = resolve(first);
    for (int32_t m0 = 0;; m0 += units_per_batch) {
      const int32_t first_local = loader + kMathWG * m0;
      if (first_local >= count) break;
      const Copy cur = next;
      next = resolve(ahead);
      ahead = locate(m0 + 2 * units_per_batch);
      const int32_t s = cur.s, pos = cur.pos, c1 = cur.c1, c2 = cur.c2;
      for (int32_t i = 0; i < units_per_batch; ++i) {
        const int32_t unit_local = loader + kMathWG * (m0 + i);
        if (unit_local >= count) break;
        if (loads_q) load_q_through(__shfl_sync(0xffffffffu, s, i * blocks_per_unit));
        const uint32_t stage = uint32_t(unit_local) % S, phase = (uint32_t(unit_local) / S) & 1;
        if (lane == 0) ptx::mbar_wait(&empty[stage], phase ^ 1);
        __syncwarp();
        const bool mine = my_unit == i;
        const bool copy = mine && pos >= 0;
        if (mine) block_pos[stage * kMaxBlocksPerUnit + my_block] = copy ? pos : -1;
        uint32_t bytes = copy ? uint32_t(p.block * (kHeadDim + (lane_scales ? 0 : 4))) : 0u;
        if (copy) {
          uint8_t* tile = smem + layout.tile_offset + stage * layout.tile_bytes + my_block * p.block * kHeadDim;
          float* tile_scales = scales + stage * kUnit + my_block * p.block;
          if constexpr (kMode == LogitsMode::prefill) {
            ptx::tma_load_2d_hint(tile, &p.k_map, &full[stage], 0, c1, policy);
            ptx::tma_load_2d(tile_scales, &p.s_map, &full[stage], c1, 0);
          } else {
            // The scales of a page follow its values (block-flat): one plain bulk copy of the block's,
            // or the lane's own copies (lane_scales), whose arrival is issued before lane 0's below.
            ptx::tma_load_3d_hint(tile, &p.k_map, &full[stage], 0, c1, c2, policy);
            const uint8_t* block_scales = p.cache + int64_t(c2) * p.page_bytes + kUnit * kHeadDim + c1 * 4;
            if (lane_scales) {
              ptx::cp_async_16(tile_scales, block_scales);
              ptx::cp_async_16(tile_scales + 4, block_scales + 16);
              ptx::cp_async_mbar_arrive(&full[stage]);
            } else {
              ptx::bulk_load(tile_scales, block_scales, uint32_t(p.block * 4), &full[stage]);
            }
          }
        }
        bytes = __reduce_add_sync(0xffffffffu, bytes);
        __syncwarp();  // orders the lanes' block_pos stores before lane 0's release
        if (lane == 0) ptx::mbar_arrive_expect_tx(&full[stage], bytes);
      }
    }
    if (loads_q) load_q_through(kNoSegment);
  }
}

}  // namespace dsa::cuda::kernels
