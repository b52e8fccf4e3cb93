// The top-k of a short row (at most one tile: kThreads x kItems entries) by
// one block, the row's keys in registers: the selection launches' kernel body
// for rows that one block holds, such as the compact rows of the fused
// candidate launch (16384 candidate logits).
//
// Such rows are few and short, so their launch is latency-bound: its time is
// the number of steps one after the other (each a barrier) and the
// instructions each key costs, since one SM holds the whole row. The other
// bodies pay for rows they do not have here (GroupTopK's cache, bitmaps and
// cluster exchanges; BlockTopK's three radix passes over every key and its
// ballot ranks of every key; measured on the H200: 20-23 us for 8 rows of
// 16384, bench/gpu/SELECT_RESULTS.md, run 26). This body takes:
//   1. the keys into registers, each counted in a histogram of its coarse
//      digit (radix_keys.hpp: the digit spreads N(0, 1) logits over hundreds
//      of bins, so the threshold bin holds a few dozen entries; the end bins
//      counted in registers, coarse_histogram.hpp);
//   2. one scan of the histogram: the threshold bin, the entries above it;
//   3. one pass over the keys, compared with the bin's bounds in key space
//      (coarse_digit_floor: no digit per key): an entry above the bin is
//      chosen (its bit set in a bitmap of the row), an entry in the bin goes
//      to a list;
//   4. the list's entries ranked against each other (key, then the lower
//      position: the reference's order), the first `remaining` chosen;
//   5. one scan of the bitmap's popcounts: an entry's output rank is the
//      chosen entries before it in position order.
// So the output is GroupTopK's and the tree's (the reference's set in
// position order, the lowest positions among ties at the cut), the same on
// every run, and no atomic decides who is chosen or where it goes. A
// threshold bin larger than the list (rows of many equal or near-equal
// keys) takes BlockTopK's radix passes over the registers instead, and the
// entries at its exact cut go to a second bitmap: slower, never wrong. Every
// output entry is written once: the chosen, then -1 (skip_decode_fill).
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/radix_keys.hpp"
#include "dsa/common/select/bitmap_ranks.hpp"
#include "dsa/common/select/block_scan.hpp"
#include "dsa/common/select/block_topk.hpp"
#include "dsa/common/select/coarse_histogram.hpp"
#include "dsa/common/threshold.hpp"

namespace dsa::common::select {

template <class Arch, int kThreads_, int kItems_>
struct ShortRowTopK {
  using Block = BlockTopK<Arch, kThreads_, kItems_>;
  static constexpr int kThreads = kThreads_;
  static constexpr int kItems = kItems_;
  static constexpr int kRuns = kItems / 4;
  static constexpr int kCapacity = Block::kCapacity;
  static constexpr int kBins = kCoarseBins;
  static constexpr int kBinsPerThread = (kBins + kThreads - 1) / kThreads;
  static constexpr int kWords = kCapacity / 32;
  static constexpr int kWordsPerThread = (kWords + kThreads - 1) / kThreads;
  // A threshold bin of at most this many entries is ranked by comparisons
  // (each of its entries against all of them: list x list / threads steps).
  static constexpr int kListCap = 512;
  static constexpr int kRankLanes = 16;  // lanes ranking one list entry (a divisor of both lane counts)
  static constexpr int kRankGroups = kThreads / kRankLanes;
  static_assert(kThreads % Arch::kLanes == 0 && Arch::kLanes % kRankLanes == 0, "rank groups within warps");
  static_assert(kCapacity % 32 == 0, "whole bitmap words");

  enum Scalar : int { kBin, kAbove, kCount, kScalars };
  // The way a row went (the tests see every way taken and held to the reference).
  enum class Way : int32_t {
    every_entry,  // at most k entries: every one chosen
    whole_bin,    // the threshold bin taken whole
    listed,       // the threshold bin's entries ranked on the list
    passes,       // a bin past the list: BlockTopK's radix passes
  };
  struct Shared {
    typename Block::Shared block;  // the radix passes of a bin past the list, and the scans' warp totals
    int32_t passes_ready;          // block.hist and its scalars cleared for the radix passes (Block::init)
    int32_t hist[CoarseHistogram<Arch>::kSlots];  // past kBins: a slot per lane that nothing reads
    int32_t scalars[kScalars];
    int32_t list_size;
    uint32_t list_key[kListCap];
    uint32_t list_pos[kListCap];
    alignas(16) uint32_t above_bits[kWords];  // the row's chosen entries (a bin past the list: those above its cut)
    alignas(16) uint32_t tied_bits[kWords];   // a bin past the list: the entries at its cut (chosen or not)
    Way way;                                  // the last row's
  };

  // Clears what a row counts into and marks. Every row ends with it, after a barrier.
  DSA_HD static void clear(const Arch& a, Shared& sh) {
    const int t = a.thread();
    for (int b = t; b < CoarseHistogram<Arch>::kSlots; b += kThreads) sh.hist[b] = 0;
    for (int w = t; w < kWords; w += kThreads) sh.above_bits[w] = 0, sh.tied_bits[w] = 0;
    if (t == 0) sh.list_size = 0, sh.scalars[kBin] = -1;
  }

  // Readies a block's shared memory for its first select_row (each row leaves it ready for the next).
  // The radix passes' three histograms (6144 counters) are cleared by the first row that takes them
  // (ready_passes): most rows never do, and clearing them cost about 100 instructions a warp, 5 % of a
  // row (ncu of the short-row kernel, SELECT_RESULTS.md run 40).
  DSA_HD static void prepare(const Arch& a, Shared& sh) {
    clear(a, sh);
    if (a.thread() == 0) sh.passes_ready = 0;
    a.sync();
  }
  // Clears the radix passes' histograms once per block, before the first row that takes them. Every
  // thread calls it (block-uniform): each reads the flag before the barrier that precedes its write.
  DSA_HD static void ready_passes(const Arch& a, Shared& sh) {
    if (sh.passes_ready) return;
    Block::init(a, sh.block);
    a.sync();
    if (a.thread() == 0) sh.passes_ready = 1;
  }

  // Rows of at most kCapacity entries (the launch's host side sends longer ones elsewhere).
  template <class Source>
  DSA_HD static void run(const Arch& a, Shared& sh, const Source& src, int32_t k, int32_t* out) {
    prepare(a, sh);
    int ring = 0;
    for (int64_t r = a.block(); r < src.rows(); r += a.grid()) select_row(a, sh, src, r, k, out + r * int64_t(k), ring);
  }

  // The threshold bin of the histogram for `need` entries: every thread gets
  // the bin (-1 if fewer entries), the entries above it, its count and the
  // row's entries.
  struct Found {
    int bin = -1;
    int32_t above = 0, count = 0, total = 0;
  };
  DSA_HD static Found threshold(const Arch& a, Shared& sh, int32_t need) {
    const int hi = kBins - a.thread() * kBinsPerThread;
    const int lo = hi - kBinsPerThread < 0 ? 0 : hi - kBinsPerThread;
    uint32_t sum = 0;
    DSA_UNROLL
    for (int i = 0; i < kBinsPerThread; ++i)
      if (lo + i < hi) sum += uint32_t(sh.hist[lo + i]);
    uint32_t total = 0;
    const int above = int(Block::block_exclusive_scan(a, sh.block, sum, total));
    if (hi > lo && above < need && above + int(sum) >= need) {
      const Threshold th = find_threshold(sh.hist + lo, hi - lo, need - above);
      sh.scalars[kBin] = lo + th.bin;
      sh.scalars[kAbove] = int32_t(above + int(th.above));
      sh.scalars[kCount] = sh.hist[lo + th.bin];
    }
    a.sync();
    Found f;
    f.bin = sh.scalars[kBin];
    f.above = sh.scalars[kAbove];
    f.count = sh.scalars[kCount];
    f.total = int32_t(total);
    return f;
  }

  // The way of a row whose histogram gave `f`, for `k` entries (every block of a team takes the same).
  struct Plan {
    Way way;
    int bin;            // -1 where every entry is chosen
    int32_t remaining;  // the entries to choose from the bin
    DSA_HD bool whole() const { return way == Way::whole_bin; }
    DSA_HD bool listed() const { return way == Way::listed; }
    // In key space: an entry is chosen by the marking pass when its key is above `chosen_above` (every
    // entry where every one is chosen: kNoEntryKey is 0), and is in the bin when bin_floor < key <= bin_top.
    DSA_HD uint32_t chosen_above() const { return coarse_digit_floor(whole() ? bin - 1 : bin); }
    DSA_HD uint32_t bin_floor() const { return coarse_digit_floor(bin - 1); }
    DSA_HD uint32_t bin_top() const { return coarse_digit_floor(bin); }
  };
  DSA_HD static Plan plan(const Found& f, int32_t k) {
    // Every entry is chosen (bin -1 then: every digit is above it), the bin is taken whole, or its entries
    // are ranked on the list, or (a bin past the list) by BlockTopK's passes.
    const bool all = f.total <= k || f.bin < 0;
    const int32_t remaining = all ? 0 : k - f.above;
    if (all) return {Way::every_entry, -1, 0};
    if (f.count == remaining) return {Way::whole_bin, f.bin, remaining};
    return {f.count <= kListCap ? Way::listed : Way::passes, f.bin, remaining};
  }

  // One pass over the keys: an entry above the bin (or of a bin taken whole) gets its bit in above_bits
  // (its tile position); returns this thread's entries of a listed bin.
  DSA_HD static int mark(const Arch& a, Shared& sh, const uint32_t (&keys)[kItems], const Plan& pl) {
    const int t = a.thread();
    const uint32_t above = pl.chosen_above();
    // Nothing is listed unless the bin is (an empty range in key space).
    const uint32_t floor = pl.listed() ? pl.bin_floor() : 0xffffffffu, top = pl.bin_top();
    int listed_here = 0;
    DSA_UNROLL
    for (int j = 0; j < kRuns; ++j) {
      const uint32_t p0 = uint32_t(Block::position(t, 4 * j));  // unsigned: / and % by 32 are shifts
      uint32_t chosen = 0;
      DSA_UNROLL
      for (int v = 0; v < 4; ++v) {
        const uint32_t key = keys[4 * j + v];
        chosen |= uint32_t(key > above) << v;
        listed_here += int(key > floor && key <= top);
      }
      // A run's four positions lie in one word (p0 is a multiple of four).
      if (chosen) a.atomic_or_shared(&sh.above_bits[p0 / 32], chosen << (p0 % 32));
    }
    return listed_here;
  }

  // Puts this thread's entries of the listed bin on a list, at slots each warp reserves with one atomic
  // (block_scan.hpp's warp_reserve): reserve(n) returns the first of n slots, put(slot, key, tile
  // position) writes one. Every thread calls it (the shuffles).
  template <class Reserve, class Put>
  DSA_HD static void list_bin(const Arch& a, const uint32_t (&keys)[kItems], const Plan& pl, int listed_here,
                              Reserve&& reserve, Put&& put) {
    const int t = a.thread();
    int slot = warp_reserve(a, listed_here, reserve);
    if (listed_here > 0) {
      const uint32_t floor = pl.bin_floor(), top = pl.bin_top();
      DSA_UNROLL
      for (int i = 0; i < kItems; ++i) {
        const uint32_t key = keys[i];
        if (key > floor && key <= top) put(slot++, key, uint32_t(Block::position(t, i)));
      }
    }
  }

  // The list's entry i is chosen when fewer than `remaining` of the list come before it (a larger key, or
  // the same key at a lower position): the list holds every entry of the bin. chosen(pos) is called for
  // each chosen entry. Each entry is ranked by a group of kRankLanes lanes, each comparing a slice of the
  // list, their counts summed by shuffles: the list x list comparisons spread over the whole block (one
  // thread per entry, each comparison a shared-memory read waited for, took 4-8 us for a list of 100 on
  // the H200).
  template <class Chosen>
  DSA_HD static void rank_list(const Arch& a, Shared& sh, int list_n, int32_t remaining, Chosen&& chosen) {
    const int t = a.thread();
    const int group = t / kRankLanes, member = t % kRankLanes;
    for (int i0 = 0; i0 < list_n; i0 += kRankGroups) {  // the same trip count in every lane: the shuffles
      const int i = i0 + group;
      const bool live = i < list_n;
      const uint32_t key = live ? sh.list_key[i] : 0u, pos = live ? sh.list_pos[i] : 0u;
      int before = 0;
      if (live)
        for (int q = member; q < list_n; q += kRankLanes) {
          const uint32_t kq = sh.list_key[q];
          before += int(kq > key || (kq == key && sh.list_pos[q] < pos));
        }
      DSA_UNROLL
      for (int m = kRankLanes / 2; m >= 1; m /= 2) before += a.shfl(before, Block::lane(a) ^ m);
      if (live && member == 0 && before < remaining) chosen(pos);
    }
  }

  // The bitmaps' entries in position order: each thread's run of words, their counts (above in the high
  // half, tied in the low) and their prefix over the block; an entry's rank is `offset` plus the chosen
  // entries before it (every entry above, the first `ties` at the cut). emit(rank, tile position) for
  // each; returns the chosen entries of the bitmaps.
  template <class Emit>
  DSA_HD static int32_t emit(const Arch& a, Shared& sh, int32_t ties, int32_t offset, Emit&& emit_one) {
    const int t = a.thread();
    const int w0 = t * kWordsPerThread;
    const int own = w0 < kWords ? (kWords - w0 < kWordsPerThread ? kWords - w0 : kWordsPerThread) : 0;
    uint32_t counts = 0;
    for_bitmap_words<kWordsPerThread>(sh.above_bits, sh.tied_bits, w0, own, [&](int, uint32_t up, uint32_t tied) {
      counts += (uint32_t(popc(up)) << 16) + uint32_t(popc(tied));
    });
    uint32_t total = 0;
    const uint32_t prefix = Block::block_exclusive_scan(a, sh.block, counts, total);
    const int32_t tied_total = int32_t(total & 0xffffu);
    const int32_t need = ties < tied_total ? ties : tied_total;
    emit_bitmap_ranks<kWordsPerThread>(sh.above_bits, sh.tied_bits, w0, own, offset + int32_t(prefix >> 16),
                                       int32_t(prefix & 0xffffu), need,
                                       [&](int32_t rank, int64_t p) { emit_one(rank, p); });
    return int32_t(total >> 16) + need;
  }

  template <class Source>
  DSA_HD static void select_row(const Arch& a, Shared& sh, const Source& src, int64_t r, int32_t k, int32_t* row_out,
                                int& ring) {
    const int t = a.thread();
    const int n = int(src.entries(r));
    uint32_t keys[kItems];
    src.template load<kThreads, kItems>(a, r, 0, n, keys);
    CoarseHistogram<Arch> counted;
    DSA_UNROLL
    for (int i = 0; i < kItems; ++i) counted.count(a, sh.hist, keys[i]);
    counted.flush(a, sh.hist);
    a.sync();
    const Found f = threshold(a, sh, k);
    const Plan pl = plan(f, k);
    if (t == 0) sh.way = pl.way;
    const int listed_here = mark(a, sh, keys, pl);
    if (pl.listed())  // block-uniform; the list holds the bin's f.count <= kListCap entries
      list_bin(
          a, keys, pl, listed_here, [&](int n_here) { return a.atomic_add_shared(&sh.list_size, n_here); },
          [&](int slot, uint32_t key, uint32_t pos) {
            if (slot < kListCap) sh.list_key[slot] = key, sh.list_pos[slot] = pos;
          });
    a.sync();

    int32_t ties = 0;  // a bin past the list: the entries at its cut that are chosen, in position order
    if (pl.listed()) {
      const int list_n = sh.list_size < kListCap ? sh.list_size : kListCap;  // guards a list the keys overfill
      rank_list(a, sh, list_n, pl.remaining,
                [&](uint32_t pos) { a.atomic_or_shared(&sh.above_bits[pos / 32], 1u << (pos % 32)); });
      a.sync();
    } else if (pl.way == Way::passes) {
      ready_passes(a, sh);
      const Cut c = Block::find_cut(a, sh.block, keys, k, f.total, ring);
      DSA_UNROLL
      for (int i = 0; i < kItems; ++i) {
        const uint32_t p = uint32_t(Block::position(t, i));
        if (c.cut.above(keys[i])) a.atomic_or_shared(&sh.above_bits[p / 32], 1u << (p % 32));
        if (Block::at_cut(c, keys[i])) a.atomic_or_shared(&sh.tied_bits[p / 32], 1u << (p % 32));
      }
      ties = c.need;
      a.sync();
    }

    const int32_t chosen = emit(a, sh, ties, 0, [&](int32_t rank, int64_t p) {
      if (rank < k) row_out[rank] = src.payload(r, p);
    });
    for (int32_t i = chosen + t; i < k; i += kThreads) row_out[i] = -1;
    a.sync();  // the bitmaps and the list are read before the next row clears them
    clear(a, sh);
    a.sync();
  }
};

}  // namespace dsa::common::select
