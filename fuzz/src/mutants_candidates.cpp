// Candidate-block mutants (SPEC 7): the source layer's selection, the
// consumer's candidate top-k, and the compact-candidate logits launch.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "dsa/error.hpp"
#include "mutant_ops.hpp"
#include "special_values.hpp"

namespace dsa::fuzz::detail {

namespace {

// The selection without the pin of the newest block: its score is its plain
// max, so a row whose newest entries score low loses the block holding them.
class NewestBlockForgotten final : public ForwardingOps {
public:
  using ForwardingOps::ForwardingOps;
  void candidate_select(const Logits& logits, const RowBounds& bounds, CandidateBlocks& out) override {
    // The reference's checks and shape (its own selection is overwritten row by row).
    inner().candidate_select(logits, bounds, out);
    const int64_t S = out.block_size;
    for (int64_t r = 0; r < logits.rows; ++r) {
      const int64_t start = bounds.start[size_t(r)], end = bounds.end[size_t(r)];
      const int64_t blocks = (end - start + S - 1) / S;
      std::vector<float> scores = candidate_block_scores(logits.row(r), start, end, int32_t(S), blocks);
      if (blocks > 0) {
        const int64_t newest = blocks - 1;
        float m = -kInf;
        for (int64_t n = start + newest * S; n < end; ++n) {
          const float v = logits.row(r)[n];
          if (std::isnan(v) || v > m) m = v;
          if (std::isnan(v)) break;
        }
        scores[size_t(newest)] = m;
      }
      // Larger key = higher score, then lower block index (the reference's order).
      std::vector<uint64_t> keys;
      for (size_t c = 0; c < scores.size(); ++c)
        if (!(scores[c] == -kInf)) keys.push_back((uint64_t(topk_order_key(scores[c])) << 32) | (0xffffffffu - uint32_t(c)));
      const size_t chosen = std::min(keys.size(), size_t(out.slots));
      std::partial_sort(keys.begin(), keys.begin() + ptrdiff_t(chosen), keys.end(), std::greater<>());
      int32_t* row = out.row(r);
      std::fill(row, row + out.slots, -1);
      for (size_t i = 0; i < chosen; ++i) row[i] = int32_t(0xffffffffu - uint32_t(keys[i] & 0xffffffffu));
    }
  }
};

// The candidate mask keeps whole candidate blocks: the columns of the block
// holding the row's last entry leak past L_r (up to the block's end).
class MaskPastRowEnd final : public ForwardingOps {
public:
  using ForwardingOps::ForwardingOps;
  void candidate_topk(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    RowBounds leaky = bounds;
    const int64_t S = candidates.block_size;
    for (int64_t r = 0; r < bounds.rows() && S > 0; ++r) {
      const int64_t start = bounds.start[size_t(r)], len = bounds.end[size_t(r)] - start;
      if (start < 0 || len < 0 || start > logits.width) continue;  // the reference reports it
      leaky.end[size_t(r)] = start + std::min(logits.width - start, (len + S - 1) / S * S);
    }
    inner().candidate_topk(logits, leaky, candidates, out);
  }
};

// The compact-candidate launch that does not copy the dense kernel's
// arithmetic: it sums the heads in reverse order (one fma chain from +0,
// then the K scale) whatever the profile's order, so its logits differ from
// the dense ones by roundings.
std::vector<ReduceStep> reversed_head_chain(int heads) {
  if (heads < 1) throw InvalidInput("heads", "must be at least 1, got " + std::to_string(heads));
  std::vector<int> order;
  for (int h = heads - 1; h >= 0; --h) order.push_back(h);
  std::vector<ReduceStep> prog;
  int32_t next = 0;
  reduce::scale(prog, next, reduce::fma_chain_from_zero(prog, next, order));
  return prog;
}

class CompactOwnHeadOrder final : public ForwardingOps {
public:
  using ForwardingOps::ForwardingOps;
  void compact_candidate_logits(const DecodeProblem& p, const Profile& profile, const CandidateBlocks& candidates,
                                Logits& out) override {
    Profile own = profile;
    own.build_reduction = reversed_head_chain;
    inner().compact_candidate_logits(p, own, candidates, out);
  }
};

}  // namespace

std::vector<Mutant> candidate_mutants() {
  std::vector<Mutant> m;
  m.push_back(mutant<NewestBlockForgotten>(
      "candidate_newest_block_forgotten",
      "Classic (SPEC 7): the selection forgets to pin the block holding the newest entry (score +inf), so a row "
      "with more live blocks than slots can drop the block it is decoding; rows with few blocks are unaffected.",
      property::kCandidateSelectAgrees));
  m.push_back(mutant<MaskPastRowEnd>(
      "candidate_mask_past_row_end",
      "Classic (SPEC 7): the candidate mask keeps whole candidate blocks, so the block holding the row's last "
      "entry leaks the columns past L_r (garbage the logits kernel left) into the candidate top-k; rows whose "
      "length is a multiple of the block size are unaffected.",
      property::kCandidateTopkAgrees));
  m.push_back(mutant<CompactOwnHeadOrder>(
      "compact_logits_own_head_order",
      "SPEC 7/8: the compact-candidate logits launch sums the heads in its own order instead of copying the dense "
      "kernel's arithmetic, so its logits are not bit-identical to the dense call's (the property the seeds' "
      "gfx942 launch promises).",
      property::kCompactEqualsDense));
  return m;
}

}  // namespace dsa::fuzz::detail
