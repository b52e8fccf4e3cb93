// Which row and which 16-token tiles a block of 4 waves computes. Grid x is
// the row (b * next_n + j), grid y the split of the row into runs of
// tiles_per_block tiles; wave w of a block takes the run's tiles w, w + 4, ...
// Blocks past a row's last tile return at once, so one launch covers rows of
// any length and a long row is spread over many CUs. Index arithmetic is
// 32-bit (the launchers refuse lengths and tables beyond 2^31); only byte
// offsets are 64-bit.
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>

#include "dsa/optimized/hip/kernel_params.hpp"

namespace dsa::gfx942 {

inline constexpr int kWavesPerBlock = 4;
inline constexpr int kThreadsPerBlock = 64 * kWavesPerBlock;

struct DecodeRow {
  int32_t row;                  // b * next_n + j
  int32_t visible_len;          // L_r (SPEC 4)
  const int32_t* pages;         // the request's block_table row
  uint32_t page_size;
};

__device__ inline DecodeRow decode_row(const DecodeRows& rows, int32_t row) {
  const int32_t b = row / rows.next_n;
  const int32_t j = row - b * rows.next_n;
  const int32_t len = rows.seq_lens_2d ? rows.seq_lens[row] : rows.seq_lens[b] - rows.next_n + j + 1;
  return {row, len > 0 ? len : 0, rows.block_table + int64_t(b) * rows.max_pages, uint32_t(rows.page_size)};
}

struct PageSlot {
  int32_t page;
  int32_t slot;
};

// Token n of the row's request; n < visible_len (the table covers it).
__device__ inline PageSlot page_slot(const DecodeRow& r, uint32_t n) {
  const uint32_t p = n / r.page_size;
  return {r.pages[p], int32_t(n - p * r.page_size)};
}

}  // namespace dsa::gfx942
