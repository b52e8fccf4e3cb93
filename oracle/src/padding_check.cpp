#include "dsa/oracle/padding_check.hpp"

#include <fmt/format.h>

#include "dsa/error.hpp"

namespace dsa::oracle {
namespace {

// For every output row, the input row it must hold (-1: a pad slot), given rows moved by decode_lens.
std::vector<int64_t> packed_sources(std::span<const int32_t> decode_lens, int32_t next_n) {
  if (next_n < 1) throw InvalidInput("next_n", fmt::format("must be at least 1, got {}", next_n));
  std::vector<int64_t> source;
  int64_t ragged = 0;
  for (size_t b = 0; b < decode_lens.size(); ++b) {
    const int32_t d = decode_lens[b];
    if (d < 1 || d > next_n)
      throw InvalidInput("decode_lens", fmt::format("request {} has {} rows, outside [1, {}]", b, d, next_n));
    for (int32_t j = 0; j < next_n; ++j) source.push_back(j < d ? ragged + j : -1);
    ragged += d;
  }
  return source;
}

int64_t ragged_rows(std::span<const int32_t> decode_lens) {
  int64_t n = 0;
  for (const int32_t d : decode_lens) n += d;
  return n;
}

MovedRowsVerdict empty_verdict(const char* buffer, int64_t rows) {
  MovedRowsVerdict v;
  v.buffer = buffer;
  v.rows = rows;
  return v;
}

// Compares output row r (width cols) with what it must hold; `want(c)` is the expected entry.
template <class Got, class Want>
void compare_row(MovedRowsVerdict& v, int64_t r, int64_t source, int64_t cols, Got&& got, Want&& want, int max_listed) {
  MovedRow m{.row = r, .source = source};
  for (int64_t c = 0; c < cols; ++c) {
    if (got(c) == want(c)) continue;
    if (m.entries_wrong++ == 0) m.first_col = c, m.actual = got(c), m.expected = want(c);
  }
  if (m.entries_wrong == 0) return;
  ++v.rows_wrong;
  v.entries_wrong += m.entries_wrong;
  if (int64_t(v.first_rows.size()) < max_listed) v.first_rows.push_back(m);
}

// For every row of padded index rows, the ragged row it holds (-1: a pad slot); throws on bad shapes.
std::vector<int64_t> padded_sources(const TopkIndices& padded, std::span<const int32_t> decode_lens) {
  const int64_t B = int64_t(decode_lens.size());
  if (B == 0 || padded.rows % B != 0)
    throw InvalidInput("decode_lens", fmt::format("{} requests for {} padded rows", B, padded.rows));
  if (padded.indices.size() != size_t(padded.rows) * size_t(padded.k))
    throw InvalidInput("padded", fmt::format("{} indices for [{}][{}]", padded.indices.size(), padded.rows, padded.k));
  return packed_sources(decode_lens, int32_t(padded.rows / B));
}

}  // namespace

MovedRowsVerdict check_packed_rows(std::span<const uint8_t> ragged, int64_t row_bytes,
                                   std::span<const int32_t> decode_lens, int32_t next_n, uint8_t pad,
                                   std::span<const uint8_t> packed, int max_listed) {
  const std::vector<int64_t> source = packed_sources(decode_lens, next_n);
  if (row_bytes < 0 || int64_t(ragged.size()) != ragged_rows(decode_lens) * row_bytes)
    throw InvalidInput(
        "ragged", fmt::format("{} bytes for {} rows of {} bytes", ragged.size(), ragged_rows(decode_lens), row_bytes));
  if (int64_t(packed.size()) != int64_t(source.size()) * row_bytes)
    throw InvalidInput("packed",
                       fmt::format("{} bytes for {} rows of {} bytes", packed.size(), source.size(), row_bytes));
  MovedRowsVerdict v = empty_verdict("packed rows", int64_t(source.size()));
  for (int64_t r = 0; r < v.rows; ++r) {
    const int64_t s = source[size_t(r)];
    compare_row(
        v, r, s, row_bytes, [&](int64_t c) { return int64_t(packed[size_t(r * row_bytes + c)]); },
        [&](int64_t c) { return int64_t(s < 0 ? pad : ragged[size_t(s * row_bytes + c)]); }, max_listed);
  }
  v.passed = v.rows_wrong == 0;
  return v;
}

MovedRowsVerdict check_unpacked_topk(const TopkIndices& padded, std::span<const int32_t> decode_lens,
                                     const TopkIndices& unpacked, int max_listed) {
  const std::vector<int64_t> source = padded_sources(padded, decode_lens);
  const int64_t rows = ragged_rows(decode_lens);
  if (unpacked.rows != rows || unpacked.k != padded.k || unpacked.indices.size() != size_t(rows) * size_t(padded.k))
    throw InvalidInput("topk_indices", fmt::format("[{}][{}] ({} indices) for {} real rows of k = {}", unpacked.rows,
                                                   unpacked.k, unpacked.indices.size(), rows, padded.k));
  MovedRowsVerdict v = empty_verdict("unpacked top-k", rows);
  for (int64_t r = 0; r < int64_t(source.size()); ++r) {
    const int64_t i = source[size_t(r)];
    if (i < 0) continue;
    compare_row(
        v, i, r, padded.k, [&](int64_t c) { return int64_t(unpacked.row(i)[c]); },
        [&](int64_t c) { return int64_t(padded.row(r)[c]); }, max_listed);
  }
  v.passed = v.rows_wrong == 0;
  return v;
}

MovedRowsVerdict check_pad_slots(const TopkIndices& padded, std::span<const int32_t> decode_lens, int max_listed) {
  const std::vector<int64_t> source = padded_sources(padded, decode_lens);
  MovedRowsVerdict v = empty_verdict("pad slots of the index rows", padded.rows);
  for (int64_t r = 0; r < padded.rows; ++r) {
    if (source[size_t(r)] >= 0) continue;
    compare_row(
        v, r, -1, padded.k, [&](int64_t c) { return int64_t(padded.row(r)[c]); }, [](int64_t) { return int64_t(-1); },
        max_listed);
  }
  v.passed = v.rows_wrong == 0;
  return v;
}

std::string summary_line(const MovedRowsVerdict& v) {
  if (v.passed) return fmt::format("{}: PASS  {} rows where they belong", v.buffer, v.rows);
  return fmt::format("{}: FAIL  {} of {} rows hold something else ({} entries)", v.buffer, v.rows_wrong, v.rows,
                     v.entries_wrong);
}

std::string format_table(const MovedRowsVerdict& v) {
  std::string out = summary_line(v) + "\n";
  if (v.passed) return out;
  out += fmt::format("  {:>7} {:>12} {:>8} {:>9} {:>12} {:>12}\n", "row", "must hold", "wrong", "first col", "actual",
                     "expected");
  for (const auto& m : v.first_rows)
    out += fmt::format("  {:>7} {:>12} {:>8} {:>9} {:>12} {:>12}\n", m.row,
                       m.source < 0 ? std::string("pad") : fmt::format("row {}", m.source), m.entries_wrong,
                       m.first_col, m.actual, m.expected);
  return out;
}

bool may_skip_decode_fill(bool has_prefill_rows, int64_t num_decode_tokens, int64_t num_tokens, bool requires_padding) {
  return !has_prefill_rows && !requires_padding && num_decode_tokens == num_tokens;
}

}  // namespace dsa::oracle
