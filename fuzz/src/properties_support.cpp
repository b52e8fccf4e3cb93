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

Outcome Verdicts::outcome(const char* ops) const {
  if (!failures.empty()) return failed(fmt::format("{}", fmt::join(failures, "\n")));
  return any_supported ? passed() : unsupported(ops);
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
