// The reference's expected outputs for a golden case, op by op.
#include <algorithm>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/error.hpp"

namespace dsa::dataset {
namespace {

bool wanted(const std::vector<std::string>& names, const char* name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

Logits the_logits(const GoldenCase& c, const Profile& profile) {
  if (c.given_logits) return *c.given_logits;
  return c.prefill ? prefill_logits(*c.prefill, profile).logits : decode_logits(*c.decode, profile).logits;
}

TopkIndices plain_topk(const GoldenCase& c, const Logits& logits) {
  return c.prefill ? prefill_topk(*c.prefill, logits, c.settings.topk) : decode_topk(*c.decode, logits, c.settings.topk);
}

}  // namespace

void compute_expected(GoldenCase& c) { compute_expected(c, op_outputs(c.settings.op, c.logits_given())); }

void compute_expected(GoldenCase& c, const std::vector<std::string>& names) {
  const auto possible = op_outputs(c.settings.op, c.logits_given());
  for (const auto& name : names)
    if (!wanted(possible, name.c_str()))
      throw InvalidInput("outputs", "'" + name + "' is not an output of op " + std::string(to_string(c.settings.op)));
  const Profile& profile = find_profile(c.settings.profile);
  GoldenOutputs& o = c.expected;
  o = {};
  const bool topk = c.settings.topk > 0 && wanted(names, out::topk_indices);
  const GoldenOp op = c.settings.op;

  if (op == GoldenOp::compact_candidate_logits) {
    const Logits compact = compact_candidate_logits(*c.decode, profile, *c.candidate_blocks);
    if (topk) o.topk_indices = compact_candidate_topk(compact, *c.candidate_blocks, visible_lens(*c.decode), c.settings.topk);
    if (wanted(names, out::compact_logits)) o.compact_logits = compact;
    return;
  }
  if (op == GoldenOp::sparse_sm100) {
    const SparseBlocks sparse = expand_candidate_blocks(*c.decode, *c.candidate_blocks);
    const Logits values = sparse_logits(*c.decode, profile, sparse);
    if (topk) {
      const std::vector<int64_t> row_ks(size_t(c.rows()), 0);
      o.topk_indices = remap_sparse_topk(sparse_topk(values, sparse, c.settings.topk), sparse, row_ks);
    }
    if (wanted(names, out::sparse_block_ids) || wanted(names, out::sparse_end)) o.sparse_blocks = sparse;
    if (wanted(names, out::sparse_logits)) o.sparse_logits = values;
    return;
  }

  const Logits logits = the_logits(c, profile);
  switch (op) {
    case GoldenOp::decode_logits:
    case GoldenOp::prefill_logits: break;
    case GoldenOp::decode_topk:
    case GoldenOp::prefill_topk:
      if (topk) o.topk_indices = plain_topk(c, logits);
      break;
    case GoldenOp::candidate_select:
      if (wanted(names, out::candidate_blocks))
        o.candidate_blocks = select_candidate_blocks(*c.decode, logits, c.settings.candidate_block_size,
                                                     c.settings.candidate_topk_blocks);
      if (topk) o.topk_indices = plain_topk(c, logits);
      break;
    case GoldenOp::candidate_mask: {
      Logits masked = logits;
      apply_candidate_mask(masked, candidate_row_bounds(*c.decode), *c.candidate_blocks, CandidateMask::full);
      if (topk) o.topk_indices = decode_topk(*c.decode, masked, c.settings.topk);
      if (wanted(names, out::masked_logits)) o.masked_logits = std::move(masked);
      break;
    }
    case GoldenOp::candidate_topk:
    case GoldenOp::consumer_step:
      if (topk) o.topk_indices = candidate_topk(*c.decode, logits, *c.candidate_blocks, c.settings.topk);
      break;
    default: break;
  }
  if (!c.logits_given() && wanted(names, out::logits)) o.logits = logits;
}

}  // namespace dsa::dataset
