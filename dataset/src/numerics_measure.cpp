// The numerics report's measurements (numerics.hpp): each side's logits and
// selections against the exact arithmetic of the case's inputs.
#include <cmath>

#include "dsa/candidates.hpp"
#include "dsa/dataset/numerics.hpp"
#include "dsa/error.hpp"
#include "dsa/logit_magnitudes.hpp"
#include "dsa/logits.hpp"
#include "dsa/oracle/baseline_check.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "selection_views.hpp"

namespace dsa::dataset {
namespace {

struct Exact {
  Logits logits;              // the `exact` profile's fp32 values
  std::vector<double> value;  // the double-precision sum
  LogitMagnitudes magnitude;
};

Exact exact_arithmetic(const GoldenCase& g) {
  const Profile& exact = find_profile("exact");
  LogitsResult r = g.decode ? decode_logits(*g.decode, exact, {.with_double = true})
                            : prefill_logits(*g.prefill, exact, {.with_double = true});
  return {std::move(r.logits), std::move(r.exact_double),
          g.decode ? decode_logit_magnitudes(*g.decode) : prefill_logit_magnitudes(*g.prefill)};
}

// One side's logits-like outputs measured; false when it holds none of them.
void measure_outputs(const GoldenCase& g, const GoldenOutputs& side, const Exact& e, oracle::UlpUnit unit,
                     std::map<std::string, oracle::ErrorStats>& out) {
  const RowBounds bounds = detail::case_bounds(g);
  const std::vector<int64_t> lens = oracle::lengths(bounds);
  const int64_t W = e.logits.width;
  auto add = [&](oracle::ErrorStats& s, int64_t r, int64_t col, float actual, int64_t dense) {
    s.add(r, col, actual, e.logits.at(r, dense), e.value[size_t(r * W + dense)], e.magnitude.at(r, dense));
  };
  if (side.logits) {
    oracle::ErrorStats& s = out.try_emplace(out::logits, unit).first->second;
    for (int64_t r = 0; r < g.rows(); ++r)
      for (int64_t c = bounds.start[size_t(r)]; c < bounds.end[size_t(r)]; ++c) add(s, r, c, side.logits->at(r, c), c);
  }
  if (side.compact_logits && g.candidate_blocks) {
    oracle::ErrorStats& s = out.try_emplace(out::compact_logits, unit).first->second;
    for (int64_t r = 0; r < g.rows(); ++r)
      for (int64_t col = 0; col < side.compact_logits->width; ++col)
        if (oracle::compact_defined(*g.candidate_blocks, r, col, lens[size_t(r)]))
          add(s, r, col, side.compact_logits->at(r, col),
              bounds.start[size_t(r)] + oracle::compact_position(*g.candidate_blocks, r, col));
  }
  const auto& blocks = side.sparse_blocks ? side.sparse_blocks : g.expected.sparse_blocks;
  if (side.sparse_logits && blocks) {
    oracle::ErrorStats& s = out.try_emplace(out::sparse_logits, oracle::UlpUnit::bf16).first->second;
    const oracle::RowColumns columns =
        oracle::sparse_columns(*side.sparse_logits, *blocks, std::vector<int64_t>(size_t(g.rows()), 0));
    for (int64_t r = 0; r < g.rows(); ++r)
      for (const auto& c : columns[size_t(r)])
        if (c.position >= 0 && c.position < lens[size_t(r)]) add(s, r, c.position, c.value, c.position);
  }
}

// The exact values in every layout the case's selections read.
GoldenOutputs exact_view(const GoldenCase& g, const Exact& e, const GoldenOutputs& side) {
  GoldenOutputs v;
  v.logits = e.logits;
  const RowBounds bounds = detail::case_bounds(g);
  if (g.candidate_blocks && g.decode) {
    if (g.settings.op == GoldenOp::candidate_mask) {
      Logits masked = e.logits;
      apply_candidate_mask(masked, oracle::decode_bounds(g.candidate_ends()), *g.candidate_blocks, CandidateMask::full);
      v.masked_logits = std::move(masked);
    }
    v.compact_logits = oracle::compact_from_dense(e.logits, bounds, *g.candidate_blocks);
  }
  const auto& blocks = side.sparse_blocks ? side.sparse_blocks : g.expected.sparse_blocks;
  if (blocks && g.settings.op == GoldenOp::sparse_sm100) {
    // Each sparse column holds the exact logit of the entry it scores.
    Logits sparse{g.rows(), blocks->width(), std::vector<float>(size_t(g.rows() * blocks->width()),
                                                                -std::numeric_limits<float>::infinity())};
    for (int64_t r = 0; r < g.rows(); ++r)
      for (int64_t col = 0; col < blocks->width(); ++col) {
        const int64_t entry = int64_t(blocks->row(r)[col / blocks->sparse_block_kv]) * blocks->sparse_block_kv +
                              col % blocks->sparse_block_kv;
        if (entry >= 0 && entry < e.logits.width) sparse.row(r)[col] = e.logits.at(r, entry);
      }
    v.sparse_logits = std::move(sparse);
    v.sparse_blocks = blocks;
  }
  return detail::values_read(g, v, {});
}

std::optional<oracle::EpsNeeded> topk_eps(const GoldenCase& g, const GoldenOutputs& side, const GoldenOutputs& exact) {
  if (!side.topk_indices) return std::nullopt;
  const auto columns = detail::topk_columns(g, exact);
  if (!columns) return std::nullopt;
  return oracle::selection_eps_needed(oracle::view(*side.topk_indices), *columns);
}

std::optional<oracle::EpsNeeded> blocks_eps(const GoldenCase& g, const GoldenOutputs& side, const GoldenOutputs& exact) {
  if (!side.candidate_blocks) return std::nullopt;
  const auto scores = detail::block_scores(g, exact, side.candidate_blocks->block_size);
  if (!scores) return std::nullopt;
  return oracle::selection_eps_needed(oracle::view(*side.candidate_blocks), oracle::live_block_columns(*scores));
}

}  // namespace

void NumericsReport::measure(const GoldenCase& g, const GoldenOutputs* baseline, const GoldenOutputs& current,
                             const std::string& file) {
  CaseNumerics cn;
  cn.file = file;
  cn.op = std::string(to_string(g.settings.op));
  has_baseline_ |= baseline != nullptr;
  if (g.logits_given()) {
    cn.note = "its logits are inputs: no arithmetic to measure";
    cases_.push_back(std::move(cn));
    return;
  }
  std::optional<Exact> e;
  try {
    e = exact_arithmetic(g);
  } catch (const InvalidInput& x) {
    cn.note = std::string("the exact arithmetic does not take it: ") + x.what();
    cases_.push_back(std::move(cn));
    return;
  }
  const oracle::UlpUnit unit =
      find_profile(g.settings.profile).logits == Precision::bf16 ? oracle::UlpUnit::bf16 : oracle::UlpUnit::fp32;
  std::map<std::string, oracle::ErrorStats> base_stats, cur_stats;
  if (baseline) measure_outputs(g, *baseline, *e, unit, base_stats);
  measure_outputs(g, current, *e, unit, cur_stats);
  for (const char* name : {out::logits, out::compact_logits, out::sparse_logits}) {
    const auto b = base_stats.find(name), c = cur_stats.find(name);
    if (b == base_stats.end() && c == cur_stats.end()) continue;
    OutputNumerics on;
    on.output = name;
    on.unit = (c != cur_stats.end() ? c->second : b->second).unit();
    const std::string where = file + "/" + name;
    if (b != base_stats.end()) {
      on.baseline = b->second.summary();
      baseline_.try_emplace(on.unit, on.unit).first->second.merge(b->second, where);
    }
    if (c != cur_stats.end()) {
      on.current = c->second.summary();
      current_.try_emplace(on.unit, on.unit).first->second.merge(c->second, where);
    }
    cn.outputs.push_back(std::move(on));
  }
  const GoldenOutputs exact_current = exact_view(g, *e, current);
  const GoldenOutputs exact_base = baseline ? exact_view(g, *e, *baseline) : exact_current;
  SelectionNumerics topk{out::topk_indices, baseline ? topk_eps(g, *baseline, exact_base) : std::nullopt,
                         topk_eps(g, current, exact_current)};
  if (topk.baseline || topk.current) cn.selections.push_back(std::move(topk));
  SelectionNumerics blocks{out::candidate_blocks, baseline ? blocks_eps(g, *baseline, exact_base) : std::nullopt,
                           blocks_eps(g, current, exact_current)};
  if (blocks.baseline || blocks.current) cn.selections.push_back(std::move(blocks));
  if (cn.outputs.empty() && cn.selections.empty()) cn.note = "it holds no logits or selection to measure";
  cases_.push_back(std::move(cn));
}

std::optional<oracle::ErrorSummary> NumericsReport::overall_baseline(oracle::UlpUnit unit) const {
  const auto it = baseline_.find(unit);
  if (it == baseline_.end() || it->second.empty()) return std::nullopt;
  return it->second.summary();
}

std::optional<oracle::ErrorSummary> NumericsReport::overall_current(oracle::UlpUnit unit) const {
  const auto it = current_.find(unit);
  if (it == current_.end() || it->second.empty()) return std::nullopt;
  return it->second.summary();
}

std::optional<double> NumericsReport::eps_needed(bool baseline) const {
  std::optional<double> eps;
  for (const auto& c : cases_)
    for (const auto& s : c.selections)
      if (const auto& e = baseline ? s.baseline : s.current) eps = std::max(eps.value_or(0.0), e->eps);
  return eps;
}

}  // namespace dsa::dataset
