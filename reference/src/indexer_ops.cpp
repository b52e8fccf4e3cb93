#include "dsa/indexer_ops.hpp"

#include <algorithm>

#include "dsa/error.hpp"

namespace dsa {

void IndexerOps::decode_logits(const DecodeProblem&, const Profile&, Logits&) {
  throw Unsupported(name() + ": decode logits are not implemented");
}
void IndexerOps::prefill_logits(const PrefillProblem&, const Profile&, Logits&) {
  throw Unsupported(name() + ": prefill logits are not implemented");
}
void IndexerOps::topk(const Logits&, const RowBounds&, TopkIndices&) {
  throw Unsupported(name() + ": top-k is not implemented");
}
void IndexerOps::candidate_select(const Logits&, const RowBounds&, CandidateBlocks&) {
  throw Unsupported(name() + ": candidate selection is not implemented");
}
void IndexerOps::candidate_topk(const Logits&, const RowBounds&, const CandidateBlocks&, TopkIndices&) {
  throw Unsupported(name() + ": candidate top-k is not implemented");
}
void IndexerOps::compact_candidate_logits(const DecodeProblem&, const Profile&, const CandidateBlocks&, Logits&) {
  throw Unsupported(name() + ": compact candidate logits are not implemented");
}

namespace {

void require_shape(const char* what, int64_t rows, int64_t width, int64_t want_rows, int64_t want_width) {
  if (rows != want_rows || width != want_width)
    throw InvalidInput(what, "output buffer is [" + std::to_string(rows) + ", " + std::to_string(width) +
                                 "], expected [" + std::to_string(want_rows) + ", " + std::to_string(want_width) + "]");
}

class ReferenceOps final : public IndexerOps {
public:
  std::string name() const override { return "reference"; }

  void decode_logits(const DecodeProblem& problem, const Profile& profile, Logits& out) override {
    require_shape("logits", out.rows, out.width, problem.rows(), problem.logits_width);
    out.values = dsa::decode_logits(problem, profile).logits.values;
  }
  void prefill_logits(const PrefillProblem& problem, const Profile& profile, Logits& out) override {
    require_shape("logits", out.rows, out.width, problem.rows, problem.num_k);
    out.values = dsa::prefill_logits(problem, profile).logits.values;
  }
  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    require_shape("topk_indices", out.rows, out.k, logits.rows, out.k);
    check_row_bounds(logits, bounds);
    for (int64_t r = 0; r < logits.rows; ++r) {
      const int64_t start = bounds.start[size_t(r)], end = bounds.end[size_t(r)];
      topk_row(logits.row(r) + start, end - start, out.k, out.row(r));
    }
  }
  void candidate_select(const Logits& logits, const RowBounds& bounds, CandidateBlocks& out) override {
    const CandidateBlocks chosen = select_candidate_blocks(logits, bounds, out.block_size, out.slots);
    require_shape("candidate_blocks", out.rows, out.slots, chosen.rows, chosen.slots);
    out.blocks = chosen.blocks;
  }
  void candidate_topk(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    const TopkIndices chosen = dsa::candidate_topk(logits, bounds, candidates, out.k);
    require_shape("topk_indices", out.rows, out.k, chosen.rows, chosen.k);
    out.indices = chosen.indices;
  }
  void compact_candidate_logits(const DecodeProblem& problem, const Profile& profile,
                                const CandidateBlocks& candidates, Logits& out) override {
    const Logits compact = dsa::compact_candidate_logits(problem, profile, candidates);
    require_shape("compact_logits", out.rows, out.width, compact.rows, compact.width);
    out.values = compact.values;
  }
};

}  // namespace

std::unique_ptr<IndexerOps> make_reference_ops() { return std::make_unique<ReferenceOps>(); }

}  // namespace dsa
