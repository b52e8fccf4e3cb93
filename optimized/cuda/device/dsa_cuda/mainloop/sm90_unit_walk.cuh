// What the SM90 logits kernel's unit loops share (kernels/sm90_logits_kernel.cuh walks the segments and
// hands each segment's units to one of them: mainloop/sm90_row_pair_units.cuh, sm90_promoted_units.cuh,
// sm90_unit_pairs.cuh): the ring of stages the loaders fill, where a math thread sits in a unit, and one
// segment's units as a math warpgroup sees them. Plain aggregates of values the kernel computes once a
// launch or a segment; the loops are inlined, so their fields stay registers (warp-uniform ones uniform
// registers), as when the loops were written in the kernel's body.
#pragma once

#include <cstdint>

#include "dsa_cuda/common/ptx.cuh"
#include "dsa_cuda/kernels/logits_params.cuh"
#include "dsa_cuda/layout/smem_desc.cuh"

namespace dsa::cuda::mainloop {

using kernels::kMaxBlocksPerUnit;
using kernels::kMaxRows;
using kernels::kUnit;
using kernels::LogitsMode;
using kernels::LogitsParams;

// The K-major descriptor of a tile (K or Q) in shared memory, from lane 0's address through a shuffle:
// the compiler then knows it the same in every lane and builds it in uniform registers, where wgmma
// reads descriptors (otherwise each wgmma of a chain cost four moves into uniform registers and the
// descriptor arithmetic per lane).
template <int kHeadDim>
__device__ __forceinline__ uint64_t uniform_kmajor_descriptor(const uint8_t* tile) {
  return layout::kmajor_descriptor<kHeadDim>(__shfl_sync(0xffffffffu, ptx::smem_addr(tile), 0));
}

// The loaders' ring of stages: stage s holds one unit's K tile, its 64 scales and (compact) its
// candidate blocks' first positions; full[s] / empty[s] are its barriers.
struct UnitStages {
  uint64_t* full;
  uint64_t* empty;
  const float* scales;       // [stages][kUnit]
  const int32_t* block_pos;  // [stages][kMaxBlocksPerUnit]
  uint64_t tile_desc0;       // stage 0's tile descriptor (a warp-uniform value); stage s's is s tiles on
  uint32_t tile_desc_step;   // one tile in descriptor units (tile bytes / 16)
  uint32_t stages;

  __device__ __forceinline__ uint64_t tile_desc(uint32_t stage) const {
    return tile_desc0 + uint64_t(stage * tile_desc_step);
  }
  // The K scale of entry `token` of the unit in `stage`.
  __device__ __forceinline__ float scale(uint32_t stage, int32_t token) const { return scales[stage * kUnit + token]; }
  // The first position of candidate block b of the (compact) unit in `stage`; -1 for none.
  __device__ __forceinline__ int32_t block_first(uint32_t stage, int32_t b) const {
    return block_pos[stage * kMaxBlocksPerUnit + b];
  }
};

// A math thread's place in a unit (the wgmma accumulator layout, mma/wgmma_e4m3.cuh): its quad lane,
// its two tokens, the one whose logit it stores (lanes 0 and 1 of a quad store), and for compact
// units the candidate block holding that token and its offset there.
struct MathLane {
  uint32_t quad_lane;
  int32_t token0, token1, my_token;
  bool storer;
  int32_t my_block, my_offset;
};

// The ring position of unit `local` (stage local % S, parity (local / S) & 1), advanced without a
// division: the math warps issue at about half their peak rate (bench/gpu/RESULTS.md), so the work per
// unit outside the wgmma and the head sum is kept to a few instructions.
struct RingPosition {
  uint32_t stage, phase;
  __device__ __forceinline__ RingPosition(uint32_t local, uint32_t stages)
      : stage(local % stages), phase((local / stages) & 1) {}
  __device__ __forceinline__ void advance(uint32_t by, uint32_t stages) {
    stage += by;
    if (stage >= stages) stage -= stages, phase ^= 1;
  }
};

// One segment's units as one math warpgroup takes them: locals first_local, first_local + M, ... below
// count (unit `local` is unit k0 + local of the segment), its rows' windows (bounds, [lo, hi) per row),
// weights and Q tile, and where its rows' logits go.
struct SegmentUnits {
  int32_t first_local;
  RingPosition first_unit;  // first_local's
  int32_t count, k0;
  int32_t rows, out_row0;
  const int32_t* bounds;
  const float* w_tile;
  const uint8_t* q_tile;  // the segment's Q (its wgmma descriptor: uniform_kmajor_descriptor)
  float* seg_out;
};

}  // namespace dsa::cuda::mainloop
