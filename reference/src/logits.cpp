// Reference logits: decode over the paged cache, prefill over contiguous K,
// and the compact path that scores chosen positions only.
//
// Work is split into (request, tile of entries) items run in parallel: each
// item gathers its tile once, computes the dots of all the request's rows (rows
// of one request share K) and reduces them into disjoint columns.
#include "dsa/logits.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "head_dots.hpp"

namespace dsa {
namespace {

constexpr int64_t kItemTokens = 1024;  // tokens per parallel work item
// Below this many products a parallel region costs more than it saves (and
// idle OpenMP threads spin on a loaded machine).
constexpr int64_t kParallelProducts = int64_t(1) << 22;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

detail::KTile tile_of(const GatheredK& k, int32_t head_dim) {
  return {k.element, head_dim, k.num_tokens, k.codes.data(), k.scales.empty() ? nullptr : k.scales.data(),
          k.block_scales.empty() ? nullptr : k.block_scales.data()};
}

detail::QueryRows request_rows(const DecodeProblem& p, int64_t b) {
  const size_t per_row = size_t(p.heads) * size_t(is_fp8(p.element) ? p.head_dim : p.head_dim / 2);
  detail::QueryRows q{p.element, p.next_n, p.heads, p.head_dim, p.q.data() + size_t(b) * p.next_n * per_row, nullptr};
  if (!is_fp8(p.element))
    q.block_scales = p.q_block_scales.data() + size_t(b) * p.next_n * p.heads * (p.head_dim / 32);
  return q;
}

template <class Problem>
void prepare(const Problem& p, const Profile& profile) {
  p.validate();
  profile.require(p.element);
  profile.require_weights(p.weights, p.heads);
}

}  // namespace

LogitsResult decode_logits(const DecodeProblem& p, const Profile& profile, const LogitsOptions& options) {
  prepare(p, profile);
  const ReductionProgram program(profile, p.heads);
  const auto lens = visible_lens(p);
  LogitsResult result;
  result.logits = {p.rows(), p.logits_width, std::vector<float>(size_t(p.rows() * p.logits_width), kNegInf)};
  if (options.with_double)
    result.exact_double.assign(size_t(p.rows() * p.logits_width), -std::numeric_limits<double>::infinity());

  struct Item { int64_t request, begin, end; };
  std::vector<Item> items;
  for (int64_t b = 0; b < p.batch; ++b) {
    int64_t widest = 0;
    for (int32_t j = 0; j < p.next_n; ++j) widest = std::max(widest, lens[size_t(b * p.next_n + j)]);
    for (int64_t t0 = 0; t0 < widest; t0 += kItemTokens) items.push_back({b, t0, std::min(widest, t0 + kItemTokens)});
  }

  const std::span<const int32_t> table(p.block_table);
  int64_t work = 0;
  for (const Item& it : items) work += (it.end - it.begin) * p.next_n * p.heads * p.head_dim;
#pragma omp parallel for schedule(dynamic) if (work >= kParallelProducts)
  for (size_t i = 0; i < items.size(); ++i) {
    const Item it = items[i];
    const GatheredK k = gather_tokens(p.cache, table.subspan(size_t(it.request * p.max_pages), size_t(p.max_pages)),
                                      it.begin, it.end);
    const detail::KTile tile = tile_of(k, p.head_dim);
    const detail::QueryRows q = request_rows(p, it.request);
    std::vector<float> dots(size_t(q.num_rows) * q.heads * tile.count);
    std::vector<double> exact;
    if (options.with_double) exact.resize(dots.size());
    detail::head_dots(profile, q, tile, dots.data(), options.with_double ? exact.data() : nullptr);
    for (int32_t j = 0; j < p.next_n; ++j) {
      const int64_t row = it.request * p.next_n + j;
      const int64_t count = std::min(lens[size_t(row)], it.end) - it.begin;
      if (count <= 0) continue;
      detail::reduce_row(program, profile, dots.data(), options.with_double ? exact.data() : nullptr, tile.count, j,
                         p.heads, p.weights.data() + size_t(row) * p.heads, tile.scales, count,
                         result.logits.row(row) + it.begin,
                         options.with_double ? result.exact_double.data() + row * p.logits_width + it.begin : nullptr);
    }
  }
  return result;
}

std::vector<std::vector<float>> decode_logits_at(const DecodeProblem& p, const Profile& profile,
                                                 const std::vector<std::vector<int64_t>>& positions) {
  prepare(p, profile);
  if (int64_t(positions.size()) != p.rows())
    throw InvalidInput("positions", std::to_string(positions.size()) + " rows of positions for " +
                                        std::to_string(p.rows()) + " rows");
  const ReductionProgram program(profile, p.heads);
  std::vector<std::vector<float>> out(positions.size());
  const std::span<const int32_t> table(p.block_table);
  int64_t work = 0;
  for (const auto& row_positions : positions) work += int64_t(row_positions.size()) * p.heads * p.head_dim;
#pragma omp parallel for schedule(dynamic) if (work >= kParallelProducts)
  for (int64_t row = 0; row < p.rows(); ++row) {
    const auto& want = positions[size_t(row)];
    auto& dst = out[size_t(row)];
    dst.assign(want.size(), kNegInf);
    const int64_t len = visible_len(p, row), b = row / p.next_n;
    // Visible positions in ascending order, each entry gathered once.
    std::vector<int64_t> sorted;
    for (int64_t pos : want)
      if (pos >= 0 && pos < len) sorted.push_back(pos);
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    if (sorted.empty()) continue;
    GatheredK k;
    k.element = p.element;
    k.head_dim = p.head_dim;
    const auto row_table = table.subspan(size_t(b * p.max_pages), size_t(p.max_pages));
    for (size_t run = 0; run < sorted.size();) {
      size_t end = run + 1;
      while (end < sorted.size() && sorted[end] == sorted[end - 1] + 1) ++end;
      const GatheredK part = gather_tokens(p.cache, row_table, sorted[run], sorted[end - 1] + 1);
      k.codes.insert(k.codes.end(), part.codes.begin(), part.codes.end());
      k.scales.insert(k.scales.end(), part.scales.begin(), part.scales.end());
      k.block_scales.insert(k.block_scales.end(), part.block_scales.begin(), part.block_scales.end());
      k.num_tokens += part.num_tokens;
      run = end;
    }
    detail::QueryRows q = request_rows(p, b);
    const int32_t j = int32_t(row % p.next_n);
    const size_t per_row = size_t(p.heads) * size_t(is_fp8(p.element) ? p.head_dim : p.head_dim / 2);
    q.codes += j * per_row;
    if (q.block_scales) q.block_scales += size_t(j) * p.heads * (p.head_dim / 32);
    q.num_rows = 1;
    const detail::KTile tile = tile_of(k, p.head_dim);
    std::vector<float> dots(size_t(p.heads) * tile.count), values(size_t(tile.count));
    detail::head_dots(profile, q, tile, dots.data(), nullptr);
    detail::reduce_row(program, profile, dots.data(), nullptr, tile.count, 0, p.heads,
                       p.weights.data() + size_t(row) * p.heads, tile.scales, tile.count, values.data(), nullptr);
    for (size_t i = 0; i < want.size(); ++i) {
      const auto it = std::lower_bound(sorted.begin(), sorted.end(), want[i]);
      if (it != sorted.end() && *it == want[i]) dst[i] = values[size_t(it - sorted.begin())];
    }
  }
  return out;
}

std::vector<std::vector<float>> prefill_logits_at(const PrefillProblem& p, const Profile& profile,
                                                  const std::vector<std::vector<int64_t>>& positions) {
  prepare(p, profile);
  if (int64_t(positions.size()) != int64_t(p.rows))
    throw InvalidInput("positions", std::to_string(positions.size()) + " rows of positions for " +
                                        std::to_string(p.rows) + " rows");
  const ReductionProgram program(profile, p.heads);
  std::vector<std::vector<float>> out(positions.size());
  int64_t work = 0;
  for (const auto& row_positions : positions) work += int64_t(row_positions.size()) * p.heads * p.head_dim;
  const size_t q_row_bytes = size_t(p.heads) * p.head_dim;
#pragma omp parallel for schedule(dynamic) if (work >= kParallelProducts)
  for (int64_t row = 0; row < int64_t(p.rows); ++row) {
    const auto& want = positions[size_t(row)];
    auto& dst = out[size_t(row)];
    dst.assign(want.size(), kNegInf);
    const int64_t ks = p.ks[size_t(row)], ke = p.ke[size_t(row)];
    std::vector<int64_t> sorted;
    for (int64_t pos : want)
      if (pos >= ks && pos < ke) sorted.push_back(pos);
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    if (sorted.empty()) continue;
    // Only the chosen entries are gathered and scored.
    std::vector<uint8_t> codes(sorted.size() * size_t(p.head_dim));
    std::vector<float> scales(sorted.size());
    for (size_t i = 0; i < sorted.size(); ++i) {
      std::copy_n(p.k.data() + size_t(sorted[i]) * p.head_dim, p.head_dim, codes.data() + i * size_t(p.head_dim));
      scales[i] = p.k_scales[size_t(sorted[i])];
    }
    const detail::KTile tile{p.element, p.head_dim, int64_t(sorted.size()), codes.data(), scales.data(), nullptr};
    const detail::QueryRows q{p.element, 1, p.heads, p.head_dim, p.q.data() + size_t(row) * q_row_bytes, nullptr};
    std::vector<float> dots(size_t(p.heads) * tile.count), values(size_t(tile.count));
    detail::head_dots(profile, q, tile, dots.data(), nullptr);
    detail::reduce_row(program, profile, dots.data(), nullptr, tile.count, 0, p.heads,
                       p.weights.data() + size_t(row) * p.heads, tile.scales, tile.count, values.data(), nullptr);
    for (size_t i = 0; i < want.size(); ++i) {
      const auto it = std::lower_bound(sorted.begin(), sorted.end(), want[i]);
      if (it != sorted.end() && *it == want[i]) dst[i] = values[size_t(it - sorted.begin())];
    }
  }
  return out;
}

LogitsResult prefill_logits(const PrefillProblem& p, const Profile& profile, const LogitsOptions& options) {
  prepare(p, profile);
  const ReductionProgram program(profile, p.heads);
  LogitsResult result;
  result.logits = {p.rows, p.num_k, std::vector<float>(size_t(p.rows) * size_t(p.num_k), kNegInf)};
  if (options.with_double)
    result.exact_double.assign(size_t(p.rows) * size_t(p.num_k), -std::numeric_limits<double>::infinity());

  // Items: a group of up to 8 query rows x a tile of entries inside the group's union range.
  constexpr int32_t kRowGroup = 8;
  struct Item { int32_t row_begin, row_end; int64_t begin, end; };
  std::vector<Item> items;
  for (int32_t r0 = 0; r0 < p.rows; r0 += kRowGroup) {
    const int32_t r1 = std::min(p.rows, r0 + kRowGroup);
    int64_t lo = p.num_k, hi = 0;
    for (int32_t r = r0; r < r1; ++r)
      if (p.ke[size_t(r)] > p.ks[size_t(r)]) {
        lo = std::min<int64_t>(lo, p.ks[size_t(r)]);
        hi = std::max<int64_t>(hi, p.ke[size_t(r)]);
      }
    for (int64_t t0 = lo; t0 < hi; t0 += kItemTokens) items.push_back({r0, r1, t0, std::min(hi, t0 + kItemTokens)});
  }
  const size_t q_row_bytes = size_t(p.heads) * p.head_dim;
  int64_t work = 0;
  for (const Item& it : items) work += (it.end - it.begin) * (it.row_end - it.row_begin) * p.heads * p.head_dim;
#pragma omp parallel for schedule(dynamic) if (work >= kParallelProducts)
  for (size_t i = 0; i < items.size(); ++i) {
    const Item it = items[i];
    const detail::KTile tile{p.element, p.head_dim, it.end - it.begin, p.k.data() + size_t(it.begin) * p.head_dim,
                             p.k_scales.data() + it.begin, nullptr};
    const detail::QueryRows q{p.element, it.row_end - it.row_begin, p.heads, p.head_dim,
                              p.q.data() + size_t(it.row_begin) * q_row_bytes, nullptr};
    std::vector<float> dots(size_t(q.num_rows) * q.heads * tile.count);
    std::vector<double> exact;
    if (options.with_double) exact.resize(dots.size());
    detail::head_dots(profile, q, tile, dots.data(), options.with_double ? exact.data() : nullptr);
    for (int32_t r = it.row_begin; r < it.row_end; ++r) {
      const int64_t from = std::max<int64_t>(it.begin, p.ks[size_t(r)]);
      const int64_t to = std::min<int64_t>(it.end, p.ke[size_t(r)]);
      if (to <= from) continue;
      // reduce_row reads dots from the tile's start: shift the row's view to `from`.
      const int32_t local = r - it.row_begin;
      const int64_t shift = from - it.begin;
      std::vector<float> row_dots(size_t(p.heads) * size_t(to - from));
      std::vector<double> row_exact(options.with_double ? row_dots.size() : 0);
      for (int32_t h = 0; h < p.heads; ++h) {
        const size_t src = (size_t(local) * p.heads + h) * size_t(tile.count) + size_t(shift);
        std::copy_n(dots.data() + src, to - from, row_dots.data() + size_t(h) * size_t(to - from));
        if (options.with_double)
          std::copy_n(exact.data() + src, to - from, row_exact.data() + size_t(h) * size_t(to - from));
      }
      detail::reduce_row(program, profile, row_dots.data(), options.with_double ? row_exact.data() : nullptr,
                         to - from, 0, p.heads, p.weights.data() + size_t(r) * p.heads, tile.scales + shift,
                         to - from, result.logits.row(r) + from,
                         options.with_double ? result.exact_double.data() + r * p.num_k + from : nullptr);
    }
  }
  return result;
}

}  // namespace dsa
