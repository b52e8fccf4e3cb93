// The sampled way of RowTopK (row_topk.hpp; its top says when a row takes it):
// a sample of up to 4096 entries (runs of four, evenly spread) gives a key T, and one
// read of the row lists the entries above T and marks those at T. Returns -1
// where the sample misled (the row then takes the histogram's way).
#pragma once

#include <cmath>
#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/radix_keys.hpp"
#include "dsa/common/radix_plan.hpp"
#include "dsa/common/select/block_scan.hpp"
#include "dsa/common/select/coarse_histogram.hpp"
#include "dsa/common/select/row_phase.hpp"
#include "dsa/common/select/sources.hpp"

namespace dsa::common::select {

template <class Row>
struct RowSample {
  using Shared = typename Row::Shared;
  using Quad = typename Row::Quad;
  using Block = typename Row::Block;
  using Outcome = typename Row::Outcome;
  using Found = typename Row::Found;
  static constexpr int kThreads = Row::kThreads;
  static constexpr int kItems = Row::kItems;
  static constexpr int kWarps = Row::kWarps;
  static constexpr int kLanes = Row::kLanes;
  static constexpr int kBins = Row::kBins;
  static constexpr int kCapacity = Row::kCapacity;
  // The sample: kSampleItems entries a thread, 4096 in all where a tile holds more (the margins of the top were
  // set for 4096; a block of 1024 threads drawing 8192 spent 5 us of a row on the draw and 4 on its key, run 50).
  static constexpr int kSampleItems = kCapacity > 4096 ? 4096 / kThreads : kItems;
  static constexpr int kSampleSize = kThreads * kSampleItems;
  static constexpr int kPairCap = Row::kPairCap;

  // Where sample j of a row of `count` entries lies: kSampleSize / kRun runs of kRun consecutive entries (run
  // j / kRun, its entry j % kRun), evenly spread, each run's start a multiple of kRun. Single entries spread as
  // far apart cost a sector of DRAM each, half of a 128k row's bytes read at random (ncu, SELECT_RESULTS.md run
  // 46); a run is 16 bytes of one sector. Runs of 4 rather than 8: where whole blocks of 8 are -inf together (a
  // candidate-masked row), runs of 8 leave half as many independent draws, and the margin below falls from
  // about 7 standard deviations to about 4 at k 2048 (a simulation of such rows). The caller's rows have at
  // least kCapacity entries, so the runs do not overlap.
  static constexpr int kRun = 4;
  static_assert(kSampleItems % kRun == 0 && kSampleItems >= kRun, "whole runs a thread");
  DSA_HD static int sample_position(int j, int count) {
    const int64_t run_start = int64_t(j / kRun) * count / (kSampleSize / kRun);
    return int(run_start - run_start % kRun) + j % kRun;
  }
  // The sample's ranks for k and a row of `count` entries: m, the rank of the key meant to have about
  // target = m / per of the row's entries above it (per: sample entries a row entry), and the window [lo, hi] of
  // ranks that a bound of m's coarse bin may take instead (sample_key). The target is k and kMarginSd standard
  // deviations of the count above the key, so that a row read again (fewer than k listed) is rare, and no more
  // than (k + kPairCap) / 2, as far from k as from the list's room: every entry listed costs the scan, the keying
  // and the cut. The count above the sample's m-th largest deviates by about sqrt(m) / per on rows of independent
  // values and 1.3 times that on candidate-masked ones (blocks of 8 live or -inf together, so a run of four is one
  // draw of liveness; a simulation of 600 rows of each kind at 32k, 64k and 128k entries), so in sample entries
  // m - k per = kMarginSd * 1.3 * sqrt(m), solved for m. The window keeps 3/4 of the margin below (4.5 deviations)
  // and half the distance to the room above. Float arithmetic and one division: its chain is short beside the sample's loads.
  static constexpr float kMarginSd = 6.0f;
  struct Ranks {
    int m, lo, hi;
  };
  DSA_HD static Ranks sample_ranks(int32_t k, int count) {
    const float per = float(kSampleSize) / float(count);
    const float spread = kMarginSd * 1.3f, k_drawn = float(k) * per, room_drawn = float(kPairCap) * per;
    const float root = 0.5f * (spread + sqrtf(spread * spread + 4.0f * k_drawn));
    const float centred = 0.5f * (k_drawn + room_drawn);
    const float m = root * root < centred ? root * root : centred;
    auto rank = [](float drawn) {
      const float up = ceilf(drawn);
      return up < 1.0f ? 1 : up > float(kSampleSize) ? kSampleSize : int(up);
    };
    return {rank(m), rank(m - 0.25f * (m - k_drawn)), rank(m + 0.5f * (room_drawn - m))};
  }
  DSA_HD static bool samples(bool staged, int32_t k) { return !staged && 2 * int64_t(k) <= kPairCap; }

  // One read of the row against a key from a sample of it. The sample's m-th
  // largest key (sample_ranks), or a bound of its coarse bin near it (sample_key),
  // is T, expected to have the ranks' target of the row's entries above
  // it; the scan lists every entry above T (key and
  // position pairs) and marks the entries at T in tied_bits. Then either the
  // list holds k or more (the radix passes run over the list only), or the
  // cut is T itself (the list, and the first entries at T). A sample that
  // misled (the list overflowed, or fewer than k at or above T) leaves the
  // state cleared and returns -1: the histogram's way, one read more. Returns
  // how many entries at the final cut are taken.
  template <class Arch, class Source>
  DSA_HD static int32_t select(const Arch& a, Shared& sh, const Source& src, int32_t k, int64_t r, int count,
                               int words) {
    const int t = a.thread();
    int positions[kSampleItems];
    DSA_UNROLL
    for (int i = 0; i < kSampleItems; ++i) positions[i] = sample_position(t * kSampleItems + i, count);
    uint32_t sample[kSampleItems];
    keys_at(a, src, r, positions, sample);
    const Ranks ranks = sample_ranks(k, count);  // while the loads are on their way
    DSA_ROW_PHASE_DRAWN(r, kSampleDrawn, sample);
    const uint32_t key = sample_key(a, sh, sample, ranks.m, ranks.lo, ranks.hi, r);
    DSA_ROW_PHASE(r, kSampleKeyed);
    // T = 0 (fewer sample entries than the rank): every entry is listed, none is at T.
    const uint32_t at_key = key == kNoEntryKey ? 1u : key;  // 1: no key's value

    typename Row::Pair* listed_pairs = Row::pairs(sh);
    uint32_t at_count = 0;
    // A run's entries above T (listed, their keys by `key_of`) and at it (marked).
    auto record = [&](int p0, const Quad& q, uint32_t above_mask, uint32_t at_mask, auto&& key_of) {
      if (!a.ballot((above_mask | at_mask) != 0u)) return;
      if (at_mask) {
        a.atomic_or_shared(&sh.tied_bits[p0 / 32], at_mask << (p0 % 32));
        at_count += uint32_t(popc(at_mask));
      }
      if (above_mask) {
        // One atomic a thread (few threads of a warp have entries above T); the
        // list's order is the atomics', which the set and its order do not depend on.
        const int n = popc(above_mask);
        int slot = a.atomic_add_shared(&sh.list_size, n);
        if (slot + n <= kPairCap) {  // else the list overflows: the row is read again, nothing of it is used
          DSA_UNROLL
          for (int v = 0; v < 4; ++v) {
            const bool above = (above_mask >> v) & 1u;
            if (above) listed_pairs[slot] = typename Row::Pair{key_of(q.key[v]), uint32_t(p0 + v)};
            slot += int(above);
          }
        }
      }
    };
    const bool by_value = Source::kValues && key > kMinusInfKey && key != kNaNKey;
    if (by_value) {
      // T is a number's key above -inf: the scan compares values, not keys (the
      // key of every value costs more than the comparisons). A NaN is above T
      // (!(x <= t)), both zeros equal it where T is zero; positions past the row
      // read -inf, neither above T nor at it, so no run is masked. (Listing the
      // entries at a T that is a bin's bound with those above it, one comparison
      // a value, was slower at 64 and 256 rows: SELECT_RESULTS.md run 57.)
      const float threshold = Block::value_of(key);
      Row::template stream_row<true>(a, src, r, count, [&](int p0, const Quad& q) {
        uint32_t above_mask = 0, at_mask = 0;
        DSA_UNROLL
        for (int v = 0; v < 4; ++v) {
          const float x = bits_float(q.key[v]);
          above_mask |= uint32_t(!(x <= threshold)) << v;
          at_mask |= uint32_t(x == threshold) << v;
        }
        record(p0, q, above_mask, at_mask, [](uint32_t bits) { return bits; });  // keys after the scan
      });
    } else {
      Row::stream_row(a, src, r, count, [&](int p0, const Quad& q) {
        uint32_t above_mask = 0, at_mask = 0;
        DSA_UNROLL
        for (int v = 0; v < 4; ++v) {
          above_mask |= uint32_t(q.key[v] > key) << v;
          at_mask |= uint32_t(q.key[v] == at_key) << v;
        }
        record(p0, q, above_mask, at_mask, [](uint32_t k) { return k; });
      });
    }
    uint32_t at_total = 0;
    block_exclusive_scan<Arch, kThreads>(a, sh.warp_totals, at_count, at_total);  // syncs: list_size is final
    const int listed = sh.list_size;
    DSA_ROW_PHASE(r, kRowScanned);
    // The list's keys (it holds values' bits where the scan compared values) and the largest of them, found
    // while they are keyed; a list of keys is not read for it: the cut's first digit then spans every key above T.
    uint32_t top = 0xffffffffu;
    if (by_value && listed <= kPairCap) {
      uint32_t largest = 0;
      for (int i = t; i < listed; i += kThreads) {
        const uint32_t entry_key = order_key(bits_float(listed_pairs[i].key));
        listed_pairs[i].key = entry_key;
        largest = entry_key > largest ? entry_key : largest;
      }
      largest = Row::warp_max_of(a, largest);
      if (Block::lane(a) == 0) a.atomic_max_shared(&sh.list_top, largest);  // one shared word, not a warp's each
      a.sync();
      top = sh.list_top;
    }
    if (listed > kPairCap || int64_t(listed) + at_total < int64_t(k)) {
      for (int w = t; w < words; w += kThreads) sh.tied_bits[w] = 0;
      for (int b = t; b < kBins + kLanes; b += kThreads) sh.hist[b] = 0;
      if (t == 0) sh.outcome = listed > kPairCap ? Outcome::missed_overflow : Outcome::missed_short;
      a.sync();
      if (t == 0) sh.list_size = 0;
      a.sync();
      return -1;
    }
    auto for_list = [&](auto&& visit) { Row::visit_list(a, sh, false, listed, visit); };
    if (listed <= k) {  // every listed entry is above the cut, which is T
      for_list([&](bool in, int p, uint32_t) {
        if (in) a.atomic_or_shared(&sh.above_bits[p / 32], 1u << (p % 32));
      });
      if (t == 0) sh.outcome = Outcome::sampled_at_key;
      a.sync();
      return k - listed;
    }
    for (int w = t; w < words; w += kThreads) sh.tied_bits[w] = 0;  // the cut lies above T
    if (t == 0) sh.outcome = Outcome::sampled_above;
    a.sync();
    DSA_ROW_PHASE(r, kListKeyed);
    return list_cut(a, sh, for_list, key, top, k);
  }

  // The cut among the listed entries (keys above `floor`, none above `top`, more than k of them), by passes of
  // an 11-bit digit of the key over the range still open, from the highest bit in which its keys can differ:
  // where the threshold digit is taken whole, that is the cut; where it holds a warp's lanes of entries or
  // fewer, one warp ranks them; a digit of one key is the cut; a digit of a few entries is the next pass's
  // range; a digit of many (ties, or a cluster) is closed to its entries' smallest and largest key first (one
  // key: the cut). On N(0, 1) rows one pass and a warp's ranks, where the radix plan's fixed 11, 11 and 10 bits
  // of the key took two passes (run 60); the closing took 16-level rows from three passes to one or two.
  // Marks the chosen entries; returns how many at the final cut are taken.
  template <class Arch, class ForList>
  DSA_HD static int32_t list_cut(const Arch& a, Shared& sh, ForList&& for_list, uint32_t floor, uint32_t top,
                                 int32_t k) {
    constexpr int kFirstSlot = 8, kRankSlot = 12;  // a threshold slot a pass (at most three), then the ranks'
    // A threshold digit of at most this many entries takes the next pass over its whole span: spread over 2048
    // bins they rarely crowd one, and the read that narrows the span to its keys (a step of about 1 us at 1024
    // threads) cost candidate-masked rows of 32k 6-10 % where it found no ties (run 61).
    constexpr int32_t kSpreadCount = kBins / 8;
    static_assert(Row::kListCap >= kLanes, "a warp's entries gathered into the list");
    static_assert(kBins >= kLanes, "a warp's entries' positions gathered into the histogram");
    const int t = a.thread();
    uint64_t lo = floor, hi = top;  // the open range: keys in (lo, hi]
    int32_t need = k;
    auto mark = [&](uint64_t above_from, uint64_t tied_key) {  // above: key > above_from; tied: key == tied_key
      for_list([&](bool in, int p, uint32_t key) {
        if (in && key > above_from) a.atomic_or_shared(&sh.above_bits[p / 32], 1u << (p % 32));
        if (in && key == tied_key) a.atomic_or_shared(&sh.tied_bits[p / 32], 1u << (p % 32));
      });
    };
    constexpr uint64_t kNoKey = uint64_t(1) << 32;
    for (int pass = 0;; ++pass) {
      const int width = bit_width(uint32_t(hi - lo - 1));
      const int shift = width > 11 ? width - 11 : 0;
      auto in_range = [&](bool in, uint32_t key) { return in && key > lo && key <= hi; };
      auto digit = [&](uint32_t key) { return uint32_t((key - lo - 1) >> shift); };  // below 2048 in the range
      for (int b = t; b < kBins; b += kThreads) sh.hist[b] = 0;
      a.sync();
      for_list([&](bool in, int, uint32_t key) {
        const bool counted = in_range(in, key);
        Block::add(a, sh.hist, counted, counted ? digit(key) : 0u);
      });
      a.sync();
      const Found f = Row::threshold(a, sh, kFirstSlot + pass, kBins, need);
      need -= f.above;
      const uint64_t bin_lo = lo + (uint64_t(f.bin) << shift);  // the threshold digit: keys in (bin_lo, bin_hi]
      const uint64_t bin_hi = bin_lo + (uint64_t(1) << shift) < hi ? bin_lo + (uint64_t(1) << shift) : hi;
      if (f.count == need) {  // taken whole
        mark(bin_lo, kNoKey);
        return 0;
      }
      if (f.count <= kLanes) {
        // One read of the list marks the entries above the digit and gathers the digit's (keys into `list`, positions
        // into the histogram, which this pass reads no more); each lane of the first warp then ranks one of them
        // and marks it: above the cut where fewer than `need` are at or above its key, at the cut where fewer than
        // `need` are above it.
        int32_t* gathered_positions = sh.hist;
        for_list([&](bool in, int p, uint32_t key) {
          if (in && key > bin_hi) a.atomic_or_shared(&sh.above_bits[p / 32], 1u << (p % 32));
          if (in && key > bin_lo && key <= bin_hi) {
            const int slot = a.atomic_add_shared(&sh.bin_size, 1);
            sh.list[slot] = key;
            gathered_positions[slot] = p;
          }
        });
        a.sync();
        if (t < f.count) {
          const uint32_t mine = sh.list[t];
          const int p = gathered_positions[t];
          int32_t above = 0, equal = 0;
          for (int j = 0; j < f.count; ++j) {
            above += int32_t(sh.list[j] > mine);
            equal += int32_t(sh.list[j] == mine);
          }
          if (above + equal < need) {
            a.atomic_or_shared(&sh.above_bits[p / 32], 1u << (p % 32));
          } else if (above < need) {  // the cut's key (its lanes agree)
            a.atomic_or_shared(&sh.tied_bits[p / 32], 1u << (p % 32));
            sh.scalars[kRankSlot][Row::kAbove] = above;
          }
        }
        a.sync();
        return need - sh.scalars[kRankSlot][Row::kAbove];
      }
      if (shift == 0) {  // a digit of one key: the cut
        mark(bin_hi, bin_hi);
        return need;
      }
      if (f.count <= kSpreadCount) {  // few enough to spread over the next digit's bins: no narrowing read
        lo = bin_lo;
        hi = bin_hi;
        continue;
      }
      // Many entries (ties, or a cluster within the digit): their smallest and largest key.
      uint32_t key_min = 0xffffffffu, key_max = 0u;
      for_list([&](bool in, int, uint32_t key) {
        const bool in_bin = in && key > bin_lo && key <= bin_hi;
        key_min = in_bin && key < key_min ? key : key_min;
        key_max = in_bin && key > key_max ? key : key_max;
      });
      Row::block_min_max(a, sh, key_min, key_max);
      if (key_min == key_max) {  // one key: the cut
        mark(key_min, key_min);
        return need;
      }
      lo = uint64_t(key_min) - 1;
      hi = key_max;
    }
  }

  // The key T: one pass of the coarse digit over the sample (coarse_histogram.hpp: plain atomics spread over
  // hundreds of bins, where the key's own top 11 bits put a sample of N(0, 1) logits in a few dozen) finds the bin
  // of the sample's m-th largest. T is the bin's bound nearer that entry where the sample entries above it stay
  // within [lo, hi] (any T gives the exact set; T only decides how much the scan lists); else, for a bin of one
  // key, that key; else the m-th largest itself, by radix passes over the bin's entries (threshold slots 5 to 7).
  // 0 (kNoEntryKey) where fewer than m entries were drawn. r, the row, names only row_phases' stamp.
  template <class Arch>
  DSA_HD static uint32_t sample_key(const Arch& a, Shared& sh, const uint32_t (&sample)[kSampleItems], int m, int lo,
                                    int hi, [[maybe_unused]] int64_t r = 0) {
    CoarseHistogram<Arch> counted;  // the histogram is clear: RowTopK::clear
    DSA_UNROLL
    for (int i = 0; i < kSampleItems; ++i) counted.count(a, sh.hist, sample[i]);
    counted.flush(a, sh.hist);
    a.sync();
    DSA_ROW_PHASE(r, kSampleCounted);
    const Found f = Row::threshold(a, sh, 4, kBins, m);
    if (f.bin < 0) return kNoEntryKey;
    // The bin holds the keys in (bin_floor, bin_top]; an entry at bin_floor is in the bin below. T = bin_top
    // leaves the bin's entries unlisted (f.above above it); T = bin_floor lists them.
    const uint32_t bin_floor = coarse_digit_floor(f.bin - 1), bin_top = coarse_digit_floor(f.bin);
    const int above_top = f.above, above_floor = f.above + f.count;
    const bool top_ok = above_top >= lo && above_top <= hi, floor_ok = above_floor >= lo && above_floor <= hi;
    if (top_ok && (!floor_ok || m - above_top <= above_floor - m)) return bin_top;
    if (floor_ok) return bin_floor;
    auto in_bin = [&](uint32_t key) { return key != kNoEntryKey && key > bin_floor && key <= bin_top; };
    uint32_t key_min = 0xffffffffu, key_max = 0u;
    DSA_UNROLL
    for (int i = 0; i < kSampleItems; ++i) {
      key_min = in_bin(sample[i]) && sample[i] < key_min ? sample[i] : key_min;
      key_max = in_bin(sample[i]) && sample[i] > key_max ? sample[i] : key_max;
    }
    Row::block_min_max(a, sh, key_min, key_max);
    a.sync();  // the next row reuses warp_min
    if (key_min == key_max) return key_min;
    constexpr RadixPlan radix = plan_11_11_10();
    RadixCut cut;
    int32_t need = m - f.above;
    for (int pass_index = 0; pass_index < radix.passes; ++pass_index) {
      const RadixPass pass = radix.pass[pass_index];
      for (int b = a.thread(); b < pass.bins(); b += kThreads) sh.hist[b] = 0;
      a.sync();
      DSA_UNROLL
      for (int i = 0; i < kSampleItems; ++i)
        Block::add(a, sh.hist, in_bin(sample[i]) && cut.matches(sample[i]), pass.digit(sample[i]));
      a.sync();
      const Found g = Row::threshold(a, sh, 5 + pass_index, pass.bins(), need);
      if (g.bin < 0) return kNoEntryKey;  // only a defect's state gets here
      need -= g.above;
      cut = cut.refined(pass, uint32_t(g.bin));
    }
    return cut.prefix;
  }
};

}  // namespace dsa::common::select
