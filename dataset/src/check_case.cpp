// One golden case judged: each output the kernel wrote, by the oracle's rules.
#include <algorithm>
#include <limits>

#include "dsa/dataset/check.hpp"
#include "dsa/error.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "dsa/oracle/sparse_check.hpp"

namespace dsa::dataset {
namespace {

RowBounds bounds_of(std::span<const int64_t> start, std::span<const int64_t> end) {
  return {std::vector<int64_t>(start.begin(), start.end()), std::vector<int64_t>(end.begin(), end.end())};
}

// The kernel's values inside each row's range, the reference's elsewhere: what
// a kernel's own top-k or selection read where it had to write.
Logits composite(const Logits& kernel, const Logits& reference, const RowBounds& bounds) {
  Logits v = reference;
  for (int64_t r = 0; r < v.rows; ++r)
    std::copy(kernel.row(r) + bounds.start[size_t(r)], kernel.row(r) + bounds.end[size_t(r)],
              v.row(r) + bounds.start[size_t(r)]);
  return v;
}

void add_selection(oracle::Report& report, const std::string& label, const oracle::SelectionVerdict& v,
                   bool kernel_values, const std::string& note = {}) {
  oracle::Report one;
  one.add(label, v);
  oracle::Report::Entry e = one.entries().front();
  const std::string source = kernel_values ? "judged on the kernel's own logits" : "judged on the reference's logits";
  e.summary += " [" + source + (note.empty() ? "" : "; " + note) + "]";
  e.details["values"] = kernel_values ? "kernel" : "reference";
  report.add(std::move(e));
}

// The reference's outputs the judgement needs, computed when the golden file lacks them.
GoldenOutputs reference_outputs(const GoldenCase& g) {
  const auto needed = op_outputs(g.settings.op, g.logits_given());
  const auto held = g.expected.names();
  bool complete = true;
  for (const auto& n : needed)
    if ((n != out::topk_indices || g.settings.topk > 0) && std::find(held.begin(), held.end(), n) == held.end()) complete = false;
  if (complete) return g.expected;
  GoldenCase full = g;
  std::vector<std::string> names;
  for (const auto& n : needed)
    if (n != out::topk_indices || g.settings.topk > 0) names.push_back(n);
  compute_expected(full, names);
  return full.expected;
}

}  // namespace

oracle::Report check_case(const GoldenCase& g, const GoldenOutputs& a, const std::string& label, const CheckOptions& opt) {
  oracle::Report report;
  const GoldenOutputs ref = reference_outputs(g);
  const bool bf16 = find_profile(g.settings.profile).logits == Precision::bf16;
  const uint32_t poison = bf16 ? oracle::kPoisonBf16AsF32Bits : oracle::kPoisonF32Bits;
  oracle::LogitsCheckOptions lo;
  if (opt.tolerance) lo.tolerance = oracle::LogitsTolerance{*opt.tolerance, 0.0, 0};
  lo.bf16_ulps = bf16;
  lo.max_listed = opt.max_listed;
  oracle::SelectionCheckOptions so{opt.tolerance.value_or(0.0), opt.max_listed};
  const int64_t R = g.rows();
  const auto begin = g.window_begin(), end = g.window_end();
  const RowBounds bounds = bounds_of(begin, end);
  const std::vector<int64_t> lens = oracle::lengths(bounds);
  const std::string at = label + "/";

  auto judge_logits = [&](const char* name, const Logits& actual, const Logits& expected, const RowBounds& w,
                          uint32_t poison_bits, const Logits* written_view = nullptr) {
    oracle::LogitsCheckOptions o = lo;
    o.poison_bits = poison_bits;
    report.add(at + name, oracle::check_written(written_view ? *written_view : actual, w, name, poison_bits, opt.max_listed));
    report.add(at + name, oracle::check_logits(actual, expected, w, o));
  };
  // The values a top-k or selection read: given logits, or the kernel's where it wrote them.
  const Logits* reference_logits = g.given_logits ? &*g.given_logits : (ref.logits ? &*ref.logits : nullptr);
  const bool kernel_logits = a.logits.has_value() && !g.logits_given();
  auto read_values = [&](const RowBounds& w) {
    return kernel_logits ? composite(*a.logits, *reference_logits, w) : *reference_logits;
  };

  if (a.logits && ref.logits) judge_logits(out::logits, *a.logits, *ref.logits, bounds, poison);
  if (a.masked_logits && ref.masked_logits) {
    if (g.logits_given()) {
      // Every entry is the mask's (SPEC 7), the rule the fuzzer's candidate_mask_agrees holds kernels to.
      const Logits expected = oracle::expected_candidate_mask(
          *g.given_logits, oracle::decode_bounds(g.candidate_ends()), *g.candidate_blocks, CandidateMask::full);
      judge_logits(out::masked_logits, *a.masked_logits, expected, oracle::full_bounds(R, expected.width), poison);
    } else {
      // Masked kernel logits: past L_r they hold the logits kernel's own garbage (SPEC 4).
      judge_logits(out::masked_logits, *a.masked_logits, *ref.masked_logits, bounds, poison);
    }
  }

  if (a.candidate_blocks && g.decode) {
    const CandidateBlocks& cand = *a.candidate_blocks;
    report.add(at + out::candidate_blocks,
               oracle::check_written(oracle::view(cand), out::candidate_blocks, oracle::kPoisonI32, opt.max_listed));
    const Logits values = read_values(bounds);
    const int64_t num_blocks = (g.logits_width() + cand.block_size - 1) / cand.block_size;
    const Logits scores = oracle::candidate_block_scores(values, cand.block_size,
                                                         oracle::decode_bounds(g.candidate_ends()), num_blocks);
    add_selection(report, at + out::candidate_blocks, oracle::check_candidate_blocks(oracle::view(cand), scores, so),
                  kernel_logits, "block scores over [0, E_r)");
  }

  if (a.compact_logits && ref.compact_logits) {
    const auto views = oracle::compact_views(*a.compact_logits, *ref.compact_logits, *g.candidate_blocks, lens);
    judge_logits(out::compact_logits, views.actual, views.expected, oracle::full_bounds(R, views.actual.width), poison,
                 &views.written);
  }
  if (a.sparse_blocks && ref.sparse_blocks) {
    report.add(at + out::sparse_block_ids,
               oracle::check_written(oracle::IndexMatrix{a.sparse_blocks->ids, R, a.sparse_blocks->num_sparse},
                                     out::sparse_block_ids, oracle::kPoisonI32, opt.max_listed));
    report.add(at + out::sparse_end, oracle::check_written(oracle::IndexMatrix{a.sparse_blocks->end, R, 1}, out::sparse_end,
                                                           oracle::kPoisonI32, opt.max_listed));
    report.add(at + out::sparse_block_ids, oracle::check_sparse_blocks(*a.sparse_blocks, *ref.sparse_blocks, opt.max_listed));
  }
  if (a.sparse_logits && ref.sparse_logits) {
    const std::vector<int64_t> ends(ref.sparse_blocks->end.begin(), ref.sparse_blocks->end.end());
    judge_logits(out::sparse_logits, *a.sparse_logits, *ref.sparse_logits, oracle::decode_bounds(ends),
                 oracle::kPoisonBf16AsF32Bits);
  }

  if (a.topk_indices) {
    const TopkIndices& t = *a.topk_indices;
    report.add(at + out::topk_indices,
               oracle::check_written(oracle::view(t), out::topk_indices, oracle::kPoisonI32, opt.max_listed));
    switch (g.settings.op) {
      case GoldenOp::decode_topk:
      case GoldenOp::prefill_topk:
      case GoldenOp::candidate_select:
        add_selection(report, at + out::topk_indices, oracle::check_topk(oracle::view(t), read_values(bounds), bounds, so),
                      kernel_logits);
        break;
      case GoldenOp::candidate_mask: {
        const bool own = a.masked_logits.has_value();
        const Logits values = own ? composite(*a.masked_logits, *ref.masked_logits, bounds) : *ref.masked_logits;
        add_selection(report, at + out::topk_indices, oracle::check_topk(oracle::view(t), values, bounds, so), own,
                      "on the masked logits");
        break;
      }
      case GoldenOp::candidate_topk:
      case GoldenOp::consumer_step:
        add_selection(report, at + out::topk_indices,
                      oracle::check_topk_among(oracle::view(t),
                                               oracle::candidate_columns(read_values(bounds), bounds, *g.candidate_blocks), so),
                      kernel_logits,
                      "indices counted among the row's candidate columns in [0, L_r)");
        break;
      case GoldenOp::compact_candidate_logits: {
        const bool own = a.compact_logits.has_value();
        add_selection(report, at + out::topk_indices,
                      oracle::check_topk_among(oracle::view(t),
                                               oracle::compact_columns(own ? *a.compact_logits : *ref.compact_logits,
                                                                       *g.candidate_blocks, lens),
                                               so),
                      own, "on the compact logits; indices counted among the row's candidate columns in [0, L_r)");
        break;
      }
      case GoldenOp::sparse_sm100: {
        const bool own = a.sparse_logits.has_value();
        add_selection(report, at + out::topk_indices,
                      oracle::check_topk_among(oracle::view(t),
                                               oracle::sparse_columns(own ? *a.sparse_logits : *ref.sparse_logits,
                                                                      *ref.sparse_blocks, std::vector<int64_t>(size_t(R), 0)),
                                               so),
                      own, "on the sparse logits; indices counted among the row's sparse columns [0, end)");
        break;
      }
      default: break;
    }
  }
  return report;
}

}  // namespace dsa::dataset
