// The ranking step of the fused candidate launch (candidate_logits_top_k in one launch, the logits
// kernel with kRankRows): the compact logits kernel, then in the same blocks the top k of each row
// it completed, remapped to positions.
//
// A compact row's units are spread over a few blocks (the schedule's contiguous ranges). Each math
// warpgroup, when it leaves a row, adds the units it computed there to the row's count in global
// memory (its stores ordered before by a barrier and a fence); the warpgroup whose add completes
// the count lists the row in its block. No block waits for another: the block that finishes a row
// last ranks it, after its own units, so no spin and no co-residency assumption. Its first 512
// threads (three math warpgroups and the loaders, or four math warpgroups) rank each listed row
// with ShortRowTopK (32 keys a thread: rows of up to 16384 entries), each run's slot loaded with its
// values (through L2) and kept in shared memory for the outputs (StagedCandidateRow). The output is
// the two-kernel path's array.
#pragma once

#include <cstdint>

#include "dsa/common/arch/cuda.hpp"
#include "dsa/common/select/short_row_topk.hpp"
#include "dsa/common/select/sources.hpp"
#include "dsa_cuda/common/ptx.cuh"
#include "dsa_cuda/kernels/logits_params.cuh"

namespace dsa::cuda::epilogue {

inline constexpr int kRankThreads = 512;
inline constexpr int kRankItems = 32;
inline constexpr int kRankCapacity = kRankThreads * kRankItems;  // entries of a row the launch ranks
inline constexpr uint32_t kRankBarrier = 8;  // a named barrier of its own (1-4 are the math warpgroups')

// The ranking's view of its block: the first kRankThreads threads meet at a named barrier (with four
// math warpgroups the loaders have left), and values come through L2, not the L1 of this SM, since
// other blocks of the launch wrote them.
struct RankArch : common::arch::Cuda {
  __device__ void sync() const { ptx::named_barrier(kRankBarrier, kRankThreads); }
  __device__ void load4(const float* p, float (&v)[4]) const {
    const float4 x = __ldcg(reinterpret_cast<const float4*>(p));
    v[0] = x.x;
    v[1] = x.y;
    v[2] = x.z;
    v[3] = x.w;
  }
};
using RankTopK = common::select::ShortRowTopK<RankArch, kRankThreads, kRankItems>;

// In the ring's shared memory, free once the block's units are computed.
struct RankSmem {
  RankTopK::Shared topk;
  int32_t blocks[kRankCapacity / 8];  // the row's slots (blocks of 8 entries at least), staged by the load
};

// The entries a row's ranking takes: below L_r (what the kernel writes) and the span's end.
__device__ __forceinline__ int32_t ranked_length(const kernels::LogitsParams& p, int32_t r) {
  const int64_t span = p.top_k_span.length(r);
  const int32_t len = kernels::visible_len(p, r / p.next_n, r % p.next_n);
  return span < len ? int32_t(span) : len;
}

// A math warpgroup leaves compact row `seg` having computed `mine` of its `total` units; all 128
// threads call it. ranked: [0] the rows listed in this block, then the rows (kMaxRankedRows at most:
// the host's launch checks that no block's range reaches more rows).
__device__ __forceinline__ void release_row_units(const kernels::LogitsParams& p, int32_t seg, int32_t mine,
                                                  int32_t total, uint32_t warpgroup, int32_t* ranked) {
  ptx::named_barrier(1 + warpgroup, 128);  // the warpgroup's stores are made before its count
  if (threadIdx.x % 128 != 0 || mine == 0) return;
  __threadfence();
  const int32_t before = atomicAdd(&p.row_done[seg], mine);
  if (before + mine != total) return;
  __threadfence();        // the other blocks' stores of the row before this block reads them
  p.row_done[seg] = 0;    // every unit of the row is counted: zero again for the next launch
  const int32_t at = atomicAdd(&ranked[0], 1);
  if (at >= kernels::kMaxRankedRows) __trap();  // the launch's check makes this unreachable
  ranked[1 + at] = seg;
}

// The block's ranking, after its own units: every thread of the block calls it once.
__device__ __forceinline__ void rank_compact_rows(const kernels::LogitsParams& p, uint8_t* ring, const int32_t* ranked) {
  if (threadIdx.x >= uint32_t(kRankThreads)) return;
  const RankArch a;
  RankSmem& sh = *reinterpret_cast<RankSmem*>(ring);
  a.sync();  // every unit of the block computed (the ring is free) and every row it completed listed
  const int32_t listed = ranked[0];
  RankTopK::prepare(a, sh.topk);
  int cut_ring = 0;
  for (int32_t i = 0; i < listed; ++i) {
    const int32_t r = ranked[1 + i];
    const common::select::StagedCandidateRow src{p.out + int64_t(r) * p.out_stride, p.candidates + int64_t(r) * p.slots,
                                                 sh.blocks, p.slots, p.block, ranked_length(p, r)};
    RankTopK::select_row(a, sh.topk, src, 0, p.top_k, p.top_k_out + int64_t(r) * p.top_k, cut_ring);
  }
  // A row of no unit (L_r = 0) has no entry: -1 throughout, its rows spread over the blocks.
  for (int64_t r = blockIdx.x; r < p.num_segments; r += gridDim.x)
    if (p.unit_prefix[r + 1] == p.unit_prefix[r])
      for (int32_t j = a.thread(); j < p.top_k; j += kRankThreads) p.top_k_out[r * p.top_k + j] = -1;
}

}  // namespace dsa::cuda::epilogue
