// Logits drawn directly: the top-k and candidate cases.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "case_random.hpp"
#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/fuzz/cases.hpp"
#include "special_values.hpp"

namespace dsa::fuzz {
namespace {

using detail::bell;
using detail::stream;

using detail::kInf;

float draw_value(ValueKind kind, Rng& rng) {
  switch (kind) {
    case ValueKind::normal: return float(bell(rng));
    case ValueKind::few_levels: return 0.25f * float(rng.uniform_int(1, 4));
    case ValueKind::constant: return 1.5f;
    case ValueKind::mostly_neg_inf: return rng.uniform_int(0, 7) == 0 ? float(bell(rng)) : -kInf;
    case ValueKind::one_coarse_bin:
      // [1, 1 + 2^-11): every value rounds to the fp16 1.0, the fp32 values differ.
      return 1.0f + std::ldexp(float(rng.uniform_int(0, 4095)), -23);
    case ValueKind::nan_heavy: {
      if (rng.uniform_int(0, 7) == 0) return float(bell(rng));
      static constexpr uint32_t nans[] = {0x7FC00000u, 0xFFC00000u, 0x7FFFFFFFu};
      return std::bit_cast<float>(nans[rng.uniform_int(0, 2)]);
    }
    case ValueKind::extremes: {
      static const float pool[] = {kInf,
                                   -kInf,
                                   std::numeric_limits<float>::max(),
                                   -std::numeric_limits<float>::max(),
                                   std::numeric_limits<float>::min(),
                                   std::numeric_limits<float>::denorm_min(),
                                   -std::numeric_limits<float>::denorm_min(),
                                   0.0f,
                                   -0.0f,
                                   1e-40f,
                                   -1e-40f,
                                   1.0f,
                                   std::numeric_limits<float>::quiet_NaN()};
      // NaN one time in 64: rows with a NaN or two, not rows of NaN.
      const int64_t i = rng.uniform_int(0, 63);
      return i < 12 ? pool[i % 12] : (i == 63 ? pool[12] : pool[i % 12]);
    }
    case ValueKind::small_integers: return float(rng.uniform_int(-3, 3));
    case ValueKind::bf16_valued: return round_to_bf16(float(bell(rng)));
    case ValueKind::below_fp16:
      // Finite and distinct below -65520 (fp16 has no value there: through fp16 they are -inf, with the
      // phantom -inf lanes of a kernel's last partial tile, cudnn-frontend #446), one in 16 N(0, 1).
      return rng.uniform_int(0, 15) == 0 ? float(bell(rng)) : -65536.0f - float(rng.uniform01()) * 1e6f;
  }
  return 0.0f;
}

float draw_garbage(Rng& rng) {
  switch (rng.uniform_int(0, 3)) {
    case 0: return kInf;
    case 1: return std::bit_cast<float>(0x7FC0DEADu);
    case 2: return std::numeric_limits<float>::max();
    default: return 1e30f;
  }
}

void fill_tail(float* row, int64_t width, int64_t begin, int64_t end, TailKind tail, Rng& rng) {
  for (int64_t c = 0; c < width; ++c) {
    if (c == begin) c = end;
    if (c >= width) break;
    row[c] = tail == TailKind::neg_inf ? -kInf : draw_garbage(rng);
  }
}

void fill_window(float* row, int64_t len, ValueKind kind, Rng& rng) {
  for (int64_t c = 0; c < len; ++c) row[c] = draw_value(kind, rng);
}

// Per row of a candidate case: its request, its index in the request.
int64_t candidate_rows(const CandidateCase& c) { return int64_t(c.requests.size()) * c.next_n; }

int64_t row_end(const CandidateCase& c, int64_t r) {
  const auto& q = c.requests[size_t(r / c.next_n)];
  return c.lens_2d ? q.row_lens[size_t(r % c.next_n)] : q.len;
}

int64_t row_len(const CandidateCase& c, int64_t r) {
  const auto& q = c.requests[size_t(r / c.next_n)];
  if (c.lens_2d) return q.row_lens[size_t(r % c.next_n)];
  return std::max<int64_t>(0, q.len - c.next_n + r % c.next_n + 1);
}

void check_candidate_case(const CandidateCase& c) {
  if (c.next_n < 1) throw InvalidInput("next_n", "must be at least 1");
  if (c.block_size < 1 || c.slots < 1 || c.k < 1)
    throw InvalidInput("candidate", "block_size, slots and k must be at least 1");
  for (const auto& q : c.requests) {
    if (q.len < 0) throw InvalidInput("len", "negative length");
    if (c.lens_2d && int64_t(q.row_lens.size()) != c.next_n)
      throw InvalidInput("row_lens", "2-D lengths need next_n of them per request");
    for (int64_t l : q.row_lens)
      if (l < 0) throw InvalidInput("row_lens", "negative length");
  }
}

}  // namespace

Logits make_logits(const TopkCase& c) {
  int64_t width = 0;
  for (const auto& row : c.rows) {
    if (row.start < 0 || row.len < 0) throw InvalidInput("rows", "negative start or length");
    width = std::max(width, row.start + row.len);
  }
  Logits out;
  out.rows = int64_t(c.rows.size());
  out.width = std::max<int64_t>(1, width + c.width_pad);
  out.values.resize(size_t(out.rows * out.width));
  for (int64_t r = 0; r < out.rows; ++r) {
    const TopkRow& row = c.rows[size_t(r)];
    Rng values = stream({c.seed, row.seed, detail::kValues});
    Rng tail = stream({c.seed, row.seed, detail::kTail});
    fill_window(out.row(r) + row.start, row.len, row.values, values);
    fill_tail(out.row(r), out.width, row.start, row.start + row.len, c.tail, tail);
  }
  return out;
}

RowBounds make_bounds(const TopkCase& c) {
  RowBounds b;
  for (const auto& row : c.rows) {
    b.start.push_back(row.start);
    b.end.push_back(row.start + row.len);
  }
  return b;
}

Logits with_other_tail(const Logits& logits, const RowBounds& windows, uint64_t seed) {
  Logits out = logits;
  for (int64_t r = 0; r < out.rows; ++r) {
    Rng rng = stream({seed, uint64_t(r), detail::kTail, 0xA17});
    const int64_t begin = windows.start[size_t(r)], end = windows.end[size_t(r)];
    float* row = out.row(r);
    for (int64_t c = 0; c < out.width; ++c) {
      if (c >= begin && c < end) continue;
      // Swap the kind of garbage: what was -inf becomes huge, anything else -inf or NaN.
      row[c] = row[c] == -kInf ? draw_garbage(rng) : (rng.bernoulli(0.5) ? -kInf : std::bit_cast<float>(0x7FC0BEEFu));
    }
  }
  return out;
}

Logits make_logits(const CandidateCase& c) {
  check_candidate_case(c);
  const int64_t rows = candidate_rows(c);
  int64_t width = 0;
  for (int64_t r = 0; r < rows; ++r) width = std::max({width, row_end(c, r), row_len(c, r)});
  Logits out;
  out.rows = rows;
  out.width = std::max<int64_t>(1, width + c.width_pad);
  out.values.resize(size_t(out.rows * out.width));
  for (int64_t r = 0; r < rows; ++r) {
    const CandidateRequest& q = c.requests[size_t(r / c.next_n)];
    const uint64_t j = uint64_t(r % c.next_n);
    Rng values = stream({c.seed, q.seed, detail::kValues, j});
    Rng tail = stream({c.seed, q.seed, detail::kTail, j});
    // The window is what the candidate ops read: [0, max(E_r, L_r)).
    const int64_t end = std::max(row_end(c, r), row_len(c, r));
    fill_window(out.row(r), end, q.values, values);
    fill_tail(out.row(r), out.width, 0, end, c.tail, tail);
  }
  return out;
}

RowBounds candidate_bounds(const CandidateCase& c) {
  RowBounds b;
  for (int64_t r = 0; r < candidate_rows(c); ++r) {
    b.start.push_back(0);
    b.end.push_back(row_end(c, r));
  }
  return b;
}

RowBounds topk_bounds(const CandidateCase& c) {
  RowBounds b;
  for (int64_t r = 0; r < candidate_rows(c); ++r) {
    b.start.push_back(0);
    b.end.push_back(row_len(c, r));
  }
  return b;
}

namespace detail {

// Distinct blocks of [0, num_blocks) for one row, the newest block (of a
// row ending at `end`) usually among them, then the -1 tail.
void draw_candidate_row(int32_t* out, int32_t slots, int64_t num_blocks, int64_t end, int32_t block_size, Rng& rng) {
  std::fill_n(out, slots, -1);
  std::vector<int32_t> chosen;
  if (end > 0 && rng.uniform_int(0, 3) != 0) chosen.push_back(int32_t((end - 1) / block_size));
  const int64_t want = std::min<int64_t>(slots, rng.uniform_int(0, slots));
  for (int64_t tries = 0; int64_t(chosen.size()) < want && tries < 4 * int64_t(slots) + 8; ++tries) {
    const int32_t b = int32_t(rng.uniform_int(0, std::max<int64_t>(0, num_blocks - 1)));
    if (std::find(chosen.begin(), chosen.end(), b) == chosen.end()) chosen.push_back(b);
  }
  for (size_t i = chosen.size(); i > 1; --i) std::swap(chosen[i - 1], chosen[size_t(rng.uniform_int(0, int64_t(i) - 1))]);
  std::copy(chosen.begin(), chosen.end(), out);
}

}  // namespace detail

CandidateBlocks make_candidates(const CandidateCase& c, const Logits& logits) {
  if (c.source == CandidateSource::selected)
    return select_candidate_blocks(logits, candidate_bounds(c), c.block_size, c.slots);
  return detail::draw_candidates(
      logits.rows, c.slots, c.block_size, logits.width,
      [&](int64_t r) {
        return stream({c.seed, c.requests[size_t(r / c.next_n)].seed, detail::kCandidates, uint64_t(r % c.next_n)});
      },
      [&](int64_t r) { return row_end(c, r); });
}

}  // namespace dsa::fuzz
