// Host launcher of the fused candidate launch (sm90_logits.hpp: candidate_logits_top_k). One launch of
// the compact logits kernel with kRankRows, whose blocks rank the compact rows they complete
// (epilogue/rank_compact_rows.cuh), where the step fits it: rows of at most 16384 candidate entries
// (2048 blocks of 8, DeepSeek V4.1's) and no block's range of units reaching more rows than it can
// list. Otherwise the compact kernel and the selection's kernel run one after the other on the stream.
#include <string>

#include "dsa/error.hpp"
#include "dsa/optimized/cuda/select.hpp"
#include "dsa/optimized/cuda/sm90_logits.hpp"
#include "sm90_logits_launch.cuh"

namespace dsa::cuda {
namespace {

using kernels::LogitsMode;
using kernels::LogitsParams;

// The rows a block's contiguous range of units can reach: a range of at most ceil(rows * U / grid)
// units over rows of U units each touches at most ceil(range / U) + 1 of them.
bool one_launch_takes(int64_t rows, int64_t width, int32_t grid) {
  if (width > epilogue::kRankCapacity) return false;
  const int64_t units_per_row = (width + kernels::kUnit - 1) / kernels::kUnit;
  const int64_t range = (rows * units_per_row + grid - 1) / grid;
  return (range + units_per_row - 1) / units_per_row + 1 <= kernels::kMaxRankedRows;
}

}  // namespace

bool sm90_candidate_logits_top_k_is_one_launch(const DeviceDecodeStep& step, int32_t slots,
                                               int32_t candidate_block_size) {
  const DeviceInfo& d = device_info();
  return d.present && step.num_pages > 0 && !sm90_candidate_two_kernels_forced() &&
         one_launch_takes(int64_t(step.batch) * step.next_n, int64_t(slots) * candidate_block_size,
                          launch::grid_blocks(d));
}

void sm90_candidate_logits_top_k(const DeviceDecodeStep& step, Sm90Variant variant, const int32_t* candidates,
                                 int32_t slots, int32_t candidate_block_size, int32_t* schedule, float* compact,
                                 const common::RowSpan& topk_span, int32_t k, int32_t* out, void* stream) {
  const int64_t rows = int64_t(step.batch) * step.next_n;
  if (topk_span.rows != rows)
    throw InvalidInput("topk_span", std::to_string(topk_span.rows) + " rows for a step of " + std::to_string(rows));
  const int64_t width = int64_t(slots) * candidate_block_size;
  // The plan first: a shape the top-k cannot take is refused before any kernel runs, on either path.
  const common::select::GroupPlan plan = select_group_plan(rows, width, k, "candidate_logits_top_k", SelectSource::columns);
  const DeviceInfo& d = launch::require_sm90();
  launch::check_step(step);
  launch::check_candidates(slots, candidate_block_size);
  if (sm90_candidate_logits_top_k_is_one_launch(step, slots, candidate_block_size)) {
    LogitsParams p = launch::compact_params(step, candidates, slots, candidate_block_size, schedule, compact);
    p.top_k = k;
    p.top_k_out = out;
    p.row_done = schedule + rows + 1;  // after the prefix (compact_schedule_ints)
    p.top_k_span = topk_span;
    launch::ring_stages(d, step.heads, step.head_dim, 1, kernels::kMaxMathWarpgroups);  // refuses a Q too large
    launch::dispatch<LogitsMode::compact, /*kRankRows=*/true>(p, step.heads, step.head_dim, variant, d,
                                                              static_cast<cudaStream_t>(stream));
    return;
  }
  sm90_compact_logits(step, variant, candidates, slots, candidate_block_size, schedule, compact, stream);
  const common::select::CandidateColumns src{compact, width,   topk_span,           candidates,
                                             slots,   candidate_block_size, /*compact=*/true};
  launch_select(src, plan, out, stream);
}

}  // namespace dsa::cuda
