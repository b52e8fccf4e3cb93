// Helpers of the tests that drive IndexerOps op by op.
#pragma once

#include <string>

#include "dsa/error.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::test {

// Takes no op: every call reaches the default body.
class TakesNothing final : public IndexerOps {
public:
  std::string name() const override { return "takes_nothing"; }
};

// One call of `op` with empty arguments: enough for an implementation that
// does not take the op (Unsupported); one that does refuses them (InvalidInput)
// or returns.
inline void call(IndexerOps& ops, Op op) {
  Logits logits;
  TopkIndices topk;
  CandidateBlocks blocks;
  SparseBlocks sparse;
  ByteRows bytes;
  const RowBounds bounds;
  const DecodeProblem decode;
  const PrefillProblem prefill;
  const Profile& profile = find_profile("exact");
  switch (op) {
    case Op::decode_logits: ops.decode_logits(decode, profile, logits); break;
    case Op::prefill_logits: ops.prefill_logits(prefill, profile, logits); break;
    case Op::topk: ops.topk(logits, bounds, topk); break;
    case Op::candidate_select: ops.candidate_select(logits, bounds, blocks); break;
    case Op::candidate_mask: ops.candidate_mask(logits, bounds, blocks, CandidateMask::full); break;
    case Op::candidate_topk: ops.candidate_topk(logits, bounds, blocks, topk); break;
    case Op::compact_candidate_logits: ops.compact_candidate_logits(decode, profile, blocks, logits); break;
    case Op::prefill_compact_candidate_logits:
      ops.prefill_compact_candidate_logits(prefill, profile, blocks, logits);
      break;
    case Op::candidate_logits_top_k: ops.candidate_logits_top_k(decode, profile, blocks, logits, topk); break;
    case Op::pack_rows: ops.pack_rows(bytes, {}, 0, bytes); break;
    case Op::unpack_topk: ops.unpack_topk(topk, {}, topk); break;
    case Op::skip_decode_fill: ops.skip_decode_fill(false, 0, 0, false); break;
    case Op::expand_candidate_blocks: ops.expand_candidate_blocks(blocks, bounds, sparse); break;
    case Op::sparse_logits: ops.sparse_logits(decode, profile, sparse, logits); break;
    case Op::sparse_topk: ops.sparse_topk(logits, sparse, {}, topk); break;
  }
}

inline std::string unsupported_message(IndexerOps& ops, Op op) {
  try {
    call(ops, op);
  } catch (const Unsupported& e) {
    return e.what();
  }
  return "(returned)";
}

}  // namespace dsa::test
