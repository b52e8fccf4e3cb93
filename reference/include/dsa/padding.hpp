// Padding of decode rows (SPEC 5): when a short chunked prefill counts as a
// decode, requests in one step have different numbers of rows d_b. vLLM packs
// them to [B, Lmax] (pack_seq_triton: real rows first, padding at the end),
// runs the padded batch and drops the padded rows again (unpack_seq_triton).
//
// The per-row lengths of a padded step are visible_len (problem.hpp) with
// DecodeProblem::decode_lens and padded_lengths; this file only moves rows.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dsa/kcache.hpp"
#include "dsa/logits.hpp"
#include "dsa/problem.hpp"
#include "dsa/topk.hpp"

namespace dsa {

// Lmax = max d_b. Throws InvalidInput("decode_lens", ...) for an empty list or
// a count below 1.
int32_t max_decode_len(std::span<const int32_t> decode_lens);

// Ragged rows [sum d_b][row_size] -> [B][next_n][row_size]: request b's rows
// go to slots j < d_b, the other slots are filled with `pad`. next_n >= every
// d_b. Throws InvalidInput naming "decode_lens" or "rows" on a mismatch.
template <class T>
std::vector<T> pack_rows(std::span<const T> rows, std::span<const int32_t> decode_lens, int32_t next_n,
                         size_t row_size, T pad);
// The inverse: keeps slots j < d_b of each request, in order.
template <class T>
std::vector<T> unpack_rows(std::span<const T> packed, std::span<const int32_t> decode_lens, int32_t next_n,
                           size_t row_size);
extern template std::vector<uint8_t> pack_rows(std::span<const uint8_t>, std::span<const int32_t>, int32_t, size_t,
                                               uint8_t);
extern template std::vector<int32_t> pack_rows(std::span<const int32_t>, std::span<const int32_t>, int32_t, size_t,
                                               int32_t);
extern template std::vector<float> pack_rows(std::span<const float>, std::span<const int32_t>, int32_t, size_t,
                                             float);
extern template std::vector<uint8_t> unpack_rows(std::span<const uint8_t>, std::span<const int32_t>, int32_t, size_t);
extern template std::vector<int32_t> unpack_rows(std::span<const int32_t>, std::span<const int32_t>, int32_t, size_t);
extern template std::vector<float> unpack_rows(std::span<const float>, std::span<const int32_t>, int32_t, size_t);

// The pad byte of a packed q: -inf cast to fp8 is a NaN code (e4m3 has no
// infinity), fp8_pad_code; an MXFP4 q (and its block scales) pads with 0.
uint8_t q_pad_byte(ElementFormat element);

// A step's ragged inputs: request b has decode_lens[b] rows.
struct RaggedDecodeRows {
  std::vector<int32_t> decode_lens;
  std::vector<uint8_t> q;               // [sum d_b][H][D] codes, or [sum d_b][H][D/2] packed e2m1
  std::vector<uint8_t> q_block_scales;  // mxfp4: [sum d_b][H][D/32]; empty for fp8
  std::vector<float> weights;           // [sum d_b][H]
};

// Packs the rows into `problem` (whose batch, heads, head_dim and element are
// set): next_n = Lmax, decode_lens, q (padded with q_pad_byte), q_block_scales
// (padded with 0) and weights (padded with 0: a padded row's weights are
// never read for a real output). Seq lens, cache and table are left alone.
void pack_decode_rows(DecodeProblem& problem, const RaggedDecodeRows& rows);
// The ragged rows of a padded problem (the inverse of pack_decode_rows).
RaggedDecodeRows unpack_decode_rows(const DecodeProblem& problem);

// Drop the padded rows of a step's outputs (unpack_seq_triton).
TopkIndices unpack_topk(const TopkIndices& padded, std::span<const int32_t> decode_lens, int32_t next_n);
Logits unpack_logits(const Logits& padded, std::span<const int32_t> decode_lens, int32_t next_n);

// True when some request has fewer rows than next_n (vLLM's requires_padding).
bool requires_padding(std::span<const int32_t> decode_lens, int32_t next_n);
bool requires_padding(const DecodeProblem& problem);

// The gfx942 design's topk.skip_decode_fill: a step may skip the -1 pre-fill
// of its index buffer only when the decode top-k writes every entry of every
// row: the step has no prefill rows, no row is padded, and the decode rows
// are all of its rows (num_decode_tokens == num_tokens). Throws
// InvalidInput("num_decode_tokens", ...) when num_decode_tokens is negative
// or exceeds num_tokens.
bool skip_decode_fill(bool has_prefill_rows, int64_t num_decode_tokens, int64_t num_tokens, bool requires_padding);

}  // namespace dsa
