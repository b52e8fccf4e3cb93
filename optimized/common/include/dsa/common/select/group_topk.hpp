// The top-k of a row by a group of blocks (a thread block cluster on CUDA,
// one block on gfx942): the selection launches' main kernel body.
//
// Each block of the row's group takes one contiguous part of the row and
// reads it once from global memory into a shared-memory cache of keys in
// position order. The cut is found on the whole row at once: every pass (the
// radix plan of block_topk.hpp, 11, 11 and 10 bits) counts each block's
// entries that match the cut so far into its own histogram, the group sums
// the histograms (each block sums a slice of the bins over every block's
// shared memory, then every block gathers the slices), and every block finds
// the same threshold bin from the same sums. So a pass costs a scan and two
// group barriers, not a merge of k entries per block.
//
// Only the first pass reads every key. One scan of the cache then marks the
// entries above the first pass's bin in a bitmap of the part and lists the
// positions of those in it; passes 2 and 3 count that list only (a bin too
// large for the list is counted from the cache instead). The list's entries
// above the final cut join the bitmap, those at it go to a second bitmap.
// Emitting is a block scan of the two bitmaps' popcounts: an entry's output
// rank is the chosen entries before it in position order (every entry above
// the cut, and the first `need` at it, need shared out over the group's
// blocks in position order), so the set and the output are the tree's and
// the reference's (the lowest positions among ties at the cut), the same on
// every run, and no atomic decides who is chosen or where it goes.
//
// A part larger than the cache (rows past group x cache entries) takes the
// streamed path: the part read again per pass, one tile at a time, and
// BlockTopK's emit_cut per tile. Every output entry is written once: the
// chosen, then -1 (skip_decode_fill). No workspace: nothing survives the launch.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/radix_keys.hpp"
#include "dsa/common/radix_plan.hpp"
#include "dsa/common/select/bitmap_ranks.hpp"
#include "dsa/common/select/block_topk.hpp"
#include "dsa/common/select/coarse_histogram.hpp"

namespace dsa::common::select {

inline constexpr int kMaxGroup = 16;

// A group launch: `group` consecutive blocks per row, rows * group blocks;
// or, with `row_kernel`, RowTopK (row_topk.hpp): a block per row, no cluster;
// or, with `short_row`, ShortRowTopK (short_row_topk.hpp): a block per row
// that one block's registers hold.
struct GroupPlan {
  int32_t k = 0;
  int32_t group = 1;
  bool row_kernel = false;
  bool short_row = false;
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
  static constexpr int kWords = kCacheEntries / 32;
  // The first pass's threshold bin holds a few hundred of a part's entries
  // on smooth data; a part of many ties counts its bin from the cache.
  static constexpr int kListCap = kCacheEntries / 8;
  static constexpr int kQuadsPerThread = kCacheEntries / 4 / kThreads;  // a part's quads, over the block
  static_assert(kCacheEntries % (4 * kThreads) == 0 && kQuadsPerThread <= 16, "a thread's quads' entries in 64 bits");
  static_assert(kCacheTiles >= 1, "a cache of at least one tile");
  static_assert(kBins % kMaxGroup == 0, "every block of a group reduces a slice of whole bins");
  static_assert(kCacheEntries % 32 == 0 && kCacheEntries < (1 << 16), "positions in 16 bits, counts packed in 16");

  // Block::Shared's histograms: [0] the group's sums, [1] this block's
  // counts, [2] the slice of the sums this block reduces.
  struct Shared {
    typename Block::Shared block;
    int32_t part_counts[2];  // this block's entries above the cut, at the cut
    int32_t before[3];       // the entries above and at the cut in the blocks before this one; the row's at it
    int32_t above_total;
    int32_t list_size;
    alignas(16) uint32_t above_bits[kWords];  // the part's entries above the cut
    alignas(16) uint32_t tied_bits[kWords];   // the part's entries at the cut (chosen or not)
    uint16_t list[kListCap];                  // positions in the first pass's threshold bin
    alignas(16) uint32_t cache[kCacheEntries];
  };
  struct alignas(16) Quad {
    uint32_t key[4];
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
    for (int64_t r = a.block() / a.group_size(); r < src.rows(); r += groups) {
      const int64_t part = round4(ceil_div(src.entries(r), a.group_size()));
      if (part <= kCacheEntries)
        select_cached(a, sh, src, plan, r, out);
      else
        select_streamed(a, sh, src, plan, r, out);
    }
  }

  // A pass's threshold bin over the group: `local` holds this block's counts
  // (then a barrier). Every block gets the same bin, the entries above it
  // (th.above), its count (th.count) and the sum of all bins (total).
  struct Found {
    int bin = -1;
    int32_t above = 0, count = 0;
    int64_t total = 0;
  };
  DSA_HD static Found group_threshold(const Arch& a, Shared& sh, int bins, int32_t remaining) {
    const int G = a.group_size(), g = a.group_rank(), t = a.thread();
    int32_t* sums = sh.block.hist[0];
    int32_t* local = sh.block.hist[1];
    int32_t* slice = sh.block.hist[2];
    int32_t* scalars = sh.block.pass_scalars[0];
    if (t == 0) scalars[Block::kBin] = -1;
    a.group_sync();  // every block's counts are in, and every block has read the last pass's slices
    // This block's slice of the sums (block q >= 1 sums bins [(q - 1) * per_block, q * per_block), block 0
    // the top ones from (G - 1) * per_block, with those left over when G does not divide the bins), a bin
    // per thread over every block's counts; then every block gathers the slices.
    const int per_block = bins / G;
    const int slice_base = g == 0 ? (G - 1) * per_block : (g - 1) * per_block;
    const int slice_bins = g == 0 ? bins - (G - 1) * per_block : per_block;
    for (int b = t; b < slice_bins; b += kThreads) {
      int32_t s = 0;
      for (int q = 0; q < G; ++q) s += a.group_shared(local, q)[slice_base + b];
      slice[slice_base + b] = s;
    }
    a.group_sync();  // every slice is summed
    for (int q = 0; q < G; ++q) {
      const int base = q == 0 ? (G - 1) * per_block : (q - 1) * per_block;
      const int n = q == 0 ? bins - (G - 1) * per_block : per_block;
      const int32_t* from = a.group_shared(slice, q);
      for (int b = t; b < n; b += kThreads) sums[base + b] = from[base + b];
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
    Found f;
    f.bin = scalars[Block::kBin];
    f.above = scalars[Block::kAbove];
    f.count = scalars[Block::kCount];
    f.total = int64_t(total);
    a.sync();  // scalars are read before the next pass writes them
    return f;
  }

  // Every block's counts of entries above and at the cut; returns this
  // block's first output rank and how many of its entries at the cut it takes.
  struct Share {
    int32_t offset = 0, need = 0;
    int64_t chosen = 0;  // the row's chosen entries
  };
  DSA_HD static Share share_out(const Arch& a, Shared& sh, int32_t my_above, int32_t my_tied, int32_t ties) {
    const int G = a.group_size(), g = a.group_rank(), t = a.thread();
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
    Share s;
    s.need = ties - tied_before > 0 ? ties - tied_before : 0;
    s.offset = above_before + (tied_before < ties ? tied_before : ties);
    s.chosen = int64_t(sh.above_total) + (ties < tied_all ? ties : tied_all);
    return s;
  }

  DSA_HD static void fill_tail(const Arch& a, int64_t chosen, int32_t k, int32_t* row_out) {
    const int G = a.group_size(), g = a.group_rank(), t = a.thread();
    for (int64_t i = chosen + int64_t(g) * kThreads + t; i < k; i += int64_t(G) * kThreads) row_out[i] = -1;
  }

  // A part that fits the cache: read once, the later passes over the first pass's threshold bin only.
  template <class Source>
  DSA_HD static void select_cached(const Arch& a, Shared& sh, const Source& src, const GroupPlan& plan, int64_t r,
                                   int32_t* out) {
    const int G = a.group_size(), g = a.group_rank(), t = a.thread();
    const int32_t k = plan.k;
    const int64_t n = src.entries(r);
    const int64_t part = round4(ceil_div(n, G));
    const int64_t lo = min64(n, g * part);
    const int count = int(min64(n, lo + part) - lo);
    const int tiles = int(ceil_div(count, kCapacity));
    const int quads = (count + 3) / 4;
    const int words = (count + 31) / 32;
    int32_t* row_out = out + r * int64_t(k);
    int32_t* local = sh.block.hist[1];
    constexpr RadixPlan radix = plan_11_11_10();

    for (int b = t; b < kBins; b += kThreads) local[b] = 0;
    for (int w = t; w < words; w += kThreads) sh.above_bits[w] = 0, sh.tied_bits[w] = 0;
    if (t == 0) sh.list_size = 0;
    a.sync();
    // Pass 1: the part into the cache (no entry past it, up to the quad), its first digits counted;
    // the next tile's loads are in flight while this one is counted.
    uint32_t keys[kItems], next[kItems];
    // The first digit (the key's top 11 bits) one plain atomic a key: -inf and NaN are single keys (their digits
    // hold no other), counted in registers and added once per warp, so rows dominated by them do not serialise
    // on one counter. The peers' shared counter of Block::add cost the short-row kernel 28 instructions a key
    // (SELECT_RESULTS.md run 34); a digit shared by most of a warp's lanes (a row of one finite value) is left
    // to the hardware's serialisation of the atomics.
    int32_t minus_inf = 0, nan = 0;
    if (tiles > 0) src.template load<kThreads, kItems>(a, r, lo, min64(kCapacity, count), next);
    for (int tile = 0; tile < tiles; ++tile) {
      const int base = tile * kCapacity;
      DSA_UNROLL
      for (int i = 0; i < kItems; ++i) keys[i] = next[i];
      if (tile + 1 < tiles)
        src.template load<kThreads, kItems>(a, r, lo + base + kCapacity, min64(kCapacity, count - base - kCapacity), next);
      DSA_UNROLL
      for (int j = 0; j < kItems / 4; ++j) {
        const int p0 = base + int(item_position<kThreads>(t, j * 4));
        if (p0 < count) {
          Quad q;
          DSA_UNROLL
          for (int v = 0; v < 4; ++v) q.key[v] = keys[j * 4 + v];
          *reinterpret_cast<Quad*>(sh.cache + p0) = q;
        }
      }
      DSA_UNROLL
      for (int i = 0; i < kItems; ++i) {
        const uint32_t key = keys[i];
        minus_inf += key == kMinusInfKey;
        nan += key == kNaNKey;
        if (key != kNoEntryKey && key != kMinusInfKey && key != kNaNKey)
          a.atomic_add_shared(&local[radix.pass[0].digit(key)], 1);
      }
    }
    CoarseHistogram<Arch>::warp_add(a, &local[radix.pass[0].digit(kMinusInfKey)], minus_inf);
    CoarseHistogram<Arch>::warp_add(a, &local[radix.pass[0].digit(kNaNKey)], nan);
    a.sync();
    const Found first = group_threshold(a, sh, radix.pass[0].bins(), k);
    // The first scan's split: keys from `from` up are at or above the bin; of those, a first digit
    // above `above_digit` is above the cut, and the rest (digit == bin) go to the list.
    uint32_t from = 1;
    int above_digit = -1;
    int32_t remaining = int32_t(first.total);  // every entry is chosen
    bool listed = false, on_list = false;
    if (first.total > k && first.bin >= 0) {
      remaining = k - first.above;
      from = uint32_t(first.bin) << radix.pass[0].shift;
      from = from > 1u ? from : 1u;
      above_digit = first.count == remaining ? first.bin - 1 : first.bin;
      listed = above_digit == first.bin;
      on_list = listed && local[first.bin] <= kListCap;
    } else if (first.bin < 0 && first.total > k) {  // only a defect's state gets here
      remaining = 0;
      from = 0xffffffffu;
      above_digit = kBins;
    }
    // One pass over this thread's quads of the cache (quad u = t + i * kThreads): an entry above
    // `above_digit` gets its bit in above_bits; one in the bin (on_list) its bit in `in_bin`, and the
    // warp reserves the list's slots at once (warp_reserve). A ballot and an atomic a key (and a ballot
    // a quad to skip those below the bin, rarely all of a warp's) made this pass about 140
    // instructions a warp a quad (ncu of the group kernel at 64 x 32k, SELECT_RESULTS.md run 38). The
    // quads are a loop, not unrolled: unrolled, their loads were hoisted together and the kernel over
    // candidate columns spilled 2 KB (and ran 12-17 % slower). The cache holds no entry past the part
    // (kNoEntryKey up to the quad), and from >= 1 excludes those.
    uint64_t in_bin = 0;  // bit 4 i + v: entry v of the thread's quad i
    DSA_UNROLL_NONE
    for (int i = 0; i < kQuadsPerThread; ++i) {
      const int u = t + i * kThreads;
      if (u >= quads) break;
      const Quad q = *reinterpret_cast<const Quad*>(sh.cache + 4 * u);
      uint32_t above_mask = 0;
      DSA_UNROLL
      for (int v = 0; v < 4; ++v) {
        const bool in = q.key[v] >= from;
        const bool up = in && int(q.key[v] >> radix.pass[0].shift) > above_digit;
        above_mask |= uint32_t(up) << v;
        in_bin |= uint64_t(in && !up) << (4 * i + v);
      }
      if (above_mask) a.atomic_or_shared(&sh.above_bits[u / 8], above_mask << (4 * (u % 8)));
    }
    if (on_list) {  // block-uniform
      int slot = warp_reserve(a, popc(in_bin), [&](int n_here) { return a.atomic_add_shared(&sh.list_size, n_here); });
      DSA_UNROLL_NONE
      for (int i = 0; i < kQuadsPerThread; ++i) {
        const uint32_t four = uint32_t(in_bin >> (4 * i)) & 15u;
        if (four == 0) continue;
        const int u = t + i * kThreads;
        DSA_UNROLL
        for (int v = 0; v < 4; ++v)
          if (four >> v & 1u) sh.list[slot++] = uint16_t(4 * u + v);
      }
    }
    a.sync();
    // Passes 2 and 3 over the threshold bin: the list, or the cache's entries in the bin.
    const int list_n = sh.list_size;
    RadixCut cut;
    if (listed) cut = cut.refined(radix.pass[0], uint32_t(first.bin));
    const uint32_t first_bin = uint32_t(first.bin);
    auto for_bin = [&](auto&& visit) {
      if (on_list) {
        for (int i = t; i - t < list_n; i += kThreads) {
          const bool ok = i < list_n;
          const int p = ok ? sh.list[i] : 0;
          visit(ok, p, ok ? sh.cache[p] : kNoEntryKey);
        }
      } else {
        for (int p = t; p - t < count; p += kThreads) {
          const uint32_t key = p < count ? sh.cache[p] : kNoEntryKey;
          visit(key != kNoEntryKey && (key >> radix.pass[0].shift) == first_bin, p, key);
        }
      }
    };
    for (int pass_index = 1; listed && pass_index < radix.passes; ++pass_index) {
      const RadixPass pass = radix.pass[pass_index];
      for (int b = t; b < pass.bins(); b += kThreads) local[b] = 0;
      a.sync();
      for_bin([&](bool in, int, uint32_t key) { Block::add(a, local, in && cut.matches(key), pass.digit(key)); });
      a.sync();
      const Found f = group_threshold(a, sh, pass.bins(), remaining);
      if (f.bin < 0) {  // fewer entries than needed: only a defect's state gets here
        remaining = 0;
        break;
      }
      remaining -= f.above;
      cut = cut.refined(pass, uint32_t(f.bin));
      if (f.count == remaining) break;  // the threshold bin is taken whole
    }
    if (listed) {
      for_bin([&](bool in, int p, uint32_t key) {
        if (in && cut.above(key)) a.atomic_or_shared(&sh.above_bits[p / 32], 1u << (p % 32));
        if (in && cut.matches(key)) a.atomic_or_shared(&sh.tied_bits[p / 32], 1u << (p % 32));
      });
    }
    a.sync();

    // Each thread's run of words: its counts, their prefix over the block, then the row's share.
    constexpr int kPer = (kWords + kThreads - 1) / kThreads;
    const int w0 = t * kPer;
    const int own = w0 < words ? (words - w0 < kPer ? words - w0 : kPer) : 0;
    uint32_t counts = 0;
    for_bitmap_words<kPer>(sh.above_bits, sh.tied_bits, w0, own, [&](int, uint32_t up, uint32_t tied) {
      counts += (uint32_t(popc(up)) << 16) + uint32_t(popc(tied));
    });
    uint32_t total = 0;
    uint32_t prefix = Block::block_exclusive_scan(a, sh.block, counts, total);
    const int32_t ties = listed ? remaining : 0;
    const Share s = share_out(a, sh, int32_t(total >> 16), int32_t(total & 0xffffu), ties);
    const int32_t need = s.need;
    emit_bitmap_ranks<kPer>(sh.above_bits, sh.tied_bits, w0, own, int32_t(prefix >> 16), int32_t(prefix & 0xffffu),
                            need, [&](int32_t rank, int64_t p) {
                              if (s.offset + rank < k) row_out[s.offset + rank] = src.payload(r, lo + p);
                            });
    fill_tail(a, s.chosen, k, row_out);
    a.sync();  // the next row's first pass rewrites the histograms and the bitmaps
  }

  // A part past the cache: read again per pass, tile by tile, and emitted by BlockTopK's emit_cut.
  template <class Source>
  DSA_HD static void select_streamed(const Arch& a, Shared& sh, const Source& src, const GroupPlan& plan, int64_t r,
                                     int32_t* out) {
    const int G = a.group_size(), g = a.group_rank(), t = a.thread();
    const int32_t k = plan.k;
    const int64_t n = src.entries(r);
    const int64_t part = round4(ceil_div(n, G));
    const int64_t lo = min64(n, g * part), count = min64(n, lo + part) - lo;
    const int tiles = int(ceil_div(count, kCapacity));
    int32_t* row_out = out + r * int64_t(k);
    uint32_t keys[kItems];
    int32_t* local = sh.block.hist[1];
    RadixCut cut;
    int32_t remaining = k, my_above = 0, my_tied = 0;
    constexpr RadixPlan radix = plan_11_11_10();
    for (int p = 0; p < radix.passes; ++p) {
      const RadixPass pass = radix.pass[p];
      const int bins = pass.bins();
      for (int b = t; b < bins; b += kThreads) local[b] = 0;
      a.sync();
      for (int tile = 0; tile < tiles; ++tile) {
        const int64_t base = int64_t(tile) * kCapacity;
        src.template load<kThreads, kItems>(a, r, lo + base, min64(kCapacity, count - base), keys);
        DSA_UNROLL
        for (int i = 0; i < kItems; ++i) {
          const bool in = keys[i] != kNoEntryKey && cut.matches(keys[i]);
          if (p > 0 && !a.ballot(in)) continue;  // past the first pass most of a warp's entries are out
          Block::add(a, local, in, pass.digit(keys[i]));
        }
      }
      a.sync();
      const Found f = group_threshold(a, sh, bins, remaining);
      // This thread's run of bins in group_threshold's order: its share of the block's counts.
      const int per = (bins + kThreads - 1) / kThreads;
      const int hi = bins - t * per;
      const int run_lo = hi - per < 0 ? 0 : hi - per;
      if (p == 0 && f.total <= int64_t(k)) {  // every entry is chosen: the cut {0, 0} matches all
        int32_t mine = 0;
        for (int b = run_lo; b < hi; ++b) mine += local[b];
        my_tied = block_sum(a, sh, mine);
        remaining = int32_t(f.total);
        break;
      }
      if (f.bin < 0) {  // fewer entries than needed past the first pass: only a defect's state gets here
        remaining = 0;
        break;
      }
      int32_t mine = 0;
      for (int b = run_lo; b < hi; ++b) mine += b > f.bin ? local[b] : 0;
      my_above += block_sum(a, sh, mine);
      my_tied = local[f.bin];
      remaining -= f.above;
      cut = cut.refined(pass, uint32_t(f.bin));
      a.sync();  // local is read before the next pass writes it
      if (f.count == remaining) break;  // the threshold bin is taken whole
    }

    const int32_t ties = remaining;  // the first `ties` entries at the cut, in position order
    const Share s = share_out(a, sh, my_above, my_tied, ties);
    int32_t need = s.need;
    int offset = int(s.offset);
    Cut c;
    c.cut = cut;
    for (int tile = 0; tile < tiles; ++tile) {
      const int64_t first = lo + int64_t(tile) * kCapacity;
      src.template load<kThreads, kItems>(a, r, first, min64(kCapacity, count - int64_t(tile) * kCapacity), keys);
      c.need = need;
      int tile_tied = 0;
      offset = Block::emit_cut(
          a, sh.block, keys, c, offset, k,
          [&](int rank, int item) { row_out[rank] = src.payload(r, first + Block::position(t, item)); }, &tile_tied);
      need -= need < tile_tied ? need : tile_tied;
    }
    fill_tail(a, s.chosen, k, row_out);
    a.sync();  // the next row's first pass rewrites the histograms
  }
};

}  // namespace dsa::common::select
