// Properties of the V4.1 candidate launches around selection and top-k: the
// full and strided masks, the gfx942 fused compact logits + top-k, and the
// prefill compact logits.
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/report.hpp"
#include "properties_checks.hpp"
#include "properties_support.hpp"

namespace dsa::fuzz::detail {

Outcome check_candidate_mask_agrees(IndexerOps& impl, const CandidateCase& c) {
  const Logits logits = make_logits(c);
  const RowBounds bounds = candidate_bounds(c);
  const CandidateBlocks cand = make_candidates(c, logits);
  Verdicts v;
  for (const CandidateMask variant : {CandidateMask::full, CandidateMask::strided}) {
    Logits masked = logits;
    if (!supported([&] { impl.candidate_mask(masked, bounds, cand, variant); })) continue;
    // Every entry is the mask's: -inf off the candidate columns, the rest as it was (or -inf outside, full).
    const Logits expected = oracle::expected_candidate_mask(logits, bounds, cand, variant);
    const oracle::LogitsVerdict lv =
        oracle::check_logits(masked, expected, oracle::full_bounds(logits.rows, logits.width));
    const char* name = variant == CandidateMask::full ? "full (vLLM)" : "strided (gfx942)";
    v.add(true, lv.passed ? std::string()
                          : std::string(name) +
                                " candidate mask over [0, E_r) (actual) versus the rows with only the "
                                "candidate columns kept (expected)\n" +
                                oracle::format_table(lv));
  }
  return v.outcome("candidate_mask");
}

Outcome check_candidate_logits_top_k_agrees(IndexerOps& impl, const DecodeCase& c) {
  const DecodeProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  const CandidateBlocks cand = make_candidates(c, p);
  const std::vector<int64_t> lens = visible_lens(p);
  Logits compact = poisoned_logits(p.rows(), int64_t(cand.slots) * cand.block_size);
  TopkIndices chosen = poisoned_topk(p.rows(), c.topk);
  if (!supported([&] { impl.candidate_logits_top_k(p, profile, cand, compact, chosen); }))
    return unsupported("candidate_logits_top_k");
  Verdicts v;
  v.add(true, compare_compact(compact, compact_candidate_logits(p, profile, cand), cand, lens,
                              "the fused launch's compact logits (actual) versus the reference's (expected)"));
  // Its top-k is judged on its own compact logits: the launch reads what it wrote.
  const oracle::SelectionVerdict sv =
      oracle::check_topk_among(oracle::view(chosen), oracle::compact_columns(compact, cand, lens));
  v.add(true, sv.passed
                  ? std::string()
                  : "the fused launch's top-k over its own compact logits (positions in [0, L_r) of the candidate "
                    "columns; a position outside them is out of range)\n" +
                        oracle::format_table(sv));
  return v.outcome("candidate_logits_top_k");
}

Outcome check_prefill_compact_equals_dense(IndexerOps& impl, const PrefillCase& c) {
  const PrefillProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  const CandidateBlocks cand = make_candidates(c, p);
  Logits compact = poisoned_logits(p.rows, int64_t(cand.slots) * cand.block_size);
  if (!supported([&] { impl.prefill_compact_candidate_logits(p, profile, cand, compact); }))
    return unsupported("prefill_compact_candidate_logits");
  // The implementation's own dense prefill logits when it has them, else the reference's.
  Logits dense = poisoned_logits(p.rows, p.num_k);
  std::string source = "its own prefill logits";
  if (!supported([&] { impl.prefill_logits(p, profile, dense); })) {
    dense = prefill_logits(p, profile).logits;
    source = "the reference's prefill logits (the implementation has none)";
  }
  const RowBounds bounds = oracle::prefill_bounds(p.ks, p.ke);
  const std::string diff =
      compare_compact(compact, oracle::compact_from_dense(dense, bounds, cand), cand, oracle::lengths(bounds),
                      "prefill compact candidate logits versus " + source + " at ks + position");
  return diff.empty() ? passed() : failed(diff);
}

}  // namespace dsa::fuzz::detail
