// Properties of the selection ops on logits drawn directly: top-k, candidate
// selection, candidate top-k, and their metamorphic relations.
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "properties_checks.hpp"
#include "properties_support.hpp"

namespace dsa::fuzz::detail {

Outcome check_topk_agrees(IndexerOps& impl, const TopkCase& c) {
  const Logits logits = make_logits(c);
  const RowBounds bounds = make_bounds(c);
  TopkIndices out = poisoned_topk(logits.rows, c.k);
  if (!supported([&] { impl.topk(logits, bounds, out); })) return unsupported("topk");
  const oracle::SelectionVerdict v = oracle::check_topk(oracle::view(out), logits, bounds);
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
  // Every block of the logits is scored (past a row's end: -inf), so a block past the row end is an extra block,
  // and only an id past the logits is out of range.
  const int64_t num_blocks = (logits.width + c.block_size - 1) / c.block_size;
  const Logits scores = oracle::candidate_block_scores(logits, c.block_size, bounds, num_blocks);
  const oracle::SelectionVerdict v = oracle::check_candidate_blocks(oracle::view(out), scores);
  if (v.passed) return passed();
  return failed(oracle::format_table(v));
}

Outcome check_candidate_topk_agrees(IndexerOps& impl, const CandidateCase& c) {
  const Logits logits = make_logits(c);
  const RowBounds bounds = topk_bounds(c);
  const CandidateBlocks cand = make_candidates(c, logits);
  TopkIndices out = poisoned_topk(logits.rows, c.k);
  if (!supported([&] { impl.candidate_topk(logits, bounds, cand, out); })) return unsupported("candidate_topk");
  const oracle::SelectionVerdict v =
      oracle::check_topk_among(oracle::view(out), oracle::candidate_columns(logits, bounds, cand));
  if (v.passed) return passed();
  return failed("top-k over each row's candidate columns in [0, L_r): n counts them, missing and extra are "
                "positions, a chosen position outside them is out of range\n" +
                oracle::format_table(v));
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
