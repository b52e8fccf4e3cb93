// A golden case run through an implementation's IndexerOps (run_case.hpp).
#include "dsa/dataset/run_case.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsa/error.hpp"
#include "dsa/oracle/poison.hpp"

namespace dsa::dataset {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

using oracle::poisoned_topk;

Logits poisoned_logits(int64_t rows, int64_t width, bool bf16) {
  return oracle::poisoned_logits(rows, width, bf16 ? oracle::kPoisonBf16AsF32Bits : oracle::kPoisonF32Bits);
}

// Raised inside a stage when the implementation cannot take it.
struct Skip {
  std::string why;
};

class Runner {
public:
  Runner(IndexerOps& impl, const Contract& contract, const GoldenCase& golden)
      : impl_(impl), contract_(contract), c_(golden), profile_(find_profile(golden.settings.profile)),
        bf16_(profile_.logits == Precision::bf16) {}

  CaseRun run() {
    try {
      run_stages();
    } catch (const InvalidInput& e) {
      run_.failure = impl_.name() + " refused a valid case (InvalidInput): " + e.what();
    } catch (const std::exception& e) {
      run_.failure = impl_.name() + " threw: " + e.what();
    }
    return std::move(run_);
  }

private:
  // Runs `call` as stage `op` when the contract takes it; false when skipped.
  template <class Call>
  bool stage(Op op, bool computes_logits, const Call& call) {
    try {
      if (!contract_.takes(op)) throw Skip{"not an op of " + impl_.name()};
      if (computes_logits && !contract_.claims_profile(c_.settings.profile))
        throw Skip{impl_.name() + " claims profile " + contract_.profile + ", the case is " + c_.settings.profile};
      if (std::string why = refusal(op, computes_logits); !why.empty()) throw Skip{"outside the contract: " + why};
      call();
      run_.ops_run.emplace_back(to_string(op));
      return true;
    } catch (const Skip& s) {
      run_.skipped.push_back(std::string(to_string(op)) + ": " + s.why);
    } catch (const Unsupported& e) {
      run_.skipped.push_back(std::string(to_string(op)) + ": unsupported: " + e.what());
    }
    return false;
  }

  std::string refusal(Op op, bool reads_problem) const {
    if (reads_problem) {
      const std::string why = c_.decode ? contract_.refusal(*c_.decode) : contract_.refusal(*c_.prefill);
      if (!why.empty()) return why;
    }
    if (c_.prefill && op == Op::topk && !contract_.row_starts)
      for (const int32_t ks : c_.prefill->ks)
        if (ks > 0) return "prefill rows with ks > 0";
    if ((op == Op::topk || op == Op::candidate_topk || op == Op::candidate_logits_top_k || op == Op::sparse_topk) &&
        c_.settings.topk > 0)
      return contract_.refusal_k(c_.settings.topk);
    return {};
  }

  // The logits a later stage reads: given, the implementation's (judged), or
  // the golden file's (not judged); nullopt when none.
  std::optional<Logits> logits() {
    if (c_.given_logits) return *c_.given_logits;
    const bool prefill = c_.prefill.has_value();
    Logits out = poisoned_logits(c_.rows(), c_.logits_width(), bf16_);
    if (stage(prefill ? Op::prefill_logits : Op::decode_logits, true, [&] {
          if (prefill)
            impl_.prefill_logits(*c_.prefill, profile_, out);
          else
            impl_.decode_logits(*c_.decode, profile_, out);
        })) {
      run_.outputs.logits = out;
      return inside_windows(std::move(out));
    }
    if (c_.expected.logits) {
      run_.from_golden.push_back(out::logits);
      return *c_.expected.logits;
    }
    return std::nullopt;
  }

  // The implementation's values inside each row's window, -inf outside.
  Logits inside_windows(Logits l) const {
    const auto begin = c_.window_begin(), end = c_.window_end();
    for (int64_t r = 0; r < l.rows; ++r) {
      float* row = l.row(r);
      std::fill(row, row + begin[size_t(r)], kNegInf);
      std::fill(row + end[size_t(r)], row + l.width, kNegInf);
    }
    return l;
  }

  RowBounds topk_bounds() const { return c_.prefill ? prefill_row_bounds(*c_.prefill) : topk_row_bounds(*c_.decode); }

  void topk_of(const Logits& values) {
    if (c_.settings.topk < 1) return;
    TopkIndices out = poisoned_topk(c_.rows(), c_.settings.topk);
    if (stage(Op::topk, false, [&] { impl_.topk(values, topk_bounds(), out); })) run_.outputs.topk_indices = out;
  }

  void run_stages() {
    switch (c_.settings.op) {
      case GoldenOp::decode_logits:
      case GoldenOp::prefill_logits: logits(); return;
      case GoldenOp::decode_topk:
      case GoldenOp::prefill_topk:
        if (const auto values = logits()) topk_of(*values);
        return;
      case GoldenOp::candidate_select: {
        const auto values = logits();
        if (!values) return;
        CandidateBlocks out =
            oracle::poisoned_blocks(c_.rows(), c_.settings.candidate_topk_blocks, c_.settings.candidate_block_size);
        if (stage(Op::candidate_select, false,
                  [&] { impl_.candidate_select(*values, candidate_row_bounds(*c_.decode), out); }))
          run_.outputs.candidate_blocks = out;
        topk_of(*values);
        return;
      }
      case GoldenOp::candidate_mask: {
        const auto values = logits();
        if (!values) return;
        Logits masked = *values;  // in place: the op's input is its output buffer
        std::optional<Logits> read;
        if (stage(Op::candidate_mask, false, [&] {
              impl_.candidate_mask(masked, candidate_row_bounds(*c_.decode), *c_.candidate_blocks, CandidateMask::full);
            })) {
          run_.outputs.masked_logits = masked;
          read = std::move(masked);
        } else if (c_.expected.masked_logits) {
          run_.from_golden.push_back(out::masked_logits);
          read = *c_.expected.masked_logits;
        }
        if (read) topk_of(*read);
        return;
      }
      case GoldenOp::candidate_topk:
      case GoldenOp::consumer_step: {
        const auto values = logits();
        if (!values || c_.settings.topk < 1) return;
        TopkIndices out = poisoned_topk(c_.rows(), c_.settings.topk);
        if (stage(Op::candidate_topk, false,
                  [&] { impl_.candidate_topk(*values, topk_row_bounds(*c_.decode), *c_.candidate_blocks, out); }))
          run_.outputs.topk_indices = out;
        return;
      }
      case GoldenOp::compact_candidate_logits: compact(); return;
      case GoldenOp::sparse_sm100: sparse(); return;
    }
  }

  void compact() {
    const CandidateBlocks& cand = *c_.candidate_blocks;
    Logits out = poisoned_logits(c_.rows(), int64_t(cand.slots) * cand.block_size, bf16_);
    if (c_.settings.topk > 0 && contract_.takes(Op::candidate_logits_top_k)) {
      TopkIndices topk = poisoned_topk(c_.rows(), c_.settings.topk);
      if (stage(Op::candidate_logits_top_k, true,
                [&] { impl_.candidate_logits_top_k(*c_.decode, profile_, cand, out, topk); })) {
        run_.outputs.compact_logits = out;
        run_.outputs.topk_indices = topk;
        return;
      }
    }
    if (stage(Op::compact_candidate_logits, true,
              [&] { impl_.compact_candidate_logits(*c_.decode, profile_, cand, out); }))
      run_.outputs.compact_logits = out;
  }

  void sparse() {
    const DecodeProblem& p = *c_.decode;
    const CandidateBlocks& cand = *c_.candidate_blocks;
    std::optional<SparseBlocks> blocks;
    {
      const int32_t sbk = pick_sparse_block_kv(cand.block_size);
      const int32_t num_sparse = cand.slots * (cand.block_size / sbk);
      SparseBlocks out = oracle::poisoned_sparse(c_.rows(), num_sparse, sbk);
      if (stage(Op::expand_candidate_blocks, false, [&] { impl_.expand_candidate_blocks(cand, topk_row_bounds(p), out); })) {
        run_.outputs.sparse_blocks = out;
        blocks = std::move(out);
      } else if (c_.expected.sparse_blocks) {
        run_.from_golden.push_back(out::sparse_block_ids);
        blocks = *c_.expected.sparse_blocks;
      }
    }
    if (!blocks) return;
    std::optional<Logits> values;
    Logits out = poisoned_logits(c_.rows(), blocks->width(), true);
    if (stage(Op::sparse_logits, true, [&] { impl_.sparse_logits(p, profile_, *blocks, out); })) {
      run_.outputs.sparse_logits = out;
      values = std::move(out);
    } else if (c_.expected.sparse_logits) {
      run_.from_golden.push_back(out::sparse_logits);
      values = *c_.expected.sparse_logits;
    }
    if (!values || c_.settings.topk < 1) return;
    TopkIndices topk = poisoned_topk(c_.rows(), c_.settings.topk);
    const std::vector<int64_t> row_ks(size_t(c_.rows()), 0);
    if (stage(Op::sparse_topk, false, [&] { impl_.sparse_topk(*values, *blocks, row_ks, topk); }))
      run_.outputs.topk_indices = topk;
  }

  IndexerOps& impl_;
  const Contract& contract_;
  const GoldenCase& c_;
  const Profile& profile_;
  const bool bf16_;
  CaseRun run_;
};

}  // namespace

CaseRun run_case(IndexerOps& impl, const Contract& contract, const GoldenCase& golden) {
  return Runner(impl, contract, golden).run();
}

oracle::Report::Entry run_failure_entry(const std::string& file, const CaseRun& run) {
  oracle::Report::Entry e;
  e.label = file + "/run";
  e.check = "run";
  e.passed = false;
  e.summary = "run: FAIL  " + run.failure;
  e.details = {{"error", run.failure}, {"ops_run", run.ops_run}};
  return e;
}

std::string skipped_reasons(const CaseRun& run) { return fmt::to_string(fmt::join(run.skipped, "; ")); }

}  // namespace dsa::dataset
