// An implementation of the indexer ops, as the fuzzer, the golden checker and
// the tests drive it: the reference, the CPU twins of the GPU algorithms, the
// GPU kernels, or an external command. Each is "one more implementation under
// test" behind this interface.
//
// Outputs are written into buffers the caller sized and poisoned beforehand
// (the oracle's "every entry written" check reads what survives). A call the
// implementation cannot take throws dsa::Unsupported (the designs' launches
// "return False"); harnesses count those apart and never as passes.
#pragma once

#include <memory>
#include <string>

#include "dsa/candidates.hpp"
#include "dsa/logits.hpp"
#include "dsa/problem.hpp"
#include "dsa/profile.hpp"
#include "dsa/topk.hpp"

namespace dsa {

class IndexerOps {
public:
  virtual ~IndexerOps() = default;
  virtual std::string name() const = 0;

  // out: [rows][logits_width]; entries at or beyond a row's visible length may be left as they are.
  virtual void decode_logits(const DecodeProblem& problem, const Profile& profile, Logits& out);
  // out: [rows][num_k]; entries outside [ks, ke) may be left as they are.
  virtual void prefill_logits(const PrefillProblem& problem, const Profile& profile, Logits& out);
  // Row r selects among columns [bounds.start[r], bounds.end[r]), indices relative to the start; out.k slots.
  virtual void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out);
  // The source layer's selection; out.slots and out.block_size given.
  virtual void candidate_select(const Logits& logits, const RowBounds& candidate_bounds, CandidateBlocks& out);
  // The consumer top-k among the candidate blocks' columns.
  virtual void candidate_topk(const Logits& logits, const RowBounds& topk_bounds, const CandidateBlocks& candidates,
                              TopkIndices& out);
  // Compact candidate logits: out [rows][slots * block_size]; entries of -1
  // slots and at positions >= L_r may be left as they are.
  virtual void compact_candidate_logits(const DecodeProblem& problem, const Profile& profile,
                                        const CandidateBlocks& candidates, Logits& out);
};

// The reference itself as an implementation under test.
std::unique_ptr<IndexerOps> make_reference_ops();

}  // namespace dsa
