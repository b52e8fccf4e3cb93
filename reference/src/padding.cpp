// Padding of decode rows (SPEC 5) and the gfx942 design's skip_decode_fill.
#include "dsa/padding.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"

namespace dsa {
namespace {

int64_t total_rows(std::span<const int32_t> decode_lens, int32_t next_n) {
  if (next_n < 1) throw InvalidInput("next_n", "must be at least 1, got " + std::to_string(next_n));
  int64_t total = 0;
  for (size_t b = 0; b < decode_lens.size(); ++b) {
    if (decode_lens[b] < 1 || decode_lens[b] > next_n)
      throw InvalidInput("decode_lens", "decode_lens[" + std::to_string(b) + "] = " + std::to_string(decode_lens[b]) +
                                            " is outside [1, next_n = " + std::to_string(next_n) + "]");
    total += decode_lens[b];
  }
  return total;
}

void require_size(const char* name, size_t actual, size_t expected) {
  if (actual != expected)
    throw InvalidInput(name, "has " + std::to_string(actual) + " elements, expected " + std::to_string(expected));
}

}  // namespace

int32_t max_decode_len(std::span<const int32_t> decode_lens) {
  if (decode_lens.empty()) throw InvalidInput("decode_lens", "a step needs at least one request");
  const int32_t lmax = *std::max_element(decode_lens.begin(), decode_lens.end());
  total_rows(decode_lens, std::max(lmax, 1));
  return lmax;
}

template <class T>
std::vector<T> pack_rows(std::span<const T> rows, std::span<const int32_t> decode_lens, int32_t next_n,
                         size_t row_size, T pad) {
  const int64_t real = total_rows(decode_lens, next_n);
  require_size("rows", rows.size(), size_t(real) * row_size);
  std::vector<T> packed(decode_lens.size() * size_t(next_n) * row_size, pad);
  size_t src = 0;
  for (size_t b = 0; b < decode_lens.size(); ++b) {
    const size_t n = size_t(decode_lens[b]) * row_size;
    std::copy_n(rows.begin() + ptrdiff_t(src), n, packed.begin() + ptrdiff_t(b * size_t(next_n) * row_size));
    src += n;
  }
  return packed;
}

template <class T>
std::vector<T> unpack_rows(std::span<const T> packed, std::span<const int32_t> decode_lens, int32_t next_n,
                           size_t row_size) {
  const int64_t real = total_rows(decode_lens, next_n);
  require_size("rows", packed.size(), decode_lens.size() * size_t(next_n) * row_size);
  std::vector<T> rows;
  rows.reserve(size_t(real) * row_size);
  for (size_t b = 0; b < decode_lens.size(); ++b) {
    const auto first = packed.begin() + ptrdiff_t(b * size_t(next_n) * row_size);
    rows.insert(rows.end(), first, first + ptrdiff_t(size_t(decode_lens[b]) * row_size));
  }
  return rows;
}

template std::vector<uint8_t> pack_rows(std::span<const uint8_t>, std::span<const int32_t>, int32_t, size_t, uint8_t);
template std::vector<int32_t> pack_rows(std::span<const int32_t>, std::span<const int32_t>, int32_t, size_t, int32_t);
template std::vector<float> pack_rows(std::span<const float>, std::span<const int32_t>, int32_t, size_t, float);
template std::vector<uint8_t> unpack_rows(std::span<const uint8_t>, std::span<const int32_t>, int32_t, size_t);
template std::vector<int32_t> unpack_rows(std::span<const int32_t>, std::span<const int32_t>, int32_t, size_t);
template std::vector<float> unpack_rows(std::span<const float>, std::span<const int32_t>, int32_t, size_t);

uint8_t q_pad_byte(ElementFormat element) { return is_fp8(element) ? fp8_pad_code(fp8_of(element)) : 0; }

namespace {

struct RowSizes {
  size_t q, scales, weights;
};

RowSizes row_sizes(const DecodeProblem& p) {
  if (p.heads < 1 || p.head_dim < 32 || p.head_dim % 32 != 0)
    throw InvalidInput("heads", "pack needs heads >= 1 and head_dim a multiple of 32, got H = " +
                                    std::to_string(p.heads) + ", D = " + std::to_string(p.head_dim));
  const size_t H = size_t(p.heads), D = size_t(p.head_dim);
  if (is_fp8(p.element)) return {H * D, 0, H};
  return {H * D / 2, H * D / 32, H};
}

}  // namespace

void pack_decode_rows(DecodeProblem& problem, const RaggedDecodeRows& rows) {
  const RowSizes size = row_sizes(problem);
  const int32_t lmax = max_decode_len(rows.decode_lens);
  if (int64_t(rows.decode_lens.size()) != problem.batch)
    throw InvalidInput("decode_lens", std::to_string(rows.decode_lens.size()) + " requests, the problem has batch " +
                                          std::to_string(problem.batch));
  if (size.scales == 0 && !rows.q_block_scales.empty())
    throw InvalidInput("q_block_scales", "an fp8 q has no block scales");
  // Packed into locals first, so that a bad input leaves the problem as it was.
  auto q = pack_rows<uint8_t>(rows.q, rows.decode_lens, lmax, size.q, q_pad_byte(problem.element));
  auto scales = size.scales == 0 ? std::vector<uint8_t>{}
                                 : pack_rows<uint8_t>(rows.q_block_scales, rows.decode_lens, lmax, size.scales,
                                                      uint8_t(0));
  auto weights = pack_rows<float>(rows.weights, rows.decode_lens, lmax, size.weights, 0.0f);
  problem.next_n = lmax;
  problem.decode_lens = rows.decode_lens;
  problem.q = std::move(q);
  problem.q_block_scales = std::move(scales);
  problem.weights = std::move(weights);
}

RaggedDecodeRows unpack_decode_rows(const DecodeProblem& problem) {
  const RowSizes size = row_sizes(problem);
  RaggedDecodeRows rows;
  rows.decode_lens = problem.decode_lens.empty() ? std::vector<int32_t>(size_t(problem.batch), problem.next_n)
                                                 : problem.decode_lens;
  rows.q = unpack_rows<uint8_t>(problem.q, rows.decode_lens, problem.next_n, size.q);
  if (size.scales != 0)
    rows.q_block_scales = unpack_rows<uint8_t>(problem.q_block_scales, rows.decode_lens, problem.next_n, size.scales);
  rows.weights = unpack_rows<float>(problem.weights, rows.decode_lens, problem.next_n, size.weights);
  return rows;
}

TopkIndices unpack_topk(const TopkIndices& padded, std::span<const int32_t> decode_lens, int32_t next_n) {
  if (padded.rows != int64_t(decode_lens.size()) * next_n)
    throw InvalidInput("topk_indices", std::to_string(padded.rows) + " rows, the padded step has " +
                                           std::to_string(int64_t(decode_lens.size()) * next_n));
  TopkIndices out;
  out.k = padded.k;
  out.indices = unpack_rows<int32_t>(padded.indices, decode_lens, next_n, size_t(padded.k));
  out.rows = padded.k == 0 ? 0 : int64_t(out.indices.size()) / padded.k;
  return out;
}

Logits unpack_logits(const Logits& padded, std::span<const int32_t> decode_lens, int32_t next_n) {
  if (padded.rows != int64_t(decode_lens.size()) * next_n)
    throw InvalidInput("logits", std::to_string(padded.rows) + " rows, the padded step has " +
                                     std::to_string(int64_t(decode_lens.size()) * next_n));
  Logits out;
  out.width = padded.width;
  out.values = unpack_rows<float>(padded.values, decode_lens, next_n, size_t(padded.width));
  out.rows = total_rows(decode_lens, next_n);
  return out;
}

bool requires_padding(std::span<const int32_t> decode_lens, int32_t next_n) {
  total_rows(decode_lens, next_n);
  return std::any_of(decode_lens.begin(), decode_lens.end(), [&](int32_t d) { return d < next_n; });
}

bool requires_padding(const DecodeProblem& problem) { return requires_padding(problem.decode_lens, problem.next_n); }

bool skip_decode_fill(bool has_prefill_rows, int64_t num_decode_tokens, int64_t num_tokens, bool requires_padding) {
  if (num_decode_tokens < 0 || num_decode_tokens > num_tokens)
    throw InvalidInput("num_decode_tokens", std::to_string(num_decode_tokens) + " is outside [0, num_tokens = " +
                                                std::to_string(num_tokens) + "]");
  // Only then does the decode top-k itself write every entry of every row of
  // the step: rows past the decode rows are not its own, and a padded step
  // reaches the buffer through the unpack.
  return !has_prefill_rows && !requires_padding && num_decode_tokens == num_tokens;
}

}  // namespace dsa
