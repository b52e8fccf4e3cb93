// Properties of the SM100 sparse form (sparse_sm100.hpp): the sparse block
// ids and ends equal the reference's, the bf16 sparse logits are bit-identical
// over [0, end), and the sparse top-k obeys the rule over [0, end) remapped to
// positions. Each op is fed the reference's output of the op before it.
#include <fmt/format.h>

#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/sparse_check.hpp"
#include "properties_checks.hpp"
#include "properties_support.hpp"

namespace dsa::fuzz::detail {
namespace {

// Row r of an odd case starts at ks = (7r + seed) % 50: the ids shift by ks / SBK.
RowBounds sparse_bounds(const DecodeCase& c, const DecodeProblem& p) {
  RowBounds b = topk_row_bounds(p);
  if (c.seed % 2 == 0) return b;
  for (int64_t r = 0; r < b.rows(); ++r) {
    const int64_t ks = (7 * r + int64_t(c.seed % 50)) % 50;
    b.start[size_t(r)] += ks;
    b.end[size_t(r)] += ks;
  }
  return b;
}

SparseBlocks sparse_of(const DecodeCase& c, const DecodeProblem& p, const CandidateBlocks& cand) {
  if (auto s = reference_sparse(p, cand)) return *s;
  throw InvalidInput("replay", "the sparse form needs a candidate block size that 8 divides, not " +
                                   std::to_string(c.candidate_block_size));
}

void require_sparse_logits(const DecodeProblem& p, const Profile& profile) {
  if (!takes_sparse_logits(p, profile))
    throw InvalidInput("replay",
                       "the sparse logits need an MXFP4 step under a profile writing bf16 logits, not " + profile.name);
}

}  // namespace

Outcome check_sparse_blocks_agree(IndexerOps& impl, const DecodeCase& c) {
  const DecodeProblem p = make_problem(c);
  const CandidateBlocks cand = make_candidates(c, p);
  const RowBounds bounds = sparse_bounds(c, p);
  const SparseBlocks expected = expand_candidate_blocks(cand, bounds);
  SparseBlocks out = poisoned_sparse(expected);
  if (!supported([&] { impl.expand_candidate_blocks(cand, bounds, out); }))
    return unsupported("expand_candidate_blocks");
  const oracle::SparseBlocksVerdict v = oracle::check_sparse_blocks(out, expected);
  if (v.passed) return passed();
  return failed(fmt::format("sparse blocks of rows [ks, L_r + ks) ({}) (actual) versus the reference's (expected)\n",
                            c.seed % 2 ? "ks = (7r + seed) % 50" : "ks = 0") +
                oracle::format_table(v));
}

Outcome check_sparse_logits_agree(IndexerOps& impl, const DecodeCase& c) {
  const DecodeProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  require_sparse_logits(p, profile);
  const SparseBlocks sparse = sparse_of(c, p, make_candidates(c, p));
  Logits out = poisoned_bf16_logits(p.rows(), sparse.width());
  if (!supported([&] { impl.sparse_logits(p, profile, sparse, out); })) return unsupported("sparse_logits");
  oracle::LogitsCheckOptions o;
  o.poison_bits = oracle::kPoisonBf16AsF32Bits;
  o.bf16_ulps = true;
  const oracle::LogitsVerdict v =
      oracle::check_logits(out, sparse_logits(p, profile, sparse),
                           oracle::decode_bounds(std::vector<int64_t>(sparse.end.begin(), sparse.end.end())), o);
  if (v.passed) return passed();
  return failed("bf16 sparse logits over each row's [0, end) (columns are sparse columns: block j * SBK + offset)\n" +
                oracle::format_table(v));
}

Outcome check_sparse_topk_agrees(IndexerOps& impl, const DecodeCase& c) {
  const DecodeProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  require_sparse_logits(p, profile);
  const SparseBlocks sparse = sparse_of(c, p, make_candidates(c, p));
  // The top-k reads the implementation's own sparse logits when it has them.
  Logits values = poisoned_bf16_logits(p.rows(), sparse.width());
  std::string source = "its own sparse logits";
  if (!supported([&] { impl.sparse_logits(p, profile, sparse, values); })) {
    values = sparse_logits(p, profile, sparse);
    source = "the reference's sparse logits";
  }
  const std::vector<int64_t> row_ks(size_t(p.rows()), 0);
  TopkIndices out = poisoned_topk(p.rows(), c.topk);
  if (!supported([&] { impl.sparse_topk(values, sparse, row_ks, out); })) return unsupported("sparse_topk");
  const oracle::SelectionVerdict v =
      oracle::check_topk_among(oracle::view(out), oracle::sparse_columns(values, sparse, row_ks));
  if (v.passed) return passed();
  return failed("sparse top-k on " + source +
                ": the rule over each row's columns [0, end), indices remapped to "
                "positions (a position no column scores is out of range)\n" +
                oracle::format_table(v));
}

}  // namespace dsa::fuzz::detail
