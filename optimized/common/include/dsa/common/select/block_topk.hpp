// One block's exact top-k over keys held in registers: the core of every
// selection kernel (decode top-k, candidate selection, candidate top-k, the
// fused candidate launch), written once against the vendor layer (arch/).
//
// The order is total: a larger key first, then the lower position in the
// source's order. So the chosen set is unique (the same on every run and every
// GPU: tensor-parallel ranks agree, AITER #4376), and the chosen entries come
// out in that order, which lets a merge of several blocks' outputs keep it
// (select/topk_tree.hpp). For a dense row that order is the column's, so the
// set is the reference's (lowest index on ties); for candidate columns it is
// the compact column's, which differs from the position's when the candidate
// blocks are not sorted (still deterministic; SPEC 7 takes any tie).
//
// Layout: thread t holds kItems keys in select/layout.hpp's order (runs of
// four consecutive positions). Key 0 is "no entry".
//
// Finding the cut: up to three radix passes of 11, 11 and 10 bits (the plan
// in radix_plan.hpp), each a histogram in shared memory and a block-wide scan
// for the threshold bin. A pass stops early when its threshold bin is taken
// whole. After the first pass the entries of the threshold bin are copied to
// a list when they fit, so the later passes read the list, not every key.
// The histograms live in a ring of three: a pass counts into one slot while
// clearing the next pass's slot, which saves a barrier per pass; `ring`
// counts the passes a block has run, across all the selections it makes.
//
// Emitting: the entries above the cut, and the first `need` entries at the
// cut in position order, get their output rank from one block-wide scan of
// per-warp counts (ballots), so no atomic decides who is chosen or where it
// goes. A NaN is the largest key (SPEC 6) and -inf the smallest value: rows
// dominated by either are ordinary rows of many equal keys.
//
// Bug selects a re-created bug for the mutant builds (never in a library).
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/radix_keys.hpp"
#include "dsa/common/radix_plan.hpp"
#include "dsa/common/threshold.hpp"
#include "dsa/common/select/block_scan.hpp"
#include "dsa/common/select/layout.hpp"

namespace dsa::common::select {

// Bugs of the mutant catalog, injected into the kernel (docs/mutants.md).
enum class Bug : uint8_t {
  none,
  emit_coarse_twice,    // the first pass emits the entries above its bin, and the final emit emits them again
  list_drops_overflow,  // a threshold bin larger than the list is truncated to it instead of read in registers
  nan_ieee_ties,        // entries at an exact cut are found by float ==, which no NaN passes
  ring_follows_selection,  // the histogram ring moves on by 3 per selection, as if every one ran three passes
  ties_by_arrival,      // entries at the cut are taken in the order they reach an atomic counter
};

// Entries at or above a cut: every key above `cut`, and the first `need`
// entries that match it, in position order.
struct Cut {
  RadixCut cut;
  int32_t need = 0;
  RadixCut first_pass;   // the cut after the first pass (Bug::emit_coarse_twice)
  bool refined = false;  // more than one pass ran
};

template <class Arch, int kThreads_, int kItems_, Bug kBug = Bug::none>
struct BlockTopK {
  static constexpr int kThreads = kThreads_;
  static constexpr int kItems = kItems_;
  static constexpr int kLanes = Arch::kLanes;
  using LaneMask = typename Arch::LaneMask;
  static_assert(kThreads % kLanes == 0, "whole warps");
  static constexpr int kWarps = kThreads / kLanes;
  static_assert(kWarps <= kLanes, "one warp scans the warp totals");
  static constexpr int kVec = 4;
  static_assert(kItems % kVec == 0, "items come in runs of four positions");
  static constexpr int kRuns = kItems / kVec;
  static constexpr int kCapacity = kThreads * kItems;
  static constexpr int kBins = 2048;
  static constexpr int kListCap = 2 * kThreads;
  static constexpr int kCells = kRuns * kWarps;
  // A cell packs two counts of at most kCapacity entries in 16 bits each.
  static_assert(kCapacity < (1 << 16), "counts fit 16 bits");

  enum Scalar : int { kBin, kAbove, kCount, kScalars };
  struct Shared {
    int32_t hist[3][kBins];
    int32_t pass_scalars[3][kScalars];
    uint32_t list[kListCap];
    uint32_t cells[kCells];
    uint32_t warp_totals[kWarps];
    int32_t list_size;
    int32_t ticket;
    int32_t flag;     // topk_tree.hpp: this block merges the node
    int32_t arrival;  // topk_tree.hpp, Bug::ties_by_arrival: the node's slot in its parent
  };

  DSA_HD static constexpr int position(int thread, int item) { return int(item_position<kThreads>(thread, item)); }

  DSA_HD static int lane(const Arch& a) { return a.thread() % kLanes; }
  DSA_HD static int warp(const Arch& a) { return a.thread() / kLanes; }
  DSA_HD static LaneMask lanes_below(const Arch& a) { return (LaneMask(1) << lane(a)) - 1; }

  // Clears the three histogram slots. Call once before a block's first selection, then sync.
  DSA_HD static void init(const Arch& a, Shared& sh) {
    for (int b = a.thread(); b < 3 * kBins; b += kThreads) sh.hist[b / kBins][b % kBins] = 0;
    if (a.thread() < 3 * kScalars) sh.pass_scalars[a.thread() / kScalars][a.thread() % kScalars] = -1;
  }

  // Exclusive prefix of v in thread order (block_scan.hpp).
  DSA_HD static uint32_t block_exclusive_scan(const Arch& a, Shared& sh, uint32_t v, uint32_t& total) {
    return select::block_exclusive_scan<Arch, kThreads>(a, sh.warp_totals, v, total);
  }

  // Entries (keys other than 0) in the block.
  DSA_HD static int count_entries(const Arch& a, Shared& sh, const uint32_t (&keys)[kItems]) {
    uint32_t mine = 0;
    DSA_UNROLL
    for (int i = 0; i < kItems; ++i) mine += keys[i] != kNoEntryKey;
    uint32_t total = 0;
    block_exclusive_scan(a, sh, mine, total);
    return int(total);
  }

  // One histogram add per warp for the lanes that share lane 0's bin (runs of
  // -inf, NaN or tied values would otherwise serialize on one counter).
  // One atomic per lane at most, without branches: lane 0 adds its peers, the others their own entry.
  DSA_HD static void add(const Arch& a, int32_t* hist, bool in, uint32_t digit) {
    const int d = in ? int(digit) : -1;
    const int leader = a.shfl(d, 0);
    const bool peer = in && d == leader;
    const LaneMask peers = a.ballot(peer);
    const bool first = lane(a) == 0;
    if (first ? peers != 0 : in && !peer) a.atomic_add_shared(&hist[first ? leader : d], first ? popc(peers) : 1);
  }

  // The threshold bin of a counted histogram slot, for `need` entries: each
  // thread scans its run of bins (top bins first) with find_threshold.
  DSA_HD static void threshold(const Arch& a, Shared& sh, int slot, int bins, int need) {
    const int32_t* hist = sh.hist[slot];
    const int per = (bins + kThreads - 1) / kThreads;
    const int hi = bins - a.thread() * per;
    const int lo = hi - per < 0 ? 0 : hi - per;
    uint32_t sum = 0;
    for (int b = lo; b < hi; ++b) sum += uint32_t(hist[b]);
    uint32_t total = 0;
    const int above = int(block_exclusive_scan(a, sh, sum, total));
    if (hi > lo && above < need && above + int(sum) >= need) {
      const Threshold t = find_threshold(hist + lo, hi - lo, need - above);
      sh.pass_scalars[slot][kBin] = lo + t.bin;
      sh.pass_scalars[slot][kAbove] = int32_t(above + int(t.above));
      sh.pass_scalars[slot][kCount] = hist[lo + t.bin];
    }
    a.sync();
  }

  // The cut of the top `need` entries. `entries` is count_entries' result.
  DSA_HD static Cut find_cut(const Arch& a, Shared& sh, const uint32_t (&keys)[kItems], int need, int entries,
                             int& ring) {
    Cut c;
    if (entries <= need) {  // every entry: the cut {0, 0} matches all keys
      c.need = entries;
      return c;
    }
    int remaining = need;
    bool on_list = false;
    int list_n = 0;
    constexpr RadixPlan plan = plan_11_11_10();
    DSA_UNROLL
    for (int p = 0; p < plan.passes; ++p) {
      const RadixPass pass = plan.pass[p];
      const int slot = ring % 3, next = (ring + 1) % 3;
      for (int b = a.thread(); b < kBins; b += kThreads) sh.hist[next][b] = 0;
      if (a.thread() == 0) {
        sh.pass_scalars[next][kBin] = -1;
        if (p == 0) sh.list_size = 0;
      }
      if (!on_list) {
        DSA_UNROLL
        for (int i = 0; i < kItems; ++i) {
          const uint32_t key = keys[i];
          add(a, sh.hist[slot], key != kNoEntryKey && c.cut.matches(key), pass.digit(key));
        }
      } else {
        for (int base = 0; base < list_n; base += kThreads) {
          const int idx = base + a.thread();
          const uint32_t key = idx < list_n ? sh.list[idx] : kNoEntryKey;
          add(a, sh.hist[slot], idx < list_n && c.cut.matches(key), pass.digit(key));
        }
      }
      a.sync();
      threshold(a, sh, slot, pass.bins(), remaining);
      ++ring;
      const int bin = sh.pass_scalars[slot][kBin];
      if (bin < 0) break;  // fewer entries than needed: only a defect's state gets here
      remaining -= sh.pass_scalars[slot][kAbove];
      const int count = sh.pass_scalars[slot][kCount];
      c.cut = c.cut.refined(pass, uint32_t(bin));
      if (p == 0)
        c.first_pass = c.cut;
      else
        c.refined = true;
      if (count == remaining) break;  // the threshold bin is taken whole
      if (p == 0 && (count <= kListCap || kBug == Bug::list_drops_overflow)) {
        DSA_UNROLL
        for (int i = 0; i < kItems; ++i) {
          const bool in = keys[i] != kNoEntryKey && c.cut.matches(keys[i]);
          const LaneMask mask = a.ballot(in);
          int base = 0;
          if (lane(a) == 0 && mask) base = a.atomic_add_shared(&sh.list_size, popc(mask));
          base = a.shfl(base, 0);
          const int s = base + popc(mask & lanes_below(a));
          if (in && s < kListCap) sh.list[s] = keys[i];
        }
        a.sync();
        list_n = sh.list_size < kListCap ? sh.list_size : kListCap;
        on_list = true;
      }
    }
    c.need = remaining;
    return c;
  }

  // The value whose key is `key` (the bug that compares values).
  DSA_HD static float value_of(uint32_t key) { return bits_float((key & 0x80000000u) ? key ^ 0x80000000u : ~key); }

  DSA_HD static bool at_cut(const Cut& c, uint32_t key) {
    if (key == kNoEntryKey || !c.cut.matches(key)) return false;
    if constexpr (kBug == Bug::nan_ieee_ties) {
      if (c.cut.mask == 0xffffffffu) return value_of(key) == value_of(c.cut.prefix);
    }
    return true;
  }

  // Calls emit(rank, item) for every chosen entry of this thread, rank in
  // [offset, limit) its place in position order after `offset`; returns
  // offset + how many were chosen, at most limit. `tied_out`, if given, gets
  // the block's count of entries at the cut (chosen or not).
  template <class Emit>
  DSA_HD static int emit_cut(const Arch& a, Shared& sh, const uint32_t (&keys)[kItems], const Cut& c, int offset,
                             int limit, Emit&& emit, int* tied_out = nullptr) {
    DSA_UNROLL
    for (int j = 0; j < kRuns; ++j) {
      uint32_t above = 0, tied = 0;
      DSA_UNROLL
      for (int v = 0; v < kVec; ++v) {
        const uint32_t key = keys[j * kVec + v];
        above += uint32_t(popc(a.ballot(c.cut.above(key))));
        tied += uint32_t(popc(a.ballot(at_cut(c, key))));
      }
      if (lane(a) == 0) sh.cells[j * kWarps + warp(a)] = (above << 16) | tied;
    }
    if (a.thread() == 0) sh.ticket = 0;
    a.sync();
    constexpr int kPer = (kCells + kThreads - 1) / kThreads;
    uint32_t mine[kPer];
    uint32_t sum = 0;
    DSA_UNROLL
    for (int q = 0; q < kPer; ++q) {
      const int cell = a.thread() * kPer + q;
      mine[q] = cell < kCells ? sh.cells[cell] : 0;
      sum += mine[q];
    }
    uint32_t total = 0;
    uint32_t prefix = block_exclusive_scan(a, sh, sum, total);
    DSA_UNROLL
    for (int q = 0; q < kPer; ++q) {
      const int cell = a.thread() * kPer + q;
      if (cell < kCells) sh.cells[cell] = prefix;
      prefix += mine[q];
    }
    a.sync();
    const int above_total = int(total >> 16), tied_total = int(total & 0xffffu);
    if (tied_out) *tied_out = tied_total;
    int need = c.need < tied_total ? c.need : tied_total;
    if (need < 0) need = 0;  // only a defect's state
    const LaneMask below = lanes_below(a);
    DSA_UNROLL
    for (int j = 0; j < kRuns; ++j) {
      const uint32_t base = sh.cells[j * kWarps + warp(a)];
      int above_rank = int(base >> 16), tie_rank = int(base & 0xffffu);
      bool is_above[kVec], is_tied[kVec];
      DSA_UNROLL
      for (int v = 0; v < kVec; ++v) {
        const uint32_t key = keys[j * kVec + v];
        is_above[v] = c.cut.above(key);
        is_tied[v] = at_cut(c, key);
        above_rank += popc(a.ballot(is_above[v]) & below);
        tie_rank += popc(a.ballot(is_tied[v]) & below);
      }
      DSA_UNROLL
      for (int v = 0; v < kVec; ++v) {
        int rank = -1;
        if (is_above[v]) {
          rank = above_rank + (tie_rank < need ? tie_rank : need);
          if constexpr (kBug == Bug::ties_by_arrival) rank = above_rank;
        } else if (is_tied[v]) {
          if constexpr (kBug == Bug::ties_by_arrival) {
            const int ticket = a.atomic_add_shared(&sh.ticket, 1);
            if (ticket < need) rank = above_total + ticket;
          } else if (tie_rank < need) {
            rank = above_rank + tie_rank;
          }
        }
        if (rank >= 0 && offset + rank < limit) emit(offset + rank, j * kVec + v);
        above_rank += is_above[v];
        tie_rank += is_tied[v];
      }
    }
    a.sync();
    const int chosen = offset + above_total + need;
    return chosen < limit ? chosen : limit;  // at least 0: offset, above_total and need are
  }

  // The top `k` entries of the block, emitted in position order: emit(rank,
  // item) for rank < k. Returns min(k, entries).
  template <class Emit>
  DSA_HD static int select(const Arch& a, Shared& sh, const uint32_t (&keys)[kItems], int k, int& ring, Emit&& emit) {
    const int entries = count_entries(a, sh, keys);
    const Cut c = find_cut(a, sh, keys, k, entries, ring);
    if constexpr (kBug == Bug::ring_follows_selection) ring = (ring + 2) / 3 * 3;
    int offset = 0;
    if constexpr (kBug == Bug::emit_coarse_twice) {
      if (c.refined) {
        Cut coarse;
        coarse.cut = c.first_pass;
        coarse.need = 0;
        offset = emit_cut(a, sh, keys, coarse, 0, k, emit);
      }
    }
    return emit_cut(a, sh, keys, c, offset, k, emit);
  }
};

}  // namespace dsa::common::select
