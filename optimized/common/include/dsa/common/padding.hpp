// Padded decode steps (SPEC 5) on the device: vLLM's pack_seq_triton on byte
// rows and unpack_seq_triton on top-k indices, and the gfx942 design's
// skip_decode_fill rule. Block bodies for any vendor layer: a grid-stride
// loop over output rows, the block's threads over a row's entries.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

namespace dsa::common {

// The -1 pre-fill of the index buffer may be skipped only when the decode
// top-k writes every entry of every row of the step: no prefill rows, no
// padded row, and the decode rows are all the rows (the arguments are checked
// by the caller: 0 <= num_decode_tokens <= num_tokens).
DSA_HD constexpr bool skip_decode_fill(bool has_prefill_rows, int64_t num_decode_tokens, int64_t num_tokens,
                                       bool requires_padding) {
  return !has_prefill_rows && !requires_padding && num_decode_tokens == num_tokens;
}

// The first ragged row of request b: the sum of decode_lens before it (a
// step has tens of requests; each block sums them itself).
DSA_HD inline int64_t first_ragged_row(const int32_t* decode_lens, int64_t b) {
  int64_t first = 0;
  for (int64_t i = 0; i < b; ++i) first += decode_lens[i];
  return first;
}

// Ragged [sum d_b][row_bytes] -> packed [batch][next_n][row_bytes]: slot j of
// request b is its row j when j < d_b, else `pad` bytes.
struct PackRows {
  const uint8_t* ragged = nullptr;
  uint8_t* packed = nullptr;
  int64_t row_bytes = 0;
  const int32_t* decode_lens = nullptr;
  int32_t batch = 0, next_n = 1;
  uint8_t pad = 0;
};

template <int kThreads, class Arch>
DSA_HD void pack_rows_block(const Arch& a, const PackRows& p) {
  const int64_t rows = int64_t(p.batch) * p.next_n;
  for (int64_t row = a.block(); row < rows; row += a.grid()) {
    const int64_t b = row / p.next_n, j = row % p.next_n;
    const uint8_t* src = j < p.decode_lens[b] ? p.ragged + (first_ragged_row(p.decode_lens, b) + j) * p.row_bytes : nullptr;
    uint8_t* dst = p.packed + row * p.row_bytes;
    for (int64_t i = a.thread(); i < p.row_bytes; i += kThreads) dst[i] = src ? src[i] : p.pad;
  }
}

// Padded [batch * next_n][k] -> ragged [sum d_b][k]: the first d_b rows of
// each request, in order.
struct UnpackTopk {
  const int32_t* padded = nullptr;
  int32_t* out = nullptr;
  int32_t k = 0;
  const int32_t* decode_lens = nullptr;
  int32_t batch = 0, next_n = 1;
  int64_t out_rows = 0;
};

template <int kThreads, class Arch>
DSA_HD void unpack_topk_block(const Arch& a, const UnpackTopk& p) {
  for (int64_t row = a.block(); row < p.out_rows; row += a.grid()) {
    int64_t b = 0, first = 0;
    while (b + 1 < p.batch && first + p.decode_lens[b] <= row) first += p.decode_lens[b++];
    const int32_t* src = p.padded + (b * p.next_n + (row - first)) * p.k;
    for (int64_t i = a.thread(); i < p.k; i += kThreads) p.out[row * p.k + i] = src[i];
  }
}

}  // namespace dsa::common
