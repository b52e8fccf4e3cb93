// Decode padding (SPEC 5): vLLM's pack_seq_triton and unpack_seq_triton only
// move rows, so what they must write is fixed. Ragged row i is real slot
// j < d_b of request b (i = d_0 + ... + d_{b-1} + j); the packed step's row
// b * next_n + j holds it, and request b's slots j >= d_b hold the pad.
// And the gfx942 design's skip_decode_fill, stated apart from the reference.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dsa/topk.hpp"

namespace dsa::oracle {

struct MovedRow {
  int64_t row = 0;      // in the output
  int64_t source = -1;  // the input row it must hold; -1 for a pad slot
  int64_t entries_wrong = 0;
  int64_t first_col = 0;
  int64_t actual = 0, expected = 0;  // at first_col
};

struct MovedRowsVerdict {
  std::string buffer;  // "packed rows", "unpacked top-k"
  bool passed = true;
  int64_t rows = 0;
  int64_t rows_wrong = 0;
  int64_t entries_wrong = 0;
  std::vector<MovedRow> first_rows;  // row order, first max_listed
};

// packed [B * next_n][row_bytes] against ragged [sum d_b][row_bytes]: real
// slots equal their ragged row, pad slots hold `pad` in every byte. Throws
// InvalidInput("decode_lens") for a d_b outside [1, next_n], ("ragged",
// "packed") for sizes that do not match the lengths.
MovedRowsVerdict check_packed_rows(std::span<const uint8_t> ragged, int64_t row_bytes,
                                   std::span<const int32_t> decode_lens, int32_t next_n, uint8_t pad,
                                   std::span<const uint8_t> packed, int max_listed = 10);
// unpacked [sum d_b][k] against padded [B * next_n][k] (next_n = padded.rows / B):
// row i equals the padded row of its slot.
MovedRowsVerdict check_unpacked_topk(const TopkIndices& padded, std::span<const int32_t> decode_lens,
                                     const TopkIndices& unpacked, int max_listed = 10);

// The index rows of a padded step [B * next_n][k] (next_n = padded.rows / B):
// every pad slot (j >= d_b) holds -1 in every entry, its garbage logits never
// reach the index buffer (SPEC 5). Real slots are not judged here.
MovedRowsVerdict check_pad_slots(const TopkIndices& padded, std::span<const int32_t> decode_lens,
                                 int max_listed = 10);

std::string summary_line(const MovedRowsVerdict& v);
std::string format_table(const MovedRowsVerdict& v);

// A step may skip the -1 pre-fill of its index buffer only when the decode
// top-k writes every entry of every row: no prefill rows, no padded request,
// and every token of the step a decode token.
bool may_skip_decode_fill(bool has_prefill_rows, int64_t num_decode_tokens, int64_t num_tokens, bool requires_padding);

}  // namespace dsa::oracle
