// The candidate mask (SPEC 7) on the device, as a block body for any vendor
// layer: vLLM's apply_candidate_mask (full: -inf outside [start, E_r) and in
// every non-candidate block) and the gfx942 launch's strided variant (only the
// non-candidate blocks of [start, E_r); the rest as it was). A block takes a
// part of a row at a time: the row's candidate blocks become a bitmap in
// shared memory, then its threads sweep the part.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/radix_keys.hpp"
#include "dsa/common/row_span.hpp"

namespace dsa::common {

// A row is swept in parts of kMaskPart columns, a (row, part) item per block at
// a time (any grid: the blocks walk the items), so that a few long rows still
// keep many blocks busy; each block builds its row's bitmap (one bit per
// candidate block, from the row's slots) before it sweeps its part.
inline constexpr int64_t kMaskPart = 8192;

struct CandidateMaskRows {
  float* logits = nullptr;  // [rows][width], in place
  int64_t row_stride = 0;
  RowSpan span;  // the candidate ops' bounds [start, E_r); span.width is the logits width
  const int32_t* blocks = nullptr;  // [rows][slots], -1 for an empty slot
  int32_t slots = 0;
  int32_t block_size = 1;
  bool full = true;
  // Bitmap words a block needs: one bit per block of the widest row.
  DSA_HD int64_t bitmap_words() const { return ceil_div(ceil_div(span.width, block_size), 32); }
  DSA_HD int64_t parts() const { return ceil_div(span.width, kMaskPart); }  // per row
  // The (row, part) items the blocks walk: a launch sizes its grid by these.
  DSA_HD int64_t items() const { return span.rows * parts(); }
};

template <int kThreads, class Arch>
DSA_HD void candidate_mask_block(const Arch& a, const CandidateMaskRows& p, uint32_t* bitmap) {
  const float neg_inf = bits_float(kMinusInfBits);
  const int64_t parts = p.parts();
  for (int64_t item = a.block(); item < p.items(); item += a.grid()) {
    const int64_t r = item / parts, first = (item % parts) * kMaskPart;
    const int64_t last = first + kMaskPart < p.span.width ? first + kMaskPart : p.span.width;
    const int64_t start = p.span.begin(r), n = p.span.length(r), blocks = ceil_div(n, p.block_size);
    const int64_t words = ceil_div(blocks, 32);
    for (int64_t w = a.thread(); w < words; w += kThreads) bitmap[w] = 0;
    a.sync();
    for (int64_t c = a.thread(); c < p.slots; c += kThreads) {
      const int64_t b = p.blocks[r * p.slots + c];
      if (b >= 0 && b < blocks) a.atomic_or_shared(&bitmap[b / 32], 1u << (b % 32));
    }
    a.sync();
    float* row = p.logits + r * p.row_stride;
    // A column's block by a 32-bit division (a 64-bit one is tens of instructions a
    // column): with the part at or past the row's start, rel = base + offset, whose
    // block is base / S (once a part) plus (base % S + offset) / S; before it,
    // rel < offset < kMaskPart.
    const int64_t base = first - start;  // rel of the part's first column
    const uint32_t block_size = uint32_t(p.block_size);
    const uint32_t first_block = base >= 0 ? uint32_t(base / p.block_size) : 0u;
    const uint32_t lead = base >= 0 ? uint32_t(base % p.block_size) : 0u;
    for (int64_t col = first + a.thread(); col < last; col += kThreads) {
      const int64_t rel = col - start;
      if (rel >= 0 && rel < n) {
        const uint32_t b = base >= 0 ? first_block + (lead + uint32_t(col - first)) / block_size
                                     : uint32_t(rel) / block_size;
        if (!((bitmap[b / 32] >> (b % 32)) & 1u)) row[col] = neg_inf;
      } else if (p.full) {
        row[col] = neg_inf;
      }
    }
    a.sync();
  }
}

}  // namespace dsa::common
