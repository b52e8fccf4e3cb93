// The top-k of a row by a group of blocks (a thread block cluster on CUDA,
// one block on gfx942): the selection launches' main kernel body.
//
// Each block of the row's group takes one contiguous part of the row and
// reads it once from global memory: one tile of BlockTopK's capacity stays
// in registers, a few tiles in a shared-memory cache, and only a part beyond
// the cache is read again per pass. The cut is found on the whole row at
// once: every pass (the radix plan of block_topk.hpp, 11, 11 and 10 bits)
// counts each block's entries that match the cut so far into its own
// histogram, the group sums the histograms (each block sums a slice of the
// bins over every block's shared memory, then every block gathers the
// slices), and every block finds the same threshold bin from the same sums.
// So a pass costs a scan of the part and two group barriers, not a merge of
// k entries per block, and no block sorts what another discards.
//
// Emitting: each block knows from its own histograms how many of its entries
// lie above the cut and at it; one exchange gives every block the counts of
// the blocks before it, so each emits its chosen entries (BlockTopK's
// emit_cut, tile by tile) at their ranks in the row's position order: the
// set and the output are the tree's and the reference's (the lowest
// positions among ties at the cut), the same on every run. Every output
// entry is written once: the chosen, then -1 (skip_decode_fill). No
// workspace: nothing survives the launch.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/radix_keys.hpp"
#include "dsa/common/radix_plan.hpp"
#include "dsa/common/select/block_topk.hpp"

namespace dsa::common::select {

inline constexpr int kMaxGroup = 16;

// A group launch: `group` consecutive blocks per row, rows * group blocks.
struct GroupPlan {
  int32_t k = 0;
  int32_t group = 1;
};

// Blocks per row: enough that each block's part fits its cache
// (`cache_entries`), and more while the rows leave resident blocks idle,
// but not blocks of less than half a tile.
inline int32_t choose_group(int64_t rows, int64_t widest, int32_t capacity, int32_t cache_entries,
                            int64_t resident_blocks, int32_t max_group) {
  const int64_t fit = ceil_div(widest, cache_entries);
  const int64_t fill = rows > 0 ? resident_blocks / rows : 1;
  const int64_t useful = ceil_div(widest, capacity / 2);
  int64_t g = max64(fit, min64(fill, useful));
  g = min64(g, max_group);
  return int32_t(max64(g, 1));
}

template <class Arch, int kThreads_, int kItems_, int kCacheTiles_, Bug kBug = Bug::none>
struct GroupTopK {
  using Block = BlockTopK<Arch, kThreads_, kItems_, kBug>;
  static constexpr int kThreads = kThreads_;
  static constexpr int kItems = kItems_;
  static constexpr int kCacheTiles = kCacheTiles_;
  static constexpr int kCapacity = Block::kCapacity;
  static constexpr int kCacheEntries = kCacheTiles * kCapacity;
  static constexpr int kBins = Block::kBins;
  static_assert(kCacheTiles >= 1, "a cache of at least one tile");
  static_assert(kBins % kMaxGroup == 0, "every block of a group reduces a slice of whole bins");

  // Block::Shared's histograms: [0] the group's sums, [1] this block's
  // counts, [2] the slice of the sums this block reduces.
  struct Shared {
    typename Block::Shared block;
    int32_t part_counts[2];  // this block's entries above the cut, at the cut
    int32_t before[3];       // the entries above and at the cut in the blocks before this one; the row's at it
    int32_t above_total;
    uint32_t cache[kCacheEntries];
  };

  DSA_HD static int64_t round4(int64_t n) { return (n + 3) / 4 * 4; }

  // Sum over the block (every thread gets it); ends with a barrier, so calls can follow each other.
  DSA_HD static int32_t block_sum(const Arch& a, Shared& sh, int32_t v) {
    uint32_t total = 0;
    Block::block_exclusive_scan(a, sh.block, uint32_t(v), total);
    a.sync();
    return int32_t(total);
  }

  template <class Source>
  DSA_HD static void run(const Arch& a, Shared& sh, const Source& src, const GroupPlan& plan, int32_t* out) {
    const int groups = a.grid() / a.group_size();
    for (int64_t r = a.block() / a.group_size(); r < src.rows(); r += groups) select_row(a, sh, src, plan, r, out);
  }

  template <class Source>
  DSA_HD static void select_row(const Arch& a, Shared& sh, const Source& src, const GroupPlan& plan, int64_t r,
                                int32_t* out) {
    const int G = a.group_size(), g = a.group_rank(), t = a.thread();
    const int32_t k = plan.k;
    const int64_t n = src.entries(r);
    const int64_t part = round4(ceil_div(n, G));
    const int64_t lo = min64(n, g * part), count = min64(n, lo + part) - lo;
    const int tiles = int(ceil_div(count, kCapacity));
    const bool cached = tiles <= kCacheTiles;
    int32_t* row_out = out + r * int64_t(k);

    uint32_t keys[kItems];
    // Tile `tile` of the part into keys: from the source on the first pass (and
    // every pass past the cache), else from registers (one tile) or the cache.
    auto fetch = [&](int tile, bool first) {
      if (!first && tiles == 1) return;
      uint32_t* c = sh.cache + tile * kCapacity;
      if (!first && cached) {
        DSA_UNROLL
        for (int i = 0; i < kItems; ++i) keys[i] = c[i * kThreads + t];
        return;
      }
      const int64_t base = int64_t(tile) * kCapacity;
      src.template load<kThreads, kItems>(a, r, lo + base, min64(kCapacity, count - base), keys);
      if (first && cached && tiles > 1) {
        DSA_UNROLL
        for (int i = 0; i < kItems; ++i) c[i * kThreads + t] = keys[i];
      }
    };

    int32_t* sums = sh.block.hist[0];
    int32_t* local = sh.block.hist[1];
    int32_t* slice = sh.block.hist[2];
    int32_t* scalars = sh.block.pass_scalars[0];
    RadixCut cut;
    int32_t remaining = k, my_above = 0, my_tied = 0;
    constexpr RadixPlan radix = plan_11_11_10();
    for (int p = 0; p < radix.passes; ++p) {
      const RadixPass pass = radix.pass[p];
      const int bins = pass.bins();
      for (int b = t; b < bins; b += kThreads) local[b] = 0;
      if (t == 0) scalars[Block::kBin] = -1;
      a.sync();
      for (int tile = 0; tile < tiles; ++tile) {
        fetch(tile, p == 0);
        DSA_UNROLL
        for (int i = 0; i < kItems; ++i) {
          const bool in = keys[i] != kNoEntryKey && cut.matches(keys[i]);
          if (p > 0 && !a.ballot(in)) continue;  // past the first pass most of a warp's entries are out
          Block::add(a, local, in, pass.digit(keys[i]));
        }
      }
      a.group_sync();  // every block's counts are in, and every block has read the last pass's slices
      // This block's slice of the sums, one (bin, block) pair per thread at a time: block q >= 1 sums
      // bins [(q - 1) * per_block, q * per_block), block 0 the top ones from (G - 1) * per_block (with
      // those left over when G does not divide the bins).
      const int per_block = bins / G;
      const int slice_base = g == 0 ? (G - 1) * per_block : (g - 1) * per_block;
      const int slice_bins = g == 0 ? bins - (G - 1) * per_block : per_block;
      for (int b = t; b < slice_bins; b += kThreads) slice[slice_base + b] = 0;
      a.sync();
      for (int j = t; j < slice_bins * G; j += kThreads) {
        const int b = slice_base + j % slice_bins;
        const int32_t v = a.group_shared(local, j / slice_bins)[b];
        if (v != 0) a.atomic_add_shared(&slice[b], v);
      }
      a.group_sync();  // every slice is summed
      for (int b = t; b < bins; b += kThreads) {
        const int owner = b >= (G - 1) * per_block ? 0 : b / per_block + 1;
        sums[b] = a.group_shared(slice, owner)[b];
      }
      a.sync();
      // The threshold bin of the sums: each thread scans its run of bins (top bins first).
      const int per = (bins + kThreads - 1) / kThreads;
      const int hi = bins - t * per;
      const int run_lo = hi - per < 0 ? 0 : hi - per;
      uint32_t run_sum = 0;
      for (int b = run_lo; b < hi; ++b) run_sum += uint32_t(sums[b]);
      uint32_t total = 0;
      const int above = int(Block::block_exclusive_scan(a, sh.block, run_sum, total));
      if (hi > run_lo && above < remaining && above + int(run_sum) >= remaining) {
        const Threshold th = find_threshold(sums + run_lo, hi - run_lo, remaining - above);
        scalars[Block::kBin] = run_lo + th.bin;
        scalars[Block::kAbove] = int32_t(above + int(th.above));
        scalars[Block::kCount] = sums[run_lo + th.bin];
      }
      a.sync();
      const int bin = scalars[Block::kBin];
      if (p == 0 && int64_t(total) <= int64_t(k)) {  // every entry is chosen: the cut {0, 0} matches all
        int32_t mine = 0;
        for (int b = run_lo; b < hi; ++b) mine += local[b];
        my_tied = block_sum(a, sh, mine);
        remaining = int32_t(total);
        break;
      }
      if (bin < 0) {  // fewer entries than needed past the first pass: only a defect's state gets here
        remaining = 0;
        break;
      }
      int32_t mine = 0;
      for (int b = run_lo; b < hi; ++b) mine += b > bin ? local[b] : 0;
      my_above += block_sum(a, sh, mine);
      my_tied = local[bin];
      remaining -= scalars[Block::kAbove];
      const int32_t in_bin = scalars[Block::kCount];
      cut = cut.refined(pass, uint32_t(bin));
      a.sync();  // scalars and local are read before the next pass writes them
      if (in_bin == remaining) break;  // the threshold bin is taken whole
    }

    // Every block's counts, then the ranks of this block's chosen entries.
    if (t == 0) {
      sh.part_counts[0] = my_above;
      sh.part_counts[1] = my_tied;
    }
    a.sync();
    a.group_sync();
    if (t == 0) {
      int32_t above_before = 0, tied_before = 0, above_all = 0, tied_all = 0;
      for (int q = 0; q < G; ++q) {
        const int32_t* c = a.group_shared(sh.part_counts, q);
        if (q < g) above_before += c[0], tied_before += c[1];
        above_all += c[0];
        tied_all += c[1];
      }
      sh.before[0] = above_before;
      sh.before[1] = tied_before;
      sh.before[2] = tied_all;
      sh.above_total = above_all;
    }
    a.group_sync();  // no block leaves (or starts its next row) while another reads its counts
    const int32_t above_before = sh.before[0], tied_before = sh.before[1], tied_all = sh.before[2];
    const int32_t above_all = sh.above_total;
    const int32_t ties = remaining;  // the first `ties` entries at the cut, in position order
    int32_t need = ties - tied_before > 0 ? ties - tied_before : 0;
    int offset = int(above_before + (tied_before < ties ? tied_before : ties));
    Cut c;
    c.cut = cut;
    for (int tile = 0; tile < tiles; ++tile) {
      fetch(tile, false);
      c.need = need;
      int tile_tied = 0;
      const int64_t first = lo + int64_t(tile) * kCapacity;
      offset = Block::emit_cut(
          a, sh.block, keys, c, offset, k,
          [&](int rank, int item) { row_out[rank] = src.payload(r, first + Block::position(t, item)); }, &tile_tied);
      need -= need < tile_tied ? need : tile_tied;
    }
    const int64_t chosen = min64(k, int64_t(above_all) + (ties < tied_all ? ties : tied_all));
    for (int64_t i = chosen + int64_t(g) * kThreads + t; i < k; i += int64_t(G) * kThreads) row_out[i] = -1;
    a.sync();  // the next row's first pass rewrites the histograms
  }
};

}  // namespace dsa::common::select
