#include "selection_views.hpp"

#include <algorithm>
#include <limits>

#include "dsa/oracle/baseline_check.hpp"
#include "dsa/oracle/rows.hpp"
#include "dsa/oracle/selection_check.hpp"

namespace dsa::dataset::detail {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

Logits inside(Logits l, const RowBounds& bounds) {
  for (int64_t r = 0; r < l.rows; ++r) {
    float* row = l.row(r);
    std::fill(row, row + bounds.start[size_t(r)], kNegInf);
    std::fill(row + bounds.end[size_t(r)], row + l.width, kNegInf);
  }
  return l;
}

template <class T>
const std::optional<T>& either(const std::optional<T>& own, const std::optional<T>& fallback) {
  return own ? own : fallback;
}

}  // namespace

RowBounds case_bounds(const GoldenCase& g) {
  const auto begin = g.window_begin(), end = g.window_end();
  return {std::vector<int64_t>(begin.begin(), begin.end()), std::vector<int64_t>(end.begin(), end.end())};
}

GoldenOutputs values_read(const GoldenCase& g, const GoldenOutputs& own, const GoldenOutputs& fallback) {
  const RowBounds bounds = case_bounds(g);
  GoldenOutputs v;
  if (g.given_logits) v.logits = *g.given_logits;
  else if (const auto& l = either(own.logits, fallback.logits)) v.logits = inside(*l, bounds);
  if (const auto& m = either(own.masked_logits, fallback.masked_logits)) v.masked_logits = inside(*m, bounds);
  v.compact_logits = either(own.compact_logits, fallback.compact_logits);
  v.sparse_logits = either(own.sparse_logits, fallback.sparse_logits);
  v.sparse_blocks = either(own.sparse_blocks, fallback.sparse_blocks);
  return v;
}

std::optional<oracle::RowColumns> topk_columns(const GoldenCase& g, const GoldenOutputs& v) {
  const RowBounds bounds = case_bounds(g);
  switch (g.settings.op) {
    case GoldenOp::decode_topk:
    case GoldenOp::prefill_topk:
    case GoldenOp::candidate_select:
      if (!v.logits) return std::nullopt;
      return oracle::window_columns(*v.logits, bounds);
    case GoldenOp::candidate_mask:
      if (!v.masked_logits) return std::nullopt;
      return oracle::window_columns(*v.masked_logits, bounds);
    case GoldenOp::candidate_topk:
    case GoldenOp::consumer_step:
      if (!v.logits) return std::nullopt;
      return oracle::candidate_columns(*v.logits, bounds, *g.candidate_blocks);
    case GoldenOp::compact_candidate_logits:
      if (!v.compact_logits) return std::nullopt;
      return oracle::compact_columns(*v.compact_logits, *g.candidate_blocks, oracle::lengths(bounds));
    case GoldenOp::sparse_sm100:
      if (!v.sparse_logits || !v.sparse_blocks) return std::nullopt;
      return oracle::sparse_columns(*v.sparse_logits, *v.sparse_blocks, std::vector<int64_t>(size_t(g.rows()), 0));
    default: return std::nullopt;
  }
}

std::optional<Logits> block_scores(const GoldenCase& g, const GoldenOutputs& v, int32_t block_size) {
  if (!v.logits || !g.decode || block_size < 1) return std::nullopt;
  const int64_t num_blocks = (g.logits_width() + block_size - 1) / block_size;
  return oracle::candidate_block_scores(*v.logits, block_size, oracle::decode_bounds(g.candidate_ends()), num_blocks);
}

}  // namespace dsa::dataset::detail
