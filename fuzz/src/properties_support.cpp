#include "properties_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "case_random.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/choice_check.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/report.hpp"

namespace dsa::fuzz::detail {

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
  return problem.element == ElementFormat::mxfp4 && profile.logits == Precision::bf16 &&
         profile.accepts(problem.element);
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
  const oracle::ChoiceVerdict v =
      oracle::check_same_choice(oracle::view(a), a_name, oracle::view(b), b_name, values, windows, above_neg_inf_only);
  return v.passed ? std::string() : oracle::format_table(v);
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
