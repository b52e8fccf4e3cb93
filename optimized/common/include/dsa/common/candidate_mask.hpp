// The candidate mask (SPEC 7) on the device, as a block body for any vendor
// layer: vLLM's apply_candidate_mask (full: -inf outside [start, E_r) and in
// every non-candidate block) and the gfx942 launch's strided variant (only the
// non-candidate blocks of [start, E_r); the rest as it was). A block takes a
// row at a time: the row's candidate blocks become a bitmap in shared memory,
// then its threads sweep the row.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/row_span.hpp"

namespace dsa::common {

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
};

template <int kThreads, class Arch>
DSA_HD void candidate_mask_block(const Arch& a, const CandidateMaskRows& p, uint32_t* bitmap) {
  const float neg_inf = bits_float(0xff800000u);
  for (int64_t r = a.block(); r < p.span.rows; r += a.grid()) {
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
    for (int64_t col = a.thread(); col < p.span.width; col += kThreads) {
      const int64_t rel = col - start;
      if (rel >= 0 && rel < n) {
        const int64_t b = rel / p.block_size;
        if (!((bitmap[b / 32] >> (b % 32)) & 1u)) row[col] = neg_inf;
      } else if (p.full) {
        row[col] = neg_inf;
      }
    }
    a.sync();
  }
}

}  // namespace dsa::common
