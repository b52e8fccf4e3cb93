// The bounds of a replayed case (cases.hpp, validate_case): a description
// from outside is checked before any array is built from it.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "dsa/checked.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/cases.hpp"
#include "dsa/profile.hpp"

namespace dsa::fuzz {
namespace {

// Extents no case of the generators comes near, far below where int32
// arithmetic in the builders could wrap.
constexpr int64_t kMaxExtent = std::numeric_limits<int64_t>::max();

[[noreturn]] void refuse(const std::string& field, const std::string& why) {
  throw InvalidInput("replay", "field '" + field + "': " + why);
}

void at_least(const std::string& field, int64_t value, int64_t lo, int64_t hi = kMaxExtent) {
  if (value < lo || value > hi) refuse(field, fmt::format("{} is outside [{}, {}]", value, lo, hi));
}

int64_t sum(int64_t a, int64_t b, const std::string& field) {
  try {
    return checked_add<int64_t>(a, b, field);
  } catch (const InvalidInput& e) {
    refuse(field, std::string(e.what()).substr(field.size() + 2));
  }
}

// The case's working set: its arrays, with room for the copies a property makes.
void memory(double bytes, const std::string& what) {
  constexpr double kCopies = 4;
  require_memory("replay", bytes * kCopies, what);
}

void validate(const TopkCase& c) {
  at_least("k", c.k, 1);
  at_least("width_pad", c.width_pad, 0);
  int64_t width = 0;
  for (size_t r = 0; r < c.rows.size(); ++r) {
    const std::string row = fmt::format("rows[{}]", r);
    at_least(row + " start", c.rows[r].start, 0);
    at_least(row + " len", c.rows[r].len, 0);
    width = std::max(width, sum(c.rows[r].start, c.rows[r].len, row + " start + len"));
  }
  width = std::max<int64_t>(1, sum(width, c.width_pad, "width_pad"));
  const double rows = double(c.rows.size());
  memory(rows * double(width) * 4 + rows * double(c.k) * 4, fmt::format("a top-k case of {} rows x {} columns, k = {}", rows, width, c.k));
}

void validate(const CandidateCase& c) {
  at_least("next_n", c.next_n, 1, 1 << 16);
  at_least("block_size", c.block_size, 1);
  at_least("slots", c.slots, 1);
  at_least("k", c.k, 1);
  at_least("width_pad", c.width_pad, 0);
  int64_t width = 0;
  for (size_t b = 0; b < c.requests.size(); ++b) {
    const CandidateRequest& q = c.requests[b];
    const std::string req = fmt::format("requests[{}]", b);
    at_least(req + " len", q.len, 0);
    width = std::max(width, q.len);
    if (c.lens_2d && int64_t(q.row_lens.size()) != c.next_n)
      refuse(req + " row_lens", fmt::format("{} lengths, 2-D lengths need next_n = {}", q.row_lens.size(), c.next_n));
    for (size_t j = 0; j < q.row_lens.size(); ++j) {
      at_least(fmt::format("{} row_lens[{}]", req, j), q.row_lens[j], 0);
      width = std::max(width, q.row_lens[j]);
    }
  }
  width = std::max<int64_t>(1, sum(width, c.width_pad, "width_pad"));
  const double rows = double(c.requests.size()) * c.next_n;
  memory(rows * (double(width) + c.slots + c.k) * 4,
         fmt::format("a candidate case of {} rows x {} columns, {} slots, k = {}", rows, width, c.slots, c.k));
}

void validate(const DecodeCase& c) {
  at_least("next_n", c.next_n, 1, 1 << 16);
  at_least("heads", c.heads, 1);
  at_least("head_dim", c.head_dim, 32);
  if (c.head_dim % 32) refuse("head_dim", fmt::format("{} is not a multiple of 32", c.head_dim));
  at_least("block_size", c.block_size, 1);
  at_least("compress_ratio", c.compress_ratio, 1);
  at_least("spare_pages", c.spare_pages, 0);
  at_least("extra_table_pages", c.extra_table_pages, 0);
  at_least("width_pad", c.width_pad, 0);
  at_least("candidate_block_size", c.candidate_block_size, 1);
  at_least("candidate_slots", c.candidate_slots, 1);
  at_least("topk", c.topk, 1);
  if (c.requests.empty()) refuse("requests", "a decode case needs at least one request");
  find_profile(c.profile);
  double entries = 0, width = 0;
  for (size_t b = 0; b < c.requests.size(); ++b) {
    const DecodeRequest& q = c.requests[b];
    const std::string req = fmt::format("requests[{}]", b);
    at_least(req + " tokens", q.tokens, 0);
    double widest = double(q.tokens) / c.compress_ratio;
    if (c.lens_2d && int64_t(q.row_lens.size()) != c.next_n)
      refuse(req + " row_lens", fmt::format("{} lengths, 2-D lengths need next_n = {}", q.row_lens.size(), c.next_n));
    for (size_t j = 0; j < q.row_lens.size(); ++j) {
      at_least(fmt::format("{} row_lens[{}]", req, j), q.row_lens[j], 0);
      widest = std::max(widest, double(q.row_lens[j]));
    }
    if (c.padded) at_least(req + " decode_len", q.decode_len, 1, c.next_n);
    entries += widest;
    width = std::max(width, widest);
  }
  width += double(c.width_pad);
  const double rows = double(c.requests.size()) * c.next_n;
  const double token_bytes = double(c.head_dim) + 4;
  // Pages: each request's, junk pages between them (non_contiguous), the spare ones.
  const double pages = 2 * (entries / c.block_size + double(c.requests.size())) + 1 + c.spare_pages;
  const double table = double(c.requests.size()) * (width / c.block_size + 1 + c.extra_table_pages);
  memory(pages * c.block_size * token_bytes + table * 4 + rows * c.heads * (token_bytes + 4) +
             rows * (width + double(c.candidate_slots) * c.candidate_block_size + c.topk) * 4,
         fmt::format("a decode case of {} rows x {} columns over {} pages of {}", rows, width, pages, c.block_size));
}

void validate(const PrefillCase& c) {
  at_least("heads", c.heads, 1);
  at_least("head_dim", c.head_dim, 32);
  if (c.head_dim % 32) refuse("head_dim", fmt::format("{} is not a multiple of 32", c.head_dim));
  at_least("num_k", c.num_k, 0);
  at_least("candidate_block_size", c.candidate_block_size, 1);
  at_least("candidate_slots", c.candidate_slots, 1);
  find_profile(c.profile);
  for (size_t r = 0; r < c.rows.size(); ++r) {
    const std::string row = fmt::format("rows[{}]", r);
    at_least(row + " ks", c.rows[r].ks, 0);
    at_least(row + " len", c.rows[r].len, 0);
    const int64_t ke = sum(c.rows[r].ks, c.rows[r].len, row + " ks + len");
    if (ke > c.num_k) refuse(row, fmt::format("[ks, ke) = [{}, {}) is past num_k = {}", c.rows[r].ks, ke, c.num_k));
  }
  const double rows = double(c.rows.size());
  memory(rows * (double(c.num_k) + double(c.candidate_slots) * c.candidate_block_size) * 4 +
             double(c.num_k) * (c.head_dim + 4) + rows * c.heads * (c.head_dim + 4),
         fmt::format("a prefill case of {} rows x {} keys", rows, c.num_k));
}

// What the checks above do not know (a profile that does not take the
// format, heads it cannot split): the builders' own validation, run once.
void build(const TopkCase& c) { make_logits(c); }
void build(const CandidateCase& c) { make_candidates(c, make_logits(c)); }
void build(const DecodeCase& c) { make_candidates(c, make_problem(c)); }
void build(const PrefillCase& c) { make_problem(c); }

}  // namespace

void validate_case(const FuzzCase& c) {
  try {
    std::visit([](const auto& x) { validate(x); }, c);
    std::visit([](const auto& x) { build(x); }, c);
  } catch (const InvalidInput& e) {
    if (e.argument() == "replay") throw;
    throw InvalidInput("replay", e.what());
  }
}

}  // namespace dsa::fuzz
