// The top-k of a row by one block (RowTopK): the selection launches' kernel
// body for many long rows (see select_launch.cu's dispatch). No cluster and no
// reduction across blocks: a persistent grid of blocks walks the rows.
//
// A row past the stage, with k at most half the list's room, is read once
// (RowSample::select, row_sample.hpp): a sample of up to 4096 entries (runs
// of four consecutive entries, evenly spread) gives a key T (its m-th largest,
// m chosen so that about (k + room) / 2 of the row's entries are expected
// above T: about 7 standard deviations from both k and the room at k 2048 and
// 128k columns, about 6 in a candidate-masked row; or a bound of that key's
// coarse bin, found by one pass, where the bound keeps at least half those
// margins). One scan then lists the entries above T (key and position) and
// marks those at T; the cut is found among the listed entries, or is T itself.
// Where the sample misled (the list overflows, or fewer than k entries are at
// or above T) the row takes the histogram's way below, read again: slower,
// never wrong. For a row of values
// the scan compares floats with T's value (an IEEE comparison is the SPEC
// order for every number; a NaN is above, via !(x <= t)), which costs a
// fraction of a key per value.
//
// The histogram's way (rows staged in shared memory, and larger k):
// Pass 1 reads every key once (tiles of kThreads x kItems, the next tile's
// loads in flight while one is counted) into a histogram of a coarse 11-bit
// digit: sign, 5 exponent bits and 5 mantissa bits as fp16 has them (exponents
// past fp16's range clamped, so the digit is monotone in the key). The top 11
// bits of the key (sign, 8 exponent bits, 2 of mantissa) would put most of a
// row of N(0, 1) logits in a few dozen bins, and a warp's plain shared-memory
// atomics would collide on them; these spread it over hundreds. The two end
// bins (-inf, tiny values; +inf, NaN, huge values) are counted in registers
// and added once per warp, so rows dominated by -inf or NaN do not
// serialise either; every key costs one plain atomic and no branch (the end
// bins' keys add to a slot of their lane's, which nothing reads). A row of at most kStageEntries is
// also staged in shared memory, so every later step reads shared memory only;
// a longer row is read again from global memory (L2 holds much of it) once.
// That one scan compares keys against the threshold bin's bounds in key space
// (coarse_digit_floor: no digit per key), marks the entries above the bin in a bitmap
// of the row and lists the entries in it (positions, and the keys of a row not
// staged); the radix passes of block_topk.hpp (11, 11 and 10 bits of the key)
// then count the list only. The list's entries above the final cut join the
// bitmap, those at it go to a second bitmap. A bin too large for the list is
// marked whole in that second bitmap by the same scan, and the scan keeps the
// bin's smallest and largest key: a bin of one key (tie-heavy rows, where the
// cut falls inside thousands of equal logits) is then the cut itself, with no
// radix pass and no further read of the row. Only a large bin of several keys
// is counted from the row again.
//
// Emitting is a block scan of the two bitmaps' popcounts: an entry's output
// rank is the chosen entries before it in position order (every entry above
// the cut, and the first `need` at it), so the output is GroupTopK's and the
// tree's (the reference's set in position order, the lowest positions among
// ties at the cut), the same on every run; no atomic decides who is chosen or
// where it goes. Every output entry is written once: the chosen, then -1.
// Rows of more than kMaxEntries entries are not taken (the launch's host side
// sends them to GroupTopK).
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/radix_keys.hpp"
#include "dsa/common/radix_plan.hpp"
#include "dsa/common/select/bitmap_ranks.hpp"
#include "dsa/common/select/block_scan.hpp"
#include "dsa/common/select/block_topk.hpp"
#include "dsa/common/select/coarse_histogram.hpp"
#include "dsa/common/select/row_sample.hpp"
#include "dsa/common/threshold.hpp"

namespace dsa::common::select {

template <class Arch, int kThreads_, int kItems_, int kStageEntries_, int kMaxEntries_>
struct RowTopK {
  using Block = BlockTopK<Arch, kThreads_, kItems_>;
  static constexpr int kThreads = kThreads_;
  static constexpr int kItems = kItems_;
  static constexpr int kLanes = Arch::kLanes;
  static constexpr int kWarps = kThreads / kLanes;
  static constexpr int kCapacity = kThreads * kItems;
  static constexpr int kStageEntries = kStageEntries_;
  static constexpr int kMaxEntries = kMaxEntries_;
  static constexpr int kBins = 2048;
  static constexpr int kWords = kMaxEntries / 32;
  // A staged row lists positions (its keys are in the stage); a row past the
  // stage lists key and position pairs in the stage's room (one 8-byte store a pair).
  static constexpr int kListCap = kStageEntries / 16;
  static constexpr int kPairCap = kStageEntries / 2;
  struct alignas(8) Pair {
    uint32_t key, position;
  };
  static_assert(kItems % 4 == 0 && kStageEntries % 4 == 0, "runs of four positions");
  static_assert(kMaxEntries % 32 == 0 && kMaxEntries >= kStageEntries, "the bitmaps cover every row taken");

  enum Scalar : int { kBin, kAbove, kCount, kScalars };
  // Threshold slots: 0 the coarse pass, 1 to 3 the radix passes, 4 to 7 the sample's, 8 to 11 the list's digit
  // passes (RowSample::list_cut) and 12 its ranks' cut.
  static constexpr int kSlots = 13;
  // The way a row went (the tests see every way taken and held to the reference).
  enum class Outcome : int32_t {
    staged,           // the coarse histogram, the row in shared memory
    histogram,        // the coarse histogram, the row read again (no sample: k past half the list)
    sampled_above,    // the sample's key: the cut among the listed entries above it
    sampled_at_key,   // the sample's key: every listed entry, the rest at the key
    missed_overflow,  // more entries above the sample's key than the list holds: the histogram's way
    missed_short,     // fewer than k at or above it: the histogram's way
  };
  struct Shared {
    int32_t hist[CoarseHistogram<Arch>::kSlots];  // past kBins: a slot per lane (coarse_histogram.hpp)
    int32_t scalars[kSlots][kScalars];  // a pass's threshold: its own slot, so no pass waits to reset one
    uint32_t warp_totals[kWarps];
    uint64_t warp_pairs[kWarps];  // emit's two counts a warp, above the cut (high half) and at it
    uint32_t warp_min[kWarps], warp_max[kWarps];  // the threshold bin's key range, per warp
    int32_t list_size;
    int32_t bin_size;   // the list's threshold digit's entries, gathered into `list` (RowSample::list_cut)
    uint32_t list_top;  // the largest listed key (RowSample::select)
    Outcome outcome;
    alignas(16) uint32_t above_bits[kWords];  // the row's entries above the cut
    alignas(16) uint32_t tied_bits[kWords];   // the row's entries at the cut (chosen or not)
    uint32_t list[kListCap];                  // a staged row's positions in the first pass's threshold bin
    alignas(16) uint32_t stage[kStageEntries];
  };
  struct alignas(16) Quad {
    uint32_t key[4];
  };
  DSA_HD static Pair* pairs(Shared& sh) { return reinterpret_cast<Pair*>(sh.stage); }
  DSA_HD static const Pair* pairs(const Shared& sh) { return reinterpret_cast<const Pair*>(sh.stage); }

  static_assert(kBins == kCoarseBins, "the histogram of the coarse digit");
  DSA_HD static uint32_t coarse_digit(uint32_t key) { return common::coarse_digit(key); }

  // The warp's smallest or largest v (by `pick`), in every lane.
  template <class Pick>
  DSA_HD static uint32_t warp_reduce(const Arch& a, uint32_t v, Pick pick) {
    DSA_UNROLL
    for (int d = 1; d < kLanes; d *= 2) v = pick(a.shfl(v, Block::lane(a) ^ d), v);
    return v;
  }
  DSA_HD static uint32_t warp_max_of(const Arch& a, uint32_t v) {
    return warp_reduce(a, v, [](uint32_t x, uint32_t y) { return x > y ? x : y; });
  }

  // The block's smallest lo and largest hi, in every thread (a barrier; the
  // caller syncs before warp_min and warp_max are written again).
  DSA_HD static void block_min_max(const Arch& a, Shared& sh, uint32_t& lo, uint32_t& hi) {
    lo = warp_reduce(a, lo, [](uint32_t x, uint32_t y) { return x < y ? x : y; });
    hi = warp_max_of(a, hi);
    if (Block::lane(a) == 0) sh.warp_min[Block::warp(a)] = lo, sh.warp_max[Block::warp(a)] = hi;
    a.sync();
    for (int w = 0; w < kWarps; ++w) {
      lo = sh.warp_min[w] < lo ? sh.warp_min[w] : lo;
      hi = sh.warp_max[w] > hi ? sh.warp_max[w] : hi;
    }
  }

  template <class Source>
  DSA_HD static void run(const Arch& a, Shared& sh, const Source& src, int32_t k, int32_t* out) {
    for (int64_t r = a.block(); r < src.rows(); r += a.grid()) select_row(a, sh, src, k, r, out);
  }

  // The threshold bin of the histogram's first `bins` bins for `need`
  // entries, in scalars[slot] (bin -1: fewer entries); returns the sum of the bins.
  // One copy of code for all its callers (DSA_NOINLINE): the row kernel 4-5 %
  // faster than with it inlined at each (bench/gpu/SELECT_RESULTS.md run 56).
  struct Found {
    int bin = -1;
    int32_t above = 0, count = 0;
    int64_t total = 0;
  };
  DSA_HD DSA_NOINLINE static Found threshold(const Arch& a, Shared& sh, int slot, int bins, int32_t need) {
    const int t = a.thread();
    const int per = (bins + kThreads - 1) / kThreads;
    const int hi = bins - t * per;
    const int lo = hi - per < 0 ? 0 : hi - per;
    uint32_t sum = 0;
    for (int b = lo; b < hi; ++b) sum += uint32_t(sh.hist[b]);
    uint32_t total = 0;
    const int above = int(block_exclusive_scan<Arch, kThreads>(a, sh.warp_totals, sum, total));
    if (hi > lo && above < need && above + int(sum) >= need) {
      const Threshold th = find_threshold(sh.hist + lo, hi - lo, need - above);
      sh.scalars[slot][kBin] = lo + th.bin;
      sh.scalars[slot][kAbove] = int32_t(above + int(th.above));
      sh.scalars[slot][kCount] = sh.hist[lo + th.bin];
    }
    a.sync();
    Found f;
    f.bin = sh.scalars[slot][kBin];
    f.above = sh.scalars[slot][kAbove];
    f.count = sh.scalars[slot][kCount];
    f.total = int64_t(total);
    return f;
  }

  // Calls visit(position of the run's first entry, its four keys) for every
  // run of four of the row's tiles, every thread of the block the same number
  // of times (visit may use ballots); the next tile's loads are in flight
  // while one is visited (its values in registers: a key is taken when it is
  // used, as the key of a value would wait for the load). With kBits, visit
  // gets a source of values' bits, -inf's at positions past the row.
  template <bool kBits = false, class Source, class Visit>
  DSA_HD static void stream_row(const Arch& a, const Source& src, int64_t r, int count, Visit&& visit) {
    const int t = a.thread();
    const int tiles = (count + kCapacity - 1) / kCapacity;
    const auto reader = tile_reader(src, r);
    uint32_t keys[kItems], next[kItems];
    if (tiles > 0) reader.template load_bits<kThreads, kItems>(a, 0, count < kCapacity ? count : kCapacity, next);
    for (int tile = 0; tile < tiles; ++tile) {
      const int base = tile * kCapacity;
      DSA_UNROLL
      for (int i = 0; i < kItems; ++i)
        keys[i] = kBits ? next[i] : key_of_bits<Source>(next[i], base + int(item_position<kThreads>(t, i)) < count);
      if (tile + 1 < tiles) {
        const int rest = count - base - kCapacity;
        reader.template load_bits<kThreads, kItems>(a, base + kCapacity, rest < kCapacity ? rest : kCapacity, next);
      }
      DSA_UNROLL
      for (int j = 0; j < kItems / 4; ++j) {
        Quad q;
        DSA_UNROLL
        for (int v = 0; v < 4; ++v) q.key[v] = keys[j * 4 + v];
        visit(base + int(item_position<kThreads>(t, j * 4)), q);
      }
    }
  }

  // The same over a staged row (whole warps: the ballots visit may use).
  template <class Visit>
  DSA_HD static void stage_runs(const Arch& a, const Shared& sh, int count, Visit&& visit) {
    const int quads = (count + 3) / 4;
    for (int u = a.thread(); u - a.thread() < quads; u += kThreads) {
      Quad q{};
      if (u < quads) q = *reinterpret_cast<const Quad*>(sh.stage + 4 * u);
      visit(4 * u, q);
    }
  }


  template <class Source>
  DSA_HD static void select_row(const Arch& a, Shared& sh, const Source& src, int32_t k, int64_t r, int32_t* out) {
    const int t = a.thread();
    const int count = int(src.entries(r));  // at most kMaxEntries: the host side's dispatch
    const bool staged = count <= kStageEntries;
    const int words = (count + 31) / 32;

    using Sample = RowSample<RowTopK>;
    DSA_ROW_PHASE(r, kRowStarted);
    clear(a, sh, words);
    DSA_ROW_PHASE(r, kRowCleared);
    int32_t ties = -1;
    if (Sample::samples(staged, k)) ties = Sample::select(a, sh, src, k, r, count, words);
    DSA_ROW_PHASE(r, kCutFound);
    if (ties < 0) ties = select_by_histogram(a, sh, src, k, r, count, words, staged);
    if (t == 0 && !Sample::samples(staged, k)) sh.outcome = staged ? Outcome::staged : Outcome::histogram;
    emit(a, sh, src, k, r, words, ties, out + r * int64_t(k));
  }

  // The histogram, both bitmaps, the thresholds and the list emptied (then a sync).
  DSA_HD static void clear(const Arch& a, Shared& sh, int words) {
    const int t = a.thread();
    for (int b = t; b < CoarseHistogram<Arch>::kSlots; b += kThreads) sh.hist[b] = 0;
    for (int w = t; w < words; w += kThreads) sh.above_bits[w] = 0, sh.tied_bits[w] = 0;
    if (t < kSlots) sh.scalars[t][kBin] = -1;
    if (t == 0) sh.list_size = 0, sh.bin_size = 0, sh.list_top = 0;
    a.sync();
  }

  // The row's coarse histogram (pass 1), then one scan that splits the row
  // at its threshold bin (see the top). Returns how many entries at the
  // final cut are taken.
  template <class Source>
  DSA_HD static int32_t select_by_histogram(const Arch& a, Shared& sh, const Source& src, int32_t k, int64_t r,
                                            int count, int words, bool staged) {
    const int t = a.thread();
    // Pass 1: every key counted (and staged).
    CoarseHistogram<Arch> counted;
    stream_row(a, src, r, count, [&](int p0, const Quad& q) {
      if (staged && p0 < count) *reinterpret_cast<Quad*>(sh.stage + p0) = q;
      DSA_UNROLL
      for (int v = 0; v < 4; ++v) counted.count(a, sh.hist, q.key[v]);
    });
    counted.flush(a, sh.hist);
    a.sync();
    const Found f0 = threshold(a, sh, 0, kBins, k);

    // The scan's split: an entry whose coarse digit is above `above_digit` is above the cut, and
    // with `refine` those in the threshold bin (digit == bin) are refined.
    int above_digit = -1;  // every entry is chosen
    int32_t remaining = 0;
    bool refine = false, on_list = false;
    if (f0.total > k && f0.bin >= 0) {
      remaining = k - f0.above;
      refine = f0.count != remaining;
      above_digit = refine ? f0.bin : f0.bin - 1;
      on_list = refine && f0.count <= (staged ? kListCap : kPairCap);
    } else if (f0.bin < 0 && f0.total > k) {  // only a defect's state gets here
      above_digit = kBins;
    }
    // The split in key space: above the cut `key > up_floor`, in the threshold bin
    // `bin_floor < key <= bin_top` (never when there is nothing to refine).
    const uint32_t up_floor = coarse_digit_floor(above_digit);
    const uint32_t bin_floor = refine ? coarse_digit_floor(f0.bin - 1) : 0xffffffffu;
    const uint32_t bin_top = refine ? coarse_digit_floor(f0.bin) : 0u;
    Pair* listed_pairs = pairs(sh);
    uint32_t bin_min = 0xffffffffu, bin_max = 0u;
    auto split = [&](int p0, const Quad& q) {
      uint32_t above_mask = 0, at_mask = 0;
      DSA_UNROLL
      for (int v = 0; v < 4; ++v) {
        above_mask |= uint32_t(q.key[v] > up_floor) << v;
        at_mask |= uint32_t(q.key[v] > bin_floor && q.key[v] <= bin_top) << v;
      }
      if (!a.ballot((above_mask | at_mask) != 0u)) return;
      if (above_mask) a.atomic_or_shared(&sh.above_bits[p0 / 32], above_mask << (p0 % 32));
      if (at_mask && !on_list) a.atomic_or_shared(&sh.tied_bits[p0 / 32], at_mask << (p0 % 32));
      DSA_UNROLL
      for (int v = 0; v < 4; ++v) {
        const bool at = (at_mask >> v) & 1u;
        bin_min = at && q.key[v] < bin_min ? q.key[v] : bin_min;
        bin_max = at && q.key[v] > bin_max ? q.key[v] : bin_max;
      }
      if (on_list) {
        DSA_UNROLL
        for (int v = 0; v < 4; ++v) {
          const bool at = (at_mask >> v) & 1u;
          const typename Arch::LaneMask m = a.ballot(at);
          int slot = 0;
          if (Block::lane(a) == 0 && m) slot = a.atomic_add_shared(&sh.list_size, popc(m));
          slot = a.shfl(slot, 0) + popc(m & Block::lanes_below(a));
          if (at) {
            if (staged) {
              sh.list[slot] = uint32_t(p0 + v);
            } else {
              listed_pairs[slot] = Pair{q.key[v], uint32_t(p0 + v)};
            }
          }
        }
      }
    };
    if (staged)
      stage_runs(a, sh, count, split);
    else
      stream_row(a, src, r, count, split);
    block_min_max(a, sh, bin_min, bin_max);
    if (!refine) return 0;
    // A threshold bin of one key is the cut: entries above it are marked, those at it are the bin.
    const bool one_key = bin_min == bin_max;
    if (!on_list && one_key) return remaining;
    const int list_n = sh.list_size;
    // The radix passes over the threshold bin: the list, or the row's entries in the bin.
    auto for_bin = [&](auto&& visit) {
      if (on_list) return visit_list(a, sh, staged, list_n, visit);
      auto runs = [&](int p0, const Quad& q) {
        DSA_UNROLL
        for (int v = 0; v < 4; ++v) visit(q.key[v] > bin_floor && q.key[v] <= bin_top, p0 + v, q.key[v]);
      };
      if (staged)
        stage_runs(a, sh, count, runs);
      else
        stream_row(a, src, r, count, runs);
    };
    if (!on_list) {  // a bin past the list and of several keys: its marks are redone from the final cut
      for (int w = t; w < words; w += kThreads) sh.tied_bits[w] = 0;
      a.sync();
    }
    mark_cut(a, sh, for_bin, one_key ? RadixCut{bin_min, 0xffffffffu} : radix_cut(a, sh, for_bin, remaining));
    return remaining;
  }

  // Calls visit(in, position, key) for the list's first n entries, every
  // thread the same number of times: positions of a staged row (keys in the
  // stage), or key and position pairs.
  template <class Visit>
  DSA_HD static void visit_list(const Arch& a, const Shared& sh, bool staged, int n, Visit&& visit) {
    const int t = a.thread();
    for (int i = t; i - t < n; i += kThreads) {
      const bool ok = i < n;
      if (staged) {
        const int p = ok ? int(sh.list[i]) : 0;
        visit(ok, p, ok ? sh.stage[p] : kNoEntryKey);
      } else {
        const Pair pair = ok ? pairs(sh)[i] : Pair{kNoEntryKey, 0u};
        visit(ok, int(pair.position), pair.key);
      }
    }
  }

  // The radix passes (radix_plan.hpp, threshold slots 1 to 3) over the
  // entries for_bin visits, for `remaining` of them; on return `remaining`
  // is how many entries at the returned cut are taken.
  template <class ForBin>
  DSA_HD static RadixCut radix_cut(const Arch& a, Shared& sh, ForBin&& for_bin, int32_t& remaining) {
    constexpr RadixPlan radix = plan_11_11_10();
    RadixCut cut;
    for (int pass_index = 0; pass_index < radix.passes; ++pass_index) {
      const RadixPass pass = radix.pass[pass_index];
      for (int b = a.thread(); b < pass.bins(); b += kThreads) sh.hist[b] = 0;
      a.sync();
      for_bin([&](bool in, int, uint32_t key) { Block::add(a, sh.hist, in && cut.matches(key), pass.digit(key)); });
      a.sync();
      const Found f = threshold(a, sh, pass_index + 1, pass.bins(), remaining);
      if (f.bin < 0) {  // fewer entries than needed: only a defect's state gets here
        remaining = 0;
        break;
      }
      remaining -= f.above;
      cut = cut.refined(pass, uint32_t(f.bin));
      if (f.count == remaining) break;  // the threshold bin is taken whole
    }
    return cut;
  }

  // The entries for_bin visits above the cut join above_bits, those at it tied_bits.
  template <class ForBin>
  DSA_HD static void mark_cut(const Arch& a, Shared& sh, ForBin&& for_bin, const RadixCut& cut) {
    for_bin([&](bool in, int p, uint32_t key) {
      if (in && cut.above(key)) a.atomic_or_shared(&sh.above_bits[p / 32], 1u << (p % 32));
      if (in && cut.matches(key)) a.atomic_or_shared(&sh.tied_bits[p / 32], 1u << (p % 32));
    });
  }

  // Each thread's run of bitmap words: its counts, their prefix over the
  // block, then the ranks (every entry above the cut, the first `ties` at it).
  template <class Source>
  DSA_HD static void emit(const Arch& a, Shared& sh, const Source& src, int32_t k, int64_t r, int words,
                          int32_t ties, int32_t* row_out) {
    const int t = a.thread();
    a.sync();
    const int per = (words + kThreads - 1) / kThreads;
    constexpr int kMaxRun = (kWords + kThreads - 1) / kThreads;
    const int w0 = t * per;
    // Both counts in one scan, packed in 32-bit halves (a row of up to 2^32 entries; the short-row and group
    // kernels' 16-bit halves would overflow at 2^17).
    const int own = w0 < words ? (words - w0 < per ? words - w0 : per) : 0;
    uint64_t counts = 0;
    for_bitmap_words<kMaxRun>(sh.above_bits, sh.tied_bits, w0, own, [&](int, uint32_t up, uint32_t tied) {
      counts += uint64_t(popc(up)) << 32 | uint32_t(popc(tied));
    });
    uint64_t totals = 0;
    const uint64_t before = block_exclusive_scan<Arch, kThreads>(a, sh.warp_pairs, counts, totals);
    const int32_t above_rank = int32_t(before >> 32), tie_rank = int32_t(uint32_t(before));
    const uint32_t above_total = uint32_t(totals >> 32), tied_total = uint32_t(totals);
    const int32_t need = ties < int32_t(tied_total) ? ties : int32_t(tied_total);
    DSA_ROW_PHASE(r, kRanksScanned);
    emit_bitmap_ranks<kMaxRun>(sh.above_bits, sh.tied_bits, w0, own, above_rank, tie_rank, need,
                               [&](int32_t rank, int64_t p) {
                                 if (rank < k) row_out[rank] = src.payload(r, p);
                               });
    const int64_t chosen = int64_t(above_total) + (need > 0 ? need : 0);
    for (int64_t i = chosen + t; i < k; i += kThreads) row_out[i] = -1;
    a.sync();  // the next row rewrites the histogram, the bitmaps and the stage
    DSA_ROW_PHASE(r, kRowEmitted);
  }
};

}  // namespace dsa::common::select
