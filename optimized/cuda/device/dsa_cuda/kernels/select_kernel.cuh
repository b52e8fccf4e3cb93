// The selection kernels: the shared GroupTopK, RowTopK and ShortRowTopK
// (optimized/common/select) on the CUDA vendor layer, one instantiation per
// source (what a launch ranks), and TreeTopK, which the mutant build carries
// (its bugs are the tree's).
// 512 threads of 16 keys: a tile of 8192 entries in registers.
#pragma once

#include "dsa/common/arch/cuda.hpp"
#include "dsa/common/select/group_topk.hpp"
#include "dsa/common/select/row_topk.hpp"
#include "dsa/common/select/short_row_topk.hpp"
#include "dsa/common/select/sources.hpp"
#include "dsa/common/select/topk_tree.hpp"

namespace dsa::cuda::select_kernels {

inline constexpr int kThreads = 512;
inline constexpr int kItems = 16;
inline constexpr int kCapacity = kThreads * kItems;

template <common::select::Bug kBug>
using Tree = common::select::TreeTopK<common::arch::Cuda, kThreads, kItems, kBug>;

// kMinBlocks resident blocks per SM: 2 (64 registers, a few spilled) lets
// one block load its leaf while the other ranks; 1 gives 128 registers. The
// library's kernels take 2; the speed benchmark times both.
inline constexpr int kMinBlocks = 2;
template <class Source, common::select::Bug kBug, int kBlocksPerSm = kMinBlocks>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    tree_topk(Source src, common::select::TreePlan plan, common::select::TreeOutput out) {
  __shared__ typename Tree<kBug>::Shared shared;
  Tree<kBug>::run(common::arch::Cuda{}, shared, src, plan, out);
}

// The group kernel: a row per thread block cluster, one block per SM (128
// registers: the tile stays in registers), a cache of kCacheTiles tiles in
// dynamic shared memory.
inline constexpr int kCacheTiles = 4;
template <int kCache, common::select::Bug kBug = common::select::Bug::none, int kT = kThreads, int kI = kItems>
using Group = common::select::GroupTopK<common::arch::Cuda, kT, kI, kCache, kBug>;

// kT threads of kI keys (a tile of kT * kI entries): the speed benchmark also times 1024 threads of 8.
template <class Source, int kCache, int kBlocksPerSm, int kT = kThreads, int kI = kItems>
__global__ void __launch_bounds__(kT, kBlocksPerSm)
    group_topk(Source src, common::select::GroupPlan plan, int32_t* out) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto& shared = *reinterpret_cast<typename Group<kCache, common::select::Bug::none, kT, kI>::Shared*>(smem);
  Group<kCache, common::select::Bug::none, kT, kI>::run(common::arch::Cuda{}, shared, src, plan, out);
}

// The row kernel: a block per row (a persistent grid walks the rows), two
// blocks of 512 threads per SM (64 registers: tiles of 512 x 8, the next one's
// loads in flight), so that one block streams its row while the other scans its
// histogram or emits; one block of 1024 threads per SM where the rows leave SMs
// to spare (select_row_threads). Shared memory per block (two fit an SM's 228 KB):
// bitmaps for rows of up to 2^17 entries (32 KB), a stage of 16384 entries
// (64 KB: the fused launch's compact row whole) that holds a longer row's list
// (8192 key and position pairs, room for a sample's key to miss by 7 standard
// deviations either way at k 2048).
inline constexpr int kRowItems = 8;
inline constexpr int kRowStage = 16384;
inline constexpr int kRowMaxEntries = 1 << 17;
inline constexpr int kRowBlocksPerSm = 2;
// Rows of values up to this length take the row kernel at any row count, longer ones from kRowKernelLongRowsFrom
// rows; rows of keyed columns take it only past this length (select_launch.cu's dispatch).
inline constexpr int kRowKernelAnyRowsEntries = 32768;
inline constexpr int kRowKernelLongRowsFrom = 4;
template <int kT = kThreads>
using RowOf = common::select::RowTopK<common::arch::Cuda, kT, kRowItems, kRowStage, kRowMaxEntries>;
using Row = RowOf<>;

template <class Source, int kT = kThreads>
__global__ void __launch_bounds__(kT, kRowBlocksPerSm * kThreads / kT) row_topk(Source src, int32_t k, int32_t* out) {
  extern __shared__ __align__(16) unsigned char smem[];
  RowOf<kT>::run(common::arch::Cuda{}, *reinterpret_cast<typename RowOf<kT>::Shared*>(smem), src, k, out);
}

// The short-row kernel: a block per row of at most kShortCapacity entries
// (a persistent grid walks the rows), 1024 threads of 16 keys (64 registers:
// the row in registers), its 49 KB of shared memory dynamic.
inline constexpr int kShortThreads = 1024;
inline constexpr int kShortItems = 16;
using ShortRow = common::select::ShortRowTopK<common::arch::Cuda, kShortThreads, kShortItems>;
inline constexpr int kShortCapacity = ShortRow::kCapacity;

template <class Source>
__global__ void __launch_bounds__(kShortThreads, 1) short_row_topk(Source src, int32_t k, int32_t* out) {
  extern __shared__ __align__(16) unsigned char smem[];
  ShortRow::run(common::arch::Cuda{}, *reinterpret_cast<ShortRow::Shared*>(smem), src, k, out);
}

}  // namespace dsa::cuda::select_kernels
