#include "properties_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "case_random.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/report.hpp"

namespace dsa::fuzz::detail {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct RowChoice {
  std::vector<uint32_t> keys;  // order keys of the chosen values, sorted
  int64_t minus_one = 0;
  std::string problem;  // an index outside the row, a duplicate, poison
};

RowChoice row_choice(const int32_t* idx, int32_t k, const float* row, int64_t n, bool above_neg_inf_only) {
  RowChoice c;
  std::vector<int32_t> seen;
  for (int32_t s = 0; s < k; ++s) {
    const int32_t i = idx[s];
    if (i == -1) {
      ++c.minus_one;
      continue;
    }
    if (i < 0 || i >= n) {
      if (c.problem.empty()) c.problem = fmt::format("slot {} holds {}, outside the row's [0, {})", s, i, n);
      continue;
    }
    if (std::find(seen.begin(), seen.end(), i) != seen.end()) {
      if (c.problem.empty()) c.problem = fmt::format("slot {} repeats index {}", s, i);
      continue;
    }
    seen.push_back(i);
    if (above_neg_inf_only && row[i] == kNegInf) continue;
    c.keys.push_back(topk_order_key(row[i]));
  }
  std::sort(c.keys.begin(), c.keys.end());
  return c;
}

float value_of_key(const float* row, int64_t n, uint32_t key) {
  for (int64_t i = 0; i < n; ++i)
    if (topk_order_key(row[i]) == key) return row[i];
  return std::numeric_limits<float>::quiet_NaN();
}

}  // namespace

TopkIndices poisoned_topk(int64_t rows, int32_t k) {
  TopkIndices t;
  t.rows = rows;
  t.k = k;
  t.indices.assign(size_t(rows) * size_t(k), oracle::kPoisonI32);
  return t;
}

Outcome Verdicts::outcome(const char* ops) const {
  if (!failures.empty()) return failed(fmt::format("{}", fmt::join(failures, "\n")));
  return any_supported ? passed() : unsupported(ops);
}

Logits poisoned_bf16_logits(int64_t rows, int64_t width) {
  Logits l = poisoned_logits(rows, width);
  oracle::fill_poison(l.values, oracle::kPoisonBf16AsF32Bits);
  return l;
}

SparseBlocks poisoned_sparse(const SparseBlocks& shape) {
  SparseBlocks s = shape;
  std::fill(s.ids.begin(), s.ids.end(), oracle::kPoisonI32);
  std::fill(s.end.begin(), s.end.end(), oracle::kPoisonI32);
  return s;
}

std::optional<SparseBlocks> reference_sparse(const DecodeProblem& problem, const CandidateBlocks& candidates) {
  if (candidates.block_size % 8 != 0) return std::nullopt;
  return expand_candidate_blocks(problem, candidates);
}

bool takes_sparse_logits(const DecodeProblem& problem, const Profile& profile) {
  return problem.element == ElementFormat::mxfp4 && profile.logits == Precision::bf16 && profile.accepts(problem.element);
}

TopkIndices draw_index_rows(int64_t rows, int32_t k, uint64_t seed) {
  TopkIndices t{rows, k, std::vector<int32_t>(size_t(rows) * size_t(k))};
  Rng rng = stream({seed, 0, kPadded, 0});
  for (auto& i : t.indices) i = int32_t(rng.uniform_int(-1, 999));
  return t;
}

CandidateBlocks poisoned_blocks(int64_t rows, int32_t slots, int32_t block_size) {
  CandidateBlocks b;
  b.rows = rows;
  b.slots = slots;
  b.block_size = block_size;
  b.blocks.assign(size_t(rows) * size_t(slots), oracle::kPoisonI32);
  return b;
}

Logits poisoned_logits(int64_t rows, int64_t width) {
  Logits l;
  l.rows = rows;
  l.width = width;
  l.values.resize(size_t(rows) * size_t(width));
  oracle::fill_poison(l.values);
  return l;
}

std::string compare_selections(const TopkIndices& a, const std::string& a_name, const TopkIndices& b,
                               const std::string& b_name, const Logits& values, const RowBounds& windows,
                               bool above_neg_inf_only) {
  if (a.rows != b.rows || a.k != b.k)
    return fmt::format("{} is [{}, {}] but {} is [{}, {}]", a_name, a.rows, a.k, b_name, b.rows, b.k);
  for (int64_t r = 0; r < a.rows; ++r) {
    const int64_t start = windows.start[size_t(r)], n = windows.end[size_t(r)] - start;
    const float* row = values.row(r) + start;
    const RowChoice ca = row_choice(a.row(r), a.k, row, n, above_neg_inf_only);
    const RowChoice cb = row_choice(b.row(r), b.k, row, n, above_neg_inf_only);
    if (!ca.problem.empty()) return fmt::format("row {}: {}: {}", r, a_name, ca.problem);
    if (!cb.problem.empty()) return fmt::format("row {}: {}: {}", r, b_name, cb.problem);
    if (ca.keys == cb.keys && (above_neg_inf_only || ca.minus_one == cb.minus_one)) continue;
    std::vector<uint32_t> only_a, only_b;
    std::set_difference(ca.keys.begin(), ca.keys.end(), cb.keys.begin(), cb.keys.end(), std::back_inserter(only_a));
    std::set_difference(cb.keys.begin(), cb.keys.end(), ca.keys.begin(), ca.keys.end(), std::back_inserter(only_b));
    auto show = [&](const std::vector<uint32_t>& keys) {
      std::vector<std::string> v;
      for (size_t i = 0; i < std::min<size_t>(keys.size(), 8); ++i) v.push_back(fmt::format("{}", value_of_key(row, n, keys[i])));
      if (keys.size() > 8) v.push_back(fmt::format("... ({} in all)", keys.size()));
      return fmt::format("{}", fmt::join(v, " "));
    };
    return fmt::format(
        "row {} (window [{}, {})): {} chose {} values and {} x -1, {} chose {} values and {} x -1; values only in {}: "
        "[{}]; only in {}: [{}]",
        r, start, start + n, a_name, ca.keys.size(), ca.minus_one, b_name, cb.keys.size(), cb.minus_one, a_name,
        show(only_a), b_name, show(only_b));
  }
  return {};
}

std::string compare_compact(const Logits& actual, const Logits& expected, const CandidateBlocks& candidates,
                            const std::vector<int64_t>& lens, const std::string& what) {
  const oracle::CompactViews views = oracle::compact_views(actual, expected, candidates, lens);
  oracle::LogitsCheckOptions options;
  options.poison_bits = oracle::kPoisonF32Bits;
  const oracle::LogitsVerdict v =
      oracle::check_logits(views.actual, views.expected, oracle::full_bounds(actual.rows, actual.width), options);
  if (v.passed) return {};
  return what + " (columns are compact columns: slot * S + offset)\n" + oracle::format_table(v);
}

}  // namespace dsa::fuzz::detail
