// What a selection ranks: the entries of a row, their keys and what an
// entry's output holds. One per launch of the design:
//   DenseRows         decode/prefill top-k: the row's columns, output = column (relative to the row start)
//   BlockScores       candidate selection: the row's blocks of S columns, key = the block's max
//                     (NaN wins), the newest block +inf, a block of only -inf no entry; output = block id
//   CandidateColumns  candidate top-k and the fused launch: compact column c * S + t of the row's
//                     candidate slots, read from the dense row (at block_c * S + t) or from the compact
//                     row (at c * S + t); no entry for a -1 slot or a position at or past L_r;
//                     output = the position block_c * S + t
//   StagedCandidateRow  one compact row of CandidateColumns (the fused candidate launch's ranking of
//                     the rows it wrote): the same keys and outputs, each run's slot loaded with its
//                     values, the slots kept in shared memory for the outputs
//
// load() fills the keys of positions [first, first + count) in BlockTopK's
// layout (kNoEntryKey elsewhere); key() is one entry's key. A source of values
// (kValues: DenseRows) also has load() in two halves, a row's reader()
// loading bits and key_of_bits(), and keys_at(), the keys of a few runs of four
// entries (a sample's) with all loads issued before the first key; the free functions
// below are those three for every source (a source keyed at load: its keys
// are the bits).
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/radix_keys.hpp"
#include "dsa/common/row_span.hpp"
#include "dsa/common/select/layout.hpp"

namespace dsa::common::select {

// The keys of a run of four values, kNoEntryKey from the `live`-th on (none where live <= 0): a key and
// a select each, no branch (a branch a key, around order_key, cost the short-row kernel about four
// instructions a key more: its SASS in SELECT_RESULTS.md run 40).
DSA_HD inline void run_keys(const float (&v)[4], int32_t live, uint32_t* keys) {
  DSA_UNROLL
  for (int q = 0; q < 4; ++q) {
    const uint32_t key = order_key(v[q]);
    keys[q] = q < live ? key : kNoEntryKey;
  }
}

struct DenseRows {
  static constexpr bool kValues = true;
  const float* logits = nullptr;
  int64_t row_stride = 0;
  RowSpan span;

  DSA_HD int64_t rows() const { return span.rows; }
  DSA_HD int64_t entries(int64_t r) const { return span.length(r); }
  // Row r's first entry (its span's start).
  DSA_HD const float* row_start(int64_t r) const { return logits + r * row_stride + span.begin(r); }
  template <int kThreads, int kItems, class Arch>
  DSA_HD void load(const Arch& a, int64_t r, int64_t first, int64_t count, uint32_t (&keys)[kItems]) const {
    load_as<true, kThreads, kItems>(a, r, first, count, keys);
  }
  // load() in two halves, so that a caller can keep the loads in flight
  // while it works (the key of a value needs the value): a row's Reader
  // loads the values' bits (-inf past count), then key_of_bits() keys each.
  // The Reader is made once a row (RowTopK's stream of tiles): the row's
  // address, its alignment and its span's start are not found again a tile.
  struct Reader {
    const float* row;
    bool aligned;  // the row's start, so every tile's (tiles start at multiples of four)
    template <int kThreads, int kItems, class Arch>
    DSA_HD void load_bits(const Arch& a, int64_t first, int64_t count, uint32_t (&bits)[kItems]) const {
      read_tile<false, kThreads, kItems>(a, row + first, aligned, count, bits);
    }
  };
  DSA_HD Reader reader(int64_t r) const {
    const float* row = row_start(r);
    return Reader{row, (reinterpret_cast<uintptr_t>(row) & 15u) == 0};
  }
  template <bool kKeys, int kThreads, int kItems, class Arch>
  DSA_HD void load_as(const Arch& a, int64_t r, int64_t first, int64_t count, uint32_t (&out)[kItems]) const {
    const float* base = row_start(r) + first;
    read_tile<kKeys, kThreads, kItems>(a, base, (reinterpret_cast<uintptr_t>(base) & 15u) == 0, count, out);
  }
  // Keys (kNoEntryKey past count) or bits (-inf's past count: a comparison
  // with a threshold above -inf needs no mask for them) of [base, base + count).
  template <bool kKeys, int kThreads, int kItems, class Arch>
  DSA_HD static void read_tile(const Arch& a, const float* base, bool aligned, int64_t count, uint32_t (&out)[kItems]) {
    if (aligned && count >= int64_t(kThreads) * kItems) {  // a whole tile: no bounds per entry
      DSA_UNROLL
      for (int run = 0; run < kItems / 4; ++run) {
        float v[4];
        a.load4(base + item_position<kThreads>(a.thread(), run * 4), v);
        DSA_UNROLL
        for (int q = 0; q < 4; ++q) out[run * 4 + q] = kKeys ? order_key(v[q]) : float_bits(v[q]);
      }
      return;
    }
    const float pad = bits_float(kKeys ? 0u : kMinusInfBits);
    DSA_UNROLL
    for (int run = 0; run < kItems / 4; ++run) {
      const int64_t p0 = item_position<kThreads>(a.thread(), run * 4);
      float v[4] = {pad, pad, pad, pad};
      if (aligned && p0 + 4 <= count) {
        a.load4(base + p0, v);
      } else {
        DSA_UNROLL
        for (int q = 0; q < 4; ++q)
          if (p0 + q < count) v[q] = base[p0 + q];
      }
      DSA_UNROLL
      for (int q = 0; q < 4; ++q)
        out[run * 4 + q] = !kKeys ? float_bits(v[q]) : p0 + q < count ? order_key(v[q]) : kNoEntryKey;
    }
  }
  DSA_HD static uint32_t key_of_bits(uint32_t bits, bool in) { return in ? order_key(bits_float(bits)) : kNoEntryKey; }
  DSA_HD uint32_t key(int64_t r, int64_t pos) const { return order_key(row_start(r)[pos]); }
  // pos: runs of four consecutive positions, each run's first a multiple of four. A run is one 16-byte load
  // where the row's start is aligned: four scalar loads of 4096 scattered runs cost the block four times the
  // cache's accesses, each a run's line again.
  template <int n, class Arch>
  DSA_HD void keys_at(const Arch& a, int64_t r, const int (&pos)[n], uint32_t (&keys)[n]) const {
    static_assert(n % 4 == 0, "whole runs");
    const float* row = row_start(r);
    const bool aligned = (reinterpret_cast<uintptr_t>(row) & 15u) == 0;
    float v[n];
    DSA_UNROLL
    for (int run = 0; run < n / 4; ++run) {
      float quad[4];
      if (aligned) {
        a.load4(row + pos[run * 4], quad);
      } else {
        DSA_UNROLL
        for (int q = 0; q < 4; ++q) quad[q] = row[pos[run * 4 + q]];
      }
      DSA_UNROLL
      for (int q = 0; q < 4; ++q) v[run * 4 + q] = quad[q];
    }
    DSA_UNROLL
    for (int i = 0; i < n; ++i) keys[i] = order_key(v[i]);
  }
  DSA_HD int32_t payload(int64_t, int64_t pos) const { return int32_t(pos); }
};

struct BlockScores {
  static constexpr bool kValues = false;
  const float* logits = nullptr;
  int64_t row_stride = 0;
  RowSpan span;  // the candidate ops' bounds [start, E_r)
  int32_t block_size = 1;

  DSA_HD int64_t rows() const { return span.rows; }
  DSA_HD int64_t entries(int64_t r) const { return ceil_div(span.length(r), block_size); }
  // A whole block of a row whose start is 16-byte aligned, in blocks of a multiple of four, is read in
  // 16-byte loads (the designs' blocks of 8: two); the row's last block where it is cut short, and every
  // block of other rows, a value at a time. A warp's scalar loads of blocks 32 bytes apart each touch
  // eight lines, four times the cache's accesses of its 16-byte ones for the same bytes.
  template <int kThreads, int kItems, class Arch>
  DSA_HD void load(const Arch& a, int64_t r, int64_t first, int64_t count, uint32_t (&keys)[kItems]) const {
    const int64_t len = span.length(r);
    const float* row = logits + r * row_stride + span.begin(r);
    const int64_t newest = (len - 1) / block_size;
    const bool quads = block_size % 4 == 0 && (reinterpret_cast<uintptr_t>(row) & 15u) == 0;
    DSA_UNROLL
    for (int i = 0; i < kItems; ++i) {
      const int64_t pos = item_position<kThreads>(a.thread(), i);
      if (pos >= count) {
        keys[i] = kNoEntryKey;
        continue;
      }
      const int64_t c = first + pos, lo = c * block_size;
      uint32_t key;
      if (quads && lo + block_size <= len)
        key = block_size == 8 ? quads_key<2>(a, row + lo) : quads_key(a, row + lo, block_size / 4);
      else
        key = block_max(row, len, c);
      keys[i] = scored(c, newest, key);
    }
  }
  DSA_HD uint32_t key(int64_t r, int64_t c) const {
    const int64_t len = span.length(r);
    return scored(c, (len - 1) / block_size, block_max(logits + r * row_stride + span.begin(r), len, c));
  }
  // Block c's largest key, a value at a time (max_order_key).
  DSA_HD uint32_t block_max(const float* row, int64_t len, int64_t c) const {
    const int64_t lo = c * block_size;
    return max_order_key(row, lo, min64(lo + block_size, len));
  }
  // Block c's key from its largest value's (max_order_key): the newest block +inf, no entry for a block
  // of only -inf.
  DSA_HD static uint32_t scored(int64_t c, int64_t newest, uint32_t key) {
    return c == newest ? kPlusInfKey : key == kMinusInfKey ? kNoEntryKey : key;
  }
  // The largest key of kQuads (or `quads`) runs of four values at p, 16-byte aligned.
  template <int kQuads, class Arch>
  DSA_HD static uint32_t quads_key(const Arch& a, const float* p) {
    uint32_t key = kMinusInfKey;
    DSA_UNROLL
    for (int q = 0; q < kQuads; ++q) {
      float v[4];
      a.load4(p + 4 * q, v);
      const uint32_t run = max_order_key(v, 0, 4);
      key = run > key ? run : key;
    }
    return key;
  }
  template <class Arch>
  DSA_HD static uint32_t quads_key(const Arch& a, const float* p, int quads) {
    uint32_t key = kMinusInfKey;
    for (int q = 0; q < quads; ++q) {
      const uint32_t run = quads_key<1>(a, p + 4 * q);
      key = run > key ? run : key;
    }
    return key;
  }
  DSA_HD int32_t payload(int64_t, int64_t pos) const { return int32_t(pos); }
};

struct CandidateColumns {
  static constexpr bool kValues = false;
  const float* values = nullptr;  // dense rows, or compact rows when `compact`
  int64_t row_stride = 0;
  RowSpan span;  // the top-k bounds [start, L_r); compact rows start at 0
  const int32_t* blocks = nullptr;  // [rows][slots], -1 for an empty slot
  int32_t slots = 0;
  int32_t block_size = 1;
  bool compact = false;

  DSA_HD int64_t rows() const { return span.rows; }
  DSA_HD int64_t entries(int64_t) const { return int64_t(slots) * block_size; }
  // Columns and slots fit 32 bits (the launches refuse rows past 2^31 - 1 entries): a 32-bit division.
  DSA_HD int64_t position(int64_t r, int64_t col) const {
    const uint32_t c = uint32_t(col), bs = uint32_t(block_size);
    const int32_t b = blocks[r * slots + c / bs];
    return b < 0 ? -1 : int64_t(b) * block_size + c % bs;
  }
  template <int kThreads, int kItems, class Arch>
  DSA_HD void load(const Arch& a, int64_t r, int64_t first, int64_t count, uint32_t (&keys)[kItems]) const {
    const int64_t len = span.length(r);
    const float* row = values + r * row_stride + (compact ? 0 : span.begin(r));
    if (block_size % 4 == 0 && first % 4 == 0) {  // a run of four columns lies in one block: one lookup, one load
      const uint32_t bs = uint32_t(block_size);
      if ((bs & (bs - 1u)) == 0u)
        load_runs<kThreads, kItems>(a, r, row, uint32_t(first), uint32_t(count), uint32_t(len),
                                    ShiftBlocks{bs, uint32_t(popc(bs - 1u))}, keys);
      else
        load_runs<kThreads, kItems>(a, r, row, uint32_t(first), uint32_t(count), uint32_t(len), DivideBlocks{bs},
                                    keys);
      return;
    }
    DSA_UNROLL
    for (int i = 0; i < kItems; ++i) {
      const int64_t pos = item_position<kThreads>(a.thread(), i);
      keys[i] = pos < count ? key(r, first + pos) : kNoEntryKey;
    }
  }
  // A column's slot and its offset in the slot's block: a shift and a mask for blocks of a power of
  // two (the designs' 8), a division otherwise (about a dozen instructions a run in the SASS of the
  // short-row kernel of run 37).
  struct ShiftBlocks {
    uint32_t size, shift;
    DSA_HD uint32_t slot(uint32_t col) const { return col >> shift; }
    DSA_HD uint32_t offset(uint32_t col) const { return col & (size - 1u); }
  };
  struct DivideBlocks {
    uint32_t size;
    DSA_HD uint32_t slot(uint32_t col) const { return col / size; }
    DSA_HD uint32_t offset(uint32_t col) const { return col % size; }
  };
  // load() of runs of four columns in one block each, in 32 bits (the launches refuse rows past 2^31 - 1
  // entries; 64-bit positions made this load about 48 instructions a key, their addresses spilled: ncu,
  // SELECT_RESULTS.md run 35), the row's alignment decided once. Every lookup is issued before the first
  // is used, then every 16-byte load (a compact row's with the lookups: its address is the column's),
  // then the keys: in the SASS of run 37's short-row kernel each run's lookup, then its load, was waited
  // for before the next run's were issued (eight round trips to memory one after the other). A run is
  // one 16-byte load where its four values lie in the row: a compact row holds every slot's values
  // (those past L_r unwritten, their keys masked), a dense row's run must end by L_r; the others (a
  // row's unaligned start or ragged end) load each value.
  template <int kThreads, int kItems, class Arch, class Blocks>
  DSA_HD void load_runs(const Arch& a, int64_t r, const float* row, uint32_t at, uint32_t n, uint32_t length,
                        Blocks blk, uint32_t (&keys)[kItems]) const {
    constexpr int kRuns = kItems / 4;
    const int32_t* row_blocks = blocks + r * slots;
    const bool aligned = (reinterpret_cast<uintptr_t>(row) & 15u) == 0;
    int32_t b[kRuns];
    float v[kRuns][4];
    bool whole[kRuns];
    DSA_UNROLL
    for (int run = 0; run < kRuns; ++run) {
      const uint32_t p0 = uint32_t(item_position<kThreads>(a.thread(), run * 4)), col = at + p0;
      b[run] = p0 < n ? row_blocks[blk.slot(col)] : -1;
      whole[run] = compact && aligned && p0 + 4 <= n;
      DSA_UNROLL
      for (int q = 0; q < 4; ++q) v[run][q] = 0.0f;
      if (whole[run]) a.load4(row + col, v[run]);
    }
    if (!compact) {
      DSA_UNROLL
      for (int run = 0; run < kRuns; ++run) {
        const uint32_t p0 = uint32_t(item_position<kThreads>(a.thread(), run * 4)), col = at + p0;
        const uint32_t pos = uint32_t(b[run]) * blk.size + blk.offset(col);
        whole[run] = b[run] >= 0 && aligned && p0 + 4 <= n && pos + 4 <= length;
        if (whole[run]) a.load4(row + pos, v[run]);
      }
    }
    DSA_UNROLL
    for (int run = 0; run < kRuns; ++run) {
      const uint32_t p0 = uint32_t(item_position<kThreads>(a.thread(), run * 4)), col = at + p0;
      const uint32_t pos = uint32_t(b[run]) * blk.size + blk.offset(col);
      if (whole[run]) {  // the usual run: its four values loaded, a slot's entries up to L_r live
        run_keys(v[run], b[run] < 0 ? 0 : int32_t(length) - int32_t(pos), keys + run * 4);
      } else {
        uint32_t k4[4] = {kNoEntryKey, kNoEntryKey, kNoEntryKey, kNoEntryKey};
        if (b[run] >= 0) {
          const float* from = row + (compact ? col : pos);
          DSA_UNROLL
          for (int q = 0; q < 4; ++q)
            if (p0 + q < n && pos + q < length) k4[q] = order_key(from[q]);
        }
        DSA_UNROLL
        for (int q = 0; q < 4; ++q) keys[run * 4 + q] = k4[q];
      }
    }
  }
  // Compact column col's key.
  DSA_HD uint32_t key(int64_t r, int64_t col) const {
    const int64_t p = position(r, col);
    if (p < 0 || p >= span.length(r)) return kNoEntryKey;
    return order_key(compact ? values[r * row_stride + col] : values[r * row_stride + span.begin(r) + p]);
  }
  DSA_HD int32_t payload(int64_t r, int64_t col) const { return int32_t(position(r, col)); }
};

// One compact row of CandidateColumns (compact = true): the same keys and
// payloads. Its load() reads each run's slot with the run's values, all of
// them issued at once, and keeps the slots in `staged` (shared memory), where
// payload() reads them (after the caller's barrier): the emitting step then
// waits for no global lookup. The values are read through the Arch's load4,
// which the fused launch points at L2 (other blocks wrote them). Its row index
// is ignored: one row.
struct StagedCandidateRow {
  static constexpr bool kValues = false;
  const float* values = nullptr;    // the compact row, slots * block_size entries, 16-byte aligned
  const int32_t* blocks = nullptr;  // the row's [slots] block ids, -1 for an empty slot
  int32_t* staged = nullptr;        // [slots] in shared memory, written by load()
  int32_t slots = 0;
  int32_t block_size = 8;           // a multiple of 4: a run of four columns lies in one block
  int64_t length = 0;               // L_r: positions at or past it are no entry

  DSA_HD int64_t rows() const { return 1; }
  DSA_HD int64_t entries(int64_t) const { return int64_t(slots) * block_size; }
  // Positions [first, first + count), first a multiple of 4 (ShortRowTopK loads the row from 0); in 32 bits,
  // as CandidateColumns' runs.
  template <int kThreads, int kItems, class Arch>
  DSA_HD void load(const Arch& a, int64_t, int64_t first, int64_t count, uint32_t (&keys)[kItems]) const {
    const uint32_t bs = uint32_t(block_size), n = uint32_t(count), at = uint32_t(first);
    const int32_t len = int32_t(length);
    int32_t b[kItems / 4];
    DSA_UNROLL
    for (int run = 0; run < kItems / 4; ++run) {  // every load first, none under a divergent branch
      const uint32_t p0 = uint32_t(item_position<kThreads>(a.thread(), run * 4));
      float four[4] = {0, 0, 0, 0};
      b[run] = -1;
      // A run the block's count ends before (block-uniform: a slice of the row) loads nothing.
      if (uint32_t(run * kThreads * 4) < n) {
        const uint32_t col = p0 + 4 <= n ? at + p0 : 0u;  // past the row: column 0, unused
        b[run] = blocks[col / bs];
        a.load4(values + col, four);
      }
      DSA_UNROLL
      for (int q = 0; q < 4; ++q) keys[run * 4 + q] = float_bits(four[q]);
    }
    DSA_UNROLL
    for (int run = 0; run < kItems / 4; ++run) {
      const uint32_t p0 = uint32_t(item_position<kThreads>(a.thread(), run * 4)), col = at + p0;
      const bool in = p0 + 4 <= n;
      if (in && col % bs == 0) staged[col / bs] = b[run];  // one writer per slot: its first run
      const int32_t pos = !in || b[run] < 0 ? -1 : b[run] * int32_t(bs) + int32_t(col % bs);
      const float four[4] = {bits_float(keys[run * 4]), bits_float(keys[run * 4 + 1]), bits_float(keys[run * 4 + 2]),
                             bits_float(keys[run * 4 + 3])};
      run_keys(four, pos < 0 ? 0 : len - pos, keys + run * 4);
    }
  }
  // After load() and a barrier.
  DSA_HD int64_t position(int64_t col) const {
    const uint32_t c = uint32_t(col), bs = uint32_t(block_size);
    const int32_t b = staged[c / bs];
    return b < 0 ? -1 : int64_t(b) * block_size + c % bs;
  }
  DSA_HD uint32_t key(int64_t, int64_t col) const {
    const int64_t p = position(col);
    return p < 0 || p >= length ? kNoEntryKey : order_key(values[col]);
  }
  DSA_HD int32_t payload(int64_t, int64_t col) const { return int32_t(position(col)); }
};

// What RowTopK reads a source through (see the top): a row's tile reader,
// made once a row, loading the values' bits for a source of values (keyed
// when used) and the keys straight away for the others (a block's key is a
// loop over its values, a candidate column's slot decides whether it is an
// entry).
template <class Source>
struct KeyTileReader {
  const Source* src;
  int64_t r;
  template <int kThreads, int kItems, class Arch>
  DSA_HD void load_bits(const Arch& a, int64_t first, int64_t count, uint32_t (&keys)[kItems]) const {
    src->template load<kThreads, kItems>(a, r, first, count, keys);
  }
};
template <class Source>
DSA_HD auto tile_reader(const Source& src, int64_t r) {
  if constexpr (Source::kValues)
    return src.reader(r);
  else
    return KeyTileReader<Source>{&src, r};
}
template <class Source>
DSA_HD uint32_t key_of_bits(uint32_t bits, bool in) {
  if constexpr (Source::kValues)
    return Source::key_of_bits(bits, in);
  else
    return bits;
}
template <int n, class Arch, class Source>
DSA_HD void keys_at(const Arch& a, const Source& src, int64_t r, const int (&pos)[n], uint32_t (&keys)[n]) {
  if constexpr (Source::kValues) {
    src.keys_at(a, r, pos, keys);
  } else {
    DSA_UNROLL
    for (int i = 0; i < n; ++i) keys[i] = src.key(r, pos[i]);
  }
}

}  // namespace dsa::common::select
