// Host side of kernels/decode_top_k.hip, select_candidates.hip and
// candidate_top_k.hip: the shared TreeTopK's plan for the widest row, vLLM's
// lengths as a common::RowSpan, and a persistent grid of every CU's resident
// blocks (no more blocks than work items).
#include <fmt/format.h>

#include <algorithm>

#include "dsa/common/row_span.hpp"
#include "dsa/common/select/sources.hpp"
#include "dsa/optimized/hip/launch.hpp"
#include "hip_runtime.hpp"

namespace dsa::gfx942 {
namespace {

using common::RowSpan;
namespace sel = common::select;

// The plan of a launch, or the reason it cannot take the call.
std::string make_plan(int64_t entries, int32_t k, int32_t capacity, sel::TreePlan& plan) {
  switch (sel::make_tree_plan(entries, k, capacity, plan)) {
    case sel::PlanError::none: return {};
    case sel::PlanError::k_too_large:
      return fmt::format("k = {}: rows longer than one block ({} entries) are merged only for k <= {}", k, capacity,
                         capacity / 2);
    case sel::PlanError::too_many_levels:
      return fmt::format("rows of {} entries need more than {} merge levels for k = {}", entries, sel::kMaxTreeLevels,
                         k);
    case sel::PlanError::bad_shape: break;
  }
  return fmt::format("no selection plan for rows of {} entries and k = {}", entries, k);
}

RowSpan row_span(const LogitsRows& in, RowSpan::Kind one_d) {
  RowSpan s;
  s.kind = in.seq_lens_2d ? RowSpan::Kind::per_row_2d : one_d;
  s.rows = in.rows;
  s.width = in.width;
  s.seq_lens = in.seq_lens;
  s.next_n = in.next_n;
  return s;
}

template <class Source>
LaunchResult launch_tree(const char* kernel, const Source& src, int64_t entries, int32_t k, int32_t* out,
                         int64_t out_stride, const SelectWorkspace& ws, hipStream_t stream) {
  TreeParams<Source> p{src, {}, {}};
  if (std::string why = make_plan(entries, k, kSelectCapacity, p.plan); !why.empty()) return {false, why};
  if (std::string why = check_workspace(ws, {p.plan.slot_pairs(src.rows()), p.plan.counters(src.rows()), {}});
      !why.empty())
    return {false, why};
  p.out = {out, ws.slots, ws.counters, nullptr, out_stride};
  const std::string symbol = std::string("dsa_gfx942_") + kernel;
  const int64_t items = src.rows() * p.plan.max_leaves;
  int resident = 0;
  if (std::string why = detail::resident_blocks(kernel, symbol.c_str(), kSelectThreads, &resident); !why.empty())
    return {false, why};
  const auto grid = uint32_t(std::clamp<int64_t>(items, 1, resident));
  const std::string why = detail::launch(kernel, symbol.c_str(), &p, sizeof(p), grid, 1, kSelectThreads, stream);
  return {why.empty(), why};
}

}  // namespace

WorkspaceSize select_workspace_size(int64_t rows, int64_t entries, int32_t k, bool fused) {
  WorkspaceSize size;
  sel::TreePlan plan;
  size.why = make_plan(entries, k, fused ? kFusedSelectCapacity : kSelectCapacity, plan);
  if (size.why.empty()) {
    size.slot_pairs = plan.slot_pairs(rows);
    size.counters = plan.counters(rows);
  }
  return size;
}

LaunchResult decode_top_k(const LogitsRows& in, int32_t* topk_indices, int64_t topk_stride, int32_t topk_tokens,
                          const SelectWorkspace& workspace, hipStream_t stream) {
  if (std::string why = check_top_k(in, topk_indices, topk_stride, topk_tokens); !why.empty()) return {false, why};
  const sel::DenseRows src{in.logits, in.logits_stride, row_span(in, RowSpan::Kind::visible_1d)};
  return launch_tree("decode_top_k", src, in.width, topk_tokens, topk_indices, topk_stride, workspace, stream);
}

LaunchResult select_candidates(const LogitsRows& in, int32_t candidate_block_size, int32_t* candidate_blocks,
                               int32_t slots, const SelectWorkspace& workspace, hipStream_t stream) {
  if (std::string why = check_candidates(in, candidate_blocks, slots, candidate_block_size); !why.empty())
    return {false, why};
  const sel::BlockScores src{in.logits, in.logits_stride, row_span(in, RowSpan::Kind::request_1d),
                             candidate_block_size};
  return launch_tree("select_candidates", src, (in.width + candidate_block_size - 1) / candidate_block_size, slots,
                     candidate_blocks, slots, workspace, stream);
}

LaunchResult candidate_top_k(const LogitsRows& in, const int32_t* candidate_blocks, int32_t slots,
                             int32_t candidate_block_size, int32_t* topk_indices, int64_t topk_stride,
                             int32_t topk_tokens, const SelectWorkspace& workspace, hipStream_t stream) {
  std::string why = check_candidates(in, candidate_blocks, slots, candidate_block_size);
  if (const std::string topk = check_top_k(in, topk_indices, topk_stride, topk_tokens); why.empty()) why = topk;
  if (!why.empty()) return {false, why};
  const sel::CandidateColumns src{in.logits,        in.logits_stride, row_span(in, RowSpan::Kind::visible_1d),
                                  candidate_blocks, slots,            candidate_block_size,
                                  false};
  return launch_tree("candidate_top_k", src, int64_t(slots) * candidate_block_size, topk_tokens, topk_indices,
                     topk_stride, workspace, stream);
}

}  // namespace dsa::gfx942
