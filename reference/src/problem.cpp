// Validation of the indexer inputs and the per-row lengths of SPEC 4, 5 and 7.
#include "dsa/problem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"

namespace dsa {
namespace {

std::string fmt_hex(uint8_t v) {
  static const char* digits = "0123456789abcdef";
  return std::string{digits[v >> 4], digits[v & 15]};
}

std::string str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void require_size(const char* name, size_t actual, size_t expected, const std::string& shape) {
  if (actual != expected)
    throw InvalidInput(name, "has " + std::to_string(actual) + " elements, expected " + std::to_string(expected) +
                                 " for shape " + shape);
}

// Tokens a row sees before compression (SPEC 4, 5); padded rows see none.
int64_t row_tokens(const DecodeProblem& p, int64_t row) {
  const int64_t b = row / p.next_n, j = row % p.next_n;
  if (p.seq_lens_2d) return p.is_padded_row(row) ? 0 : p.seq_lens[size_t(row)];
  const int64_t len = p.seq_lens[size_t(b)];
  if (p.decode_lens.empty()) return std::max<int64_t>(0, len - p.next_n + j + 1);
  if (p.is_padded_row(row)) return 0;
  const int64_t d = p.decode_lens[size_t(b)];
  if (p.padded_lengths == PaddedLengths::causal) return std::max<int64_t>(0, len - d + j + 1);
  return std::max<int64_t>(0, len - p.next_n + 1 + j);  // vLLM: as if every request had Lmax rows
}

// NaN codes: e4m3fn 0x7f/0xff, e4m3fnuz 0x80; for MXFP4 q the scale 0xff is NaN.
void check_query_rows(const DecodeProblem& p) {
  const int64_t D = p.head_dim, H = p.heads;
  for (int64_t row = 0; row < p.rows(); ++row) {
    if (p.is_padded_row(row)) continue;
    const int64_t b = row / p.next_n, j = row % p.next_n;
    if (is_fp8(p.element)) {
      const Fp8Format f = fp8_of(p.element);
      const uint8_t* q = p.q.data() + size_t(row * H * D);
      for (int64_t i = 0; i < H * D; ++i)
        if (fp8_is_nan(f, q[i]))
          throw InvalidInput("q", "NaN code 0x" + fmt_hex(q[i]) + " at q[" + std::to_string(b) + "][" +
                                      std::to_string(j) + "][" + std::to_string(i / D) + "][" +
                                      std::to_string(i % D) + "], a row that is not padding");
    } else {
      const uint8_t* s = p.q_block_scales.data() + size_t(row * H * (D / 32));
      for (int64_t i = 0; i < H * (D / 32); ++i)
        if (s[i] == 0xff)
          throw InvalidInput("q_block_scales", "NaN scale 0xff at row " + std::to_string(row) + ", head " +
                                                   std::to_string(i / (D / 32)) + ", block " +
                                                   std::to_string(i % (D / 32)) + " (not a padded row)");
    }
  }
}

}  // namespace

std::string_view to_string(PaddedLengths p) { return p == PaddedLengths::causal ? "causal" : "vllm_padded"; }

bool DecodeProblem::is_padded_row(int64_t row) const {
  if (decode_lens.empty()) return false;
  return (row % next_n) >= decode_lens[size_t(row / next_n)];
}

int64_t visible_len(const DecodeProblem& p, int64_t row) {
  const int64_t tokens = row_tokens(p, row);
  return p.seq_lens_2d ? tokens : tokens / p.compress_ratio;
}

std::vector<int64_t> visible_lens(const DecodeProblem& p) {
  std::vector<int64_t> lens(size_t(p.rows()));
  for (int64_t r = 0; r < p.rows(); ++r) lens[size_t(r)] = visible_len(p, r);
  return lens;
}

int64_t candidate_row_end(const DecodeProblem& p, int64_t row) {
  if (p.seq_lens_2d || p.is_padded_row(row)) return visible_len(p, row);
  return int64_t(p.seq_lens[size_t(row / p.next_n)]) / p.compress_ratio;
}

std::vector<int64_t> candidate_row_ends(const DecodeProblem& p) {
  std::vector<int64_t> ends(size_t(p.rows()));
  for (int64_t r = 0; r < p.rows(); ++r) ends[size_t(r)] = candidate_row_end(p, r);
  return ends;
}

void DecodeProblem::validate() const {
  if (batch < 1) throw InvalidInput("batch", "must be at least 1, got " + std::to_string(batch));
  if (next_n < 1) throw InvalidInput("next_n", "must be at least 1, got " + std::to_string(next_n));
  if (heads < 1) throw InvalidInput("heads", "must be at least 1, got " + std::to_string(heads));
  if (head_dim < 32 || head_dim % 32 != 0)
    throw InvalidInput("head_dim", "must be a positive multiple of 32, got " + std::to_string(head_dim));
  if (compress_ratio < 1)
    throw InvalidInput("compress_ratio", "must be at least 1, got " + std::to_string(compress_ratio));
  if (logits_width < 0) throw InvalidInput("max_model_len", "must not be negative, got " + std::to_string(logits_width));
  if (max_pages < 0) throw InvalidInput("block_table", "max_pages must not be negative, got " + std::to_string(max_pages));
  cache.validate();
  if (cache.element != element)
    throw InvalidInput("kv_cache", std::string("holds ") + std::string(to_string(cache.element)) + " but q is " +
                                       std::string(to_string(element)));
  if (cache.head_dim != head_dim)
    throw InvalidInput("kv_cache", "head_dim " + std::to_string(cache.head_dim) + " but q has head_dim " +
                                       std::to_string(head_dim));

  const std::string qshape = "[" + std::to_string(batch) + ", " + std::to_string(next_n) + ", " +
                             std::to_string(heads) + ", " + std::to_string(head_dim) + "]";
  const size_t qrows = size_t(rows()) * size_t(heads);
  if (is_fp8(element)) {
    require_size("q", q.size(), qrows * size_t(head_dim), qshape);
  } else {
    require_size("q", q.size(), qrows * size_t(head_dim / 2), qshape + " packed as D/2 bytes");
    require_size("q_block_scales", q_block_scales.size(), qrows * size_t(head_dim / 32), qshape + " with D/32 scales");
  }
  require_size("weights", weights.size(), qrows, "[" + std::to_string(rows()) + ", " + std::to_string(heads) + "]");
  for (size_t i = 0; i < weights.size(); ++i)
    if (!std::isfinite(weights[i]))
      throw InvalidInput("weights", "weights[" + std::to_string(i / size_t(heads)) + "][" +
                                        std::to_string(i % size_t(heads)) + "] is " + str(weights[i]));

  if (seq_lens_2d)
    require_size("seq_lens", seq_lens.size(), size_t(rows()),
                 "[" + std::to_string(batch) + ", " + std::to_string(next_n) + "] (2-D)");
  else
    require_size("seq_lens", seq_lens.size(), size_t(batch), "[" + std::to_string(batch) + "] (1-D)");
  for (size_t i = 0; i < seq_lens.size(); ++i)
    if (seq_lens[i] < 0)
      throw InvalidInput("seq_lens", "seq_lens[" + std::to_string(i) + "] is negative (" + std::to_string(seq_lens[i]) + ")");

  if (!decode_lens.empty()) {
    require_size("decode_lens", decode_lens.size(), size_t(batch), "[" + std::to_string(batch) + "]");
    for (size_t b = 0; b < decode_lens.size(); ++b)
      if (decode_lens[b] < 1 || decode_lens[b] > next_n)
        throw InvalidInput("decode_lens", "decode_lens[" + std::to_string(b) + "] = " + std::to_string(decode_lens[b]) +
                                              " is outside [1, next_n = " + std::to_string(next_n) + "]");
  }

  require_size("block_table", block_table.size(), size_t(batch) * size_t(max_pages),
               "[" + std::to_string(batch) + ", " + std::to_string(max_pages) + "]");
  for (int64_t row = 0; row < rows(); ++row) {
    const int64_t len = visible_len(*this, row), end = candidate_row_end(*this, row);
    const int64_t widest = std::max(len, end);
    if (widest > logits_width)
      throw InvalidInput("seq_lens", "row " + std::to_string(row) + " sees " + std::to_string(widest) +
                                         " entries but the logits width (max_model_len / compress_ratio) is " +
                                         std::to_string(logits_width));
    const int64_t pages_needed = (len + cache.block_size - 1) / cache.block_size;
    if (pages_needed > max_pages)
      throw InvalidInput("seq_lens", "row " + std::to_string(row) + " sees " + std::to_string(len) + " entries, " +
                                         std::to_string(pages_needed) + " pages of " + std::to_string(cache.block_size) +
                                         ", but the block table has " + std::to_string(max_pages) + " per request");
    const int64_t b = row / next_n;
    for (int64_t i = 0; i < pages_needed; ++i) {
      const int32_t page = block_table[size_t(b * max_pages + i)];
      if (page < 0 || page >= cache.num_pages)
        throw InvalidInput("block_table", "block_table[" + std::to_string(b) + "][" + std::to_string(i) + "] = " +
                                              std::to_string(page) + " is outside the cache's " +
                                              std::to_string(cache.num_pages) + " pages");
      if (is_fp8(element)) {
        const int64_t slots = std::min<int64_t>(cache.block_size, len - i * cache.block_size);
        const uint8_t* base = cache.bytes.data() + size_t(page) * cache.page_bytes();
        for (int64_t s = 0; s < slots; ++s) {
          float scale;
          std::memcpy(&scale, base + cache.scale_offset(int32_t(s)), sizeof scale);
          if (!std::isfinite(scale) || scale < 0)
            throw InvalidInput("kv_cache", "scale of page " + std::to_string(page) + " slot " + std::to_string(s) +
                                               " (entry " + std::to_string(i * cache.block_size + s) + " of request " +
                                               std::to_string(b) + ") is " + str(scale));
        }
      }
    }
  }
  check_query_rows(*this);
}

void PrefillProblem::validate() const {
  if (rows < 0) throw InvalidInput("q", "negative row count " + std::to_string(rows));
  if (heads < 1) throw InvalidInput("heads", "must be at least 1, got " + std::to_string(heads));
  if (head_dim < 32 || head_dim % 32 != 0)
    throw InvalidInput("head_dim", "must be a positive multiple of 32, got " + std::to_string(head_dim));
  if (!is_fp8(element)) throw InvalidInput("fp8", "prefill logits take fp8 q and K, not mxfp4");
  if (num_k < 0) throw InvalidInput("k", "negative entry count " + std::to_string(num_k));
  const std::string sh = std::to_string(rows) + ", " + std::to_string(heads);
  require_size("q", q.size(), size_t(rows) * size_t(heads) * size_t(head_dim),
               "[" + sh + ", " + std::to_string(head_dim) + "]");
  require_size("k", k.size(), size_t(num_k) * size_t(head_dim),
               "[" + std::to_string(num_k) + ", " + std::to_string(head_dim) + "]");
  require_size("k_scales", k_scales.size(), size_t(num_k), "[" + std::to_string(num_k) + "]");
  require_size("weights", weights.size(), size_t(rows) * size_t(heads), "[" + sh + "]");
  require_size("ks", ks.size(), size_t(rows), "[" + std::to_string(rows) + "]");
  require_size("ke", ke.size(), size_t(rows), "[" + std::to_string(rows) + "]");
  for (size_t i = 0; i < weights.size(); ++i)
    if (!std::isfinite(weights[i]))
      throw InvalidInput("weights", "weights[" + std::to_string(i / size_t(heads)) + "][" +
                                        std::to_string(i % size_t(heads)) + "] is " + str(weights[i]));
  for (int64_t n = 0; n < num_k; ++n)
    if (!std::isfinite(k_scales[size_t(n)]) || k_scales[size_t(n)] < 0)
      throw InvalidInput("k_scales", "k_scales[" + std::to_string(n) + "] is " + str(k_scales[size_t(n)]));
  for (int32_t r = 0; r < rows; ++r) {
    if (ks[size_t(r)] < 0 || ke[size_t(r)] < ks[size_t(r)] || ke[size_t(r)] > num_k)
      throw InvalidInput("ks", "row " + std::to_string(r) + " has [ks, ke) = [" + std::to_string(ks[size_t(r)]) + ", " +
                                   std::to_string(ke[size_t(r)]) + "), not inside [0, " + std::to_string(num_k) + "]");
  }
  const Fp8Format f = fp8_of(element);
  for (size_t i = 0; i < q.size(); ++i)
    if (fp8_is_nan(f, q[i]))
      throw InvalidInput("q", "NaN code 0x" + fmt_hex(q[i]) + " at q[" + std::to_string(i / size_t(heads * head_dim)) +
                                  "][" + std::to_string(i / size_t(head_dim) % size_t(heads)) + "][" +
                                  std::to_string(i % size_t(head_dim)) + "]");
}

}  // namespace dsa
