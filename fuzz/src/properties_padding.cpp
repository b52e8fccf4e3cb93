// Properties of the decode padding ops (SPEC 5): pack_seq_triton and
// unpack_seq_triton move rows and nothing else, and a round trip through both
// gives the rows back; skip_decode_fill answers the rule.
#include <cstring>

#include <fmt/format.h>

#include "dsa/oracle/padding_check.hpp"
#include "dsa/padding.hpp"
#include "properties_checks.hpp"
#include "properties_support.hpp"

namespace dsa::fuzz::detail {
namespace {

int64_t real_rows(std::span<const int32_t> decode_lens) {
  int64_t n = 0;
  for (const int32_t d : decode_lens) n += d;
  return n;
}

// The implementation's pack_rows into a buffer filled with `fill`; false when it does not take it.
bool pack(IndexerOps& impl, const ByteRows& ragged, std::span<const int32_t> lens, int32_t next_n, uint8_t pad,
          uint8_t fill, ByteRows& packed) {
  packed = ByteRows{int64_t(lens.size()) * next_n, ragged.row_bytes, {}};
  packed.bytes.assign(size_t(packed.rows) * size_t(packed.row_bytes), fill);
  return supported([&] { impl.pack_rows(ragged, lens, pad, packed); });
}

}  // namespace

Outcome check_padding_round_trip(IndexerOps& impl, const DecodeCase& c) {
  if (!c.padded) throw InvalidInput("replay", "padding_round_trip takes padded decode cases");
  // The step's shape alone: its rows only move, so their bytes are drawn, not computed.
  std::vector<int32_t> lens;
  for (const auto& q : c.requests) lens.push_back(q.decode_len);
  const int64_t rows = real_rows(lens);
  Verdicts v;

  // q rows (H x D fp8 codes, or D/2 packed e2m1 bytes) packed with the format's
  // pad byte. Two fills of the output: a byte the implementation never wrote
  // keeps the fill, and no byte can equal both.
  const int64_t row_bytes = int64_t(c.heads) * (c.element == ElementFormat::mxfp4 ? c.head_dim / 2 : c.head_dim);
  const TopkIndices words = draw_index_rows(rows, int32_t((row_bytes + 3) / 4), c.seed ^ 0x9);
  ByteRows q{rows, row_bytes, std::vector<uint8_t>(size_t(rows) * size_t(row_bytes))};
  for (size_t i = 0; i < q.bytes.size(); ++i)
    q.bytes[i] = uint8_t(words.indices[i / 4 % words.indices.size()] >> (i % 4 * 8));
  const uint8_t pad = q_pad_byte(c.element);
  for (const uint8_t fill : {uint8_t(0x00), uint8_t(0xFF)}) {
    ByteRows packed;
    if (!pack(impl, q, lens, c.next_n, pad, fill, packed)) break;
    const auto pv = oracle::check_packed_rows(q.bytes, q.row_bytes, lens, c.next_n, pad, packed.bytes);
    v.add(true, pv.passed ? std::string()
                          : fmt::format("pack_rows of q rows (pad 0x{:02x}, output filled with 0x{:02x} first)\n", pad,
                                        fill) +
                                oracle::format_table(pv));
  }

  // Index rows through pack_rows (pad 0xFF: -1) and back through unpack_topk.
  const TopkIndices ragged = draw_index_rows(rows, c.topk, c.seed);
  ByteRows ragged_bytes{ragged.rows, int64_t(ragged.k) * 4, std::vector<uint8_t>(ragged.indices.size() * 4)};
  std::memcpy(ragged_bytes.bytes.data(), ragged.indices.data(), ragged_bytes.bytes.size());
  ByteRows packed;
  TopkIndices padded{int64_t(lens.size()) * c.next_n, c.topk, {}};
  padded.indices.resize(size_t(padded.rows) * size_t(c.topk));
  std::string padded_by = "the implementation's pack_rows";
  if (pack(impl, ragged_bytes, lens, c.next_n, 0xFF, 0x00, packed)) {
    const auto pv =
        oracle::check_packed_rows(ragged_bytes.bytes, ragged_bytes.row_bytes, lens, c.next_n, 0xFF, packed.bytes);
    v.add(true,
          pv.passed ? std::string() : "pack_rows of index rows (pad 0xff, -1 as int32)\n" + oracle::format_table(pv));
    std::memcpy(padded.indices.data(), packed.bytes.data(), packed.bytes.size());
  } else {
    padded.indices = pack_rows<int32_t>(ragged.indices, lens, c.next_n, size_t(c.topk), -1);
    padded_by = "the reference's pack_rows";
  }
  TopkIndices back = poisoned_topk(rows, c.topk);
  if (supported([&] { impl.unpack_topk(padded, lens, back); })) {
    const auto uv = oracle::check_unpacked_topk(padded, lens, back);
    v.add(true,
          uv.passed ? std::string() : "unpack_topk of rows packed by " + padded_by + "\n" + oracle::format_table(uv));
    if (uv.passed && back.indices != ragged.indices)
      v.add(true, "unpack_topk(pack_rows(rows)) is not the rows it started from (packed by " + padded_by + ")");
  }
  return v.outcome("pack_rows and unpack_topk");
}

Outcome check_skip_decode_fill_agrees(IndexerOps& impl, const DecodeCase& c) {
  // Only the step's shape matters: its tokens and whether a request is padded.
  std::vector<int32_t> lens;
  for (const auto& q : c.requests) lens.push_back(c.padded ? q.decode_len : c.next_n);
  const int64_t tokens = real_rows(lens);
  const bool padding = c.padded && requires_padding(lens, c.next_n);
  Verdicts v;
  for (const bool prefill : {false, true})
    for (const int64_t decode : {tokens, tokens - 1, int64_t(0)}) {
      if (decode < 0) continue;
      bool answer = false;
      if (!supported([&] { answer = impl.skip_decode_fill(prefill, decode, tokens, padding); })) continue;
      const bool rule = oracle::may_skip_decode_fill(prefill, decode, tokens, padding);
      v.add(true, answer == rule ? std::string()
                                 : fmt::format("skip_decode_fill(has_prefill_rows = {}, num_decode_tokens = {}, "
                                               "num_tokens = {}, requires_padding = {}) answered {}, the rule says {}",
                                               prefill, decode, tokens, padding, answer, rule));
    }
  // Counts no step can have are bad input, not an answer.
  if (v.any_supported)
    for (const int64_t decode : {int64_t(-1), tokens + 1}) {
      std::string answered;
      try {
        answered = fmt::format("answered {}", impl.skip_decode_fill(false, decode, tokens, padding));
      } catch (const InvalidInput&) {
        continue;
      } catch (const std::exception& e) {
        answered = fmt::format("threw '{}' instead of InvalidInput", e.what());
      }
      v.add(true,
            fmt::format("skip_decode_fill(num_decode_tokens = {}, num_tokens = {}) {}", decode, tokens, answered));
    }
  return v.outcome("skip_decode_fill");
}

}  // namespace dsa::fuzz::detail
