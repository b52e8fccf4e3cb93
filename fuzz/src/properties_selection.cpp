// Properties of the selection ops on logits drawn directly: top-k, candidate
// selection, candidate top-k, and their metamorphic relations.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "dsa/oracle/report.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "properties_checks.hpp"
#include "properties_support.hpp"

namespace dsa::fuzz::detail {
namespace {

// Past every index a row can hold: the oracle reports it as out of range.
constexpr int32_t kNotACandidate = 1 << 30;

// The columns a candidate top-k may choose in row r (candidate blocks'
// columns inside [start, end)), in position order.
std::vector<int64_t> candidate_columns(const CandidateBlocks& cand, int64_t r, int64_t start, int64_t end) {
  std::vector<int64_t> cols;
  for (int32_t s = 0; s < cand.slots; ++s) {
    const int32_t b = cand.row(r)[s];
    if (b < 0) continue;
    for (int64_t t = 0; t < cand.block_size; ++t) {
      const int64_t pos = int64_t(b) * cand.block_size + t;
      if (pos < end - start) cols.push_back(pos);
    }
  }
  std::sort(cols.begin(), cols.end());
  return cols;
}

}  // namespace

Outcome check_topk_agrees(IndexerOps& impl, const TopkCase& c) {
  const Logits logits = make_logits(c);
  const RowBounds bounds = make_bounds(c);
  TopkIndices out = poisoned_topk(logits.rows, c.k);
  if (!supported([&] { impl.topk(logits, bounds, out); })) return unsupported("topk");
  const oracle::SelectionVerdict v = oracle::check_topk(oracle::view(out), logits, windows_of(bounds));
  if (v.passed) return passed();
  return failed(oracle::format_table(v));
}

Outcome check_columns_past_length_ignored(IndexerOps& impl, const TopkCase& c) {
  const Logits logits = make_logits(c);
  const RowBounds bounds = make_bounds(c);
  const Logits other = with_other_tail(logits, bounds, c.seed);
  TopkIndices first = poisoned_topk(logits.rows, c.k), second = poisoned_topk(logits.rows, c.k);
  if (!supported([&] { impl.topk(logits, bounds, first); })) return unsupported("topk");
  impl.topk(other, bounds, second);
  const std::string diff = compare_selections(first, "top-k", second, "top-k after rewriting the columns past the row",
                                              logits, bounds);
  return diff.empty() ? passed() : failed(diff);
}

Outcome check_columns_past_length_ignored(IndexerOps& impl, const CandidateCase& c) {
  const Logits logits = make_logits(c);
  const RowBounds bounds = topk_bounds(c);
  const CandidateBlocks cand = make_candidates(c, logits);
  const Logits other = with_other_tail(logits, bounds, c.seed);
  TopkIndices first = poisoned_topk(logits.rows, c.k), second = poisoned_topk(logits.rows, c.k);
  if (!supported([&] { impl.candidate_topk(logits, bounds, cand, first); })) return unsupported("candidate_topk");
  impl.candidate_topk(other, bounds, cand, second);
  const std::string diff = compare_selections(first, "candidate top-k", second,
                                              "candidate top-k after rewriting the columns from L_r on", logits, bounds);
  return diff.empty() ? passed() : failed(diff);
}

Outcome check_candidate_select_agrees(IndexerOps& impl, const CandidateCase& c) {
  const Logits logits = make_logits(c);
  const RowBounds bounds = candidate_bounds(c);
  CandidateBlocks out = poisoned_blocks(logits.rows, c.slots, c.block_size);
  if (!supported([&] { impl.candidate_select(logits, bounds, out); })) return unsupported("candidate_select");
  const auto windows = windows_of(bounds);
  const Logits scores = oracle::candidate_block_scores(logits, c.block_size, windows);
  const oracle::SelectionVerdict v = oracle::check_candidate_blocks(view_blocks(out), scores);
  if (v.passed) return passed();
  return failed(oracle::format_table(v));
}

Outcome check_candidate_topk_agrees(IndexerOps& impl, const CandidateCase& c) {
  const Logits logits = make_logits(c);
  const RowBounds bounds = topk_bounds(c);
  const CandidateBlocks cand = make_candidates(c, logits);
  TopkIndices out = poisoned_topk(logits.rows, c.k);
  if (!supported([&] { impl.candidate_topk(logits, bounds, cand, out); })) return unsupported("candidate_topk");

  // The rule over each row's candidate columns: the row's values gathered in
  // position order, the chosen positions mapped to their place among them.
  std::vector<std::vector<int64_t>> cols(static_cast<size_t>(logits.rows));
  int64_t widest = 1;
  for (int64_t r = 0; r < logits.rows; ++r) {
    cols[size_t(r)] = candidate_columns(cand, r, bounds.start[size_t(r)], bounds.end[size_t(r)]);
    widest = std::max<int64_t>(widest, int64_t(cols[size_t(r)].size()));
  }
  Logits gathered;
  gathered.rows = logits.rows;
  gathered.width = widest;
  gathered.values.assign(size_t(gathered.rows * widest), -std::numeric_limits<float>::infinity());
  TopkIndices mapped = out;
  std::vector<int64_t> lens;
  for (int64_t r = 0; r < logits.rows; ++r) {
    const auto& cr = cols[size_t(r)];
    for (size_t i = 0; i < cr.size(); ++i) gathered.row(r)[i] = logits.at(r, bounds.start[size_t(r)] + cr[i]);
    lens.push_back(int64_t(cr.size()));
    for (int32_t s = 0; s < out.k; ++s) {
      int32_t& idx = mapped.row(r)[s];
      if (idx < 0) continue;  // -1, or poison: the rule reports it
      const auto it = std::lower_bound(cr.begin(), cr.end(), int64_t(idx));
      idx = (it != cr.end() && *it == idx) ? int32_t(it - cr.begin()) : kNotACandidate;
    }
  }
  const oracle::SelectionVerdict v = oracle::check_topk(oracle::view(mapped), gathered, lens);
  if (v.passed) return passed();
  return failed("indices below count a row's candidate columns inside [0, L_r), in position order; " +
                std::to_string(kNotACandidate) + " marks a position that is not one\n" + oracle::format_table(v));
}

Outcome check_mask_then_topk(IndexerOps& impl, const CandidateCase& c) {
  const Logits logits = make_logits(c);
  const RowBounds tb = topk_bounds(c), cb = candidate_bounds(c);
  const CandidateBlocks cand = make_candidates(c, logits);
  TopkIndices direct = poisoned_topk(logits.rows, c.k), masked_topk = poisoned_topk(logits.rows, c.k);
  Logits masked = logits;
  apply_candidate_mask(masked, cb, cand, CandidateMask::full);
  // An implementation with one of the two ops is checked against the
  // reference's other one; with neither, the property does not apply.
  const auto reference = make_reference_ops();
  std::string direct_name = "candidate top-k", masked_name = "top-k of the masked row";
  const bool has_direct = supported([&] { impl.candidate_topk(logits, tb, cand, direct); });
  const bool has_topk = supported([&] { impl.topk(masked, tb, masked_topk); });
  if (!has_direct && !has_topk) return unsupported("candidate_topk and topk");
  if (!has_direct) {
    reference->candidate_topk(logits, tb, cand, direct);
    direct_name += " (the reference's)";
  }
  if (!has_topk) {
    reference->topk(masked, tb, masked_topk);
    masked_name += " (the reference's top-k)";
  }
  // SPEC 7: they agree on every entry above -inf; where fewer than k
  // candidate columns are visible the masked top-k also returns -inf columns.
  const std::string diff = compare_selections(direct, direct_name, masked_topk, masked_name, masked, tb, true);
  return diff.empty() ? passed() : failed(diff);
}

}  // namespace dsa::fuzz::detail
