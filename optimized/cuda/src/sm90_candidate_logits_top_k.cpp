// Host launcher of the fused candidate launch's work (sm90_logits.hpp): the
// compact logits kernel, then the selection's row or group kernel over the
// compact rows it wrote, both on the caller's stream. Two kernels, not yet one
// launch (docs/cuda.md says so).
#include <string>

#include "dsa/error.hpp"
#include "dsa/optimized/cuda/select.hpp"
#include "dsa/optimized/cuda/sm90_logits.hpp"

namespace dsa::cuda {

void sm90_candidate_logits_top_k(const DeviceDecodeStep& step, Sm90Variant variant, const int32_t* candidates,
                                 int32_t slots, int32_t candidate_block_size, const int32_t* schedule, float* compact,
                                 const common::RowSpan& topk_span, int32_t k, int32_t* out, void* stream) {
  const int64_t rows = int64_t(step.batch) * step.next_n;
  if (topk_span.rows != rows)
    throw InvalidInput("topk_span", std::to_string(topk_span.rows) + " rows for a step of " + std::to_string(rows));
  const int64_t width = int64_t(slots) * candidate_block_size;
  // The plan first: a shape the top-k cannot take is refused before any kernel runs.
  const common::select::GroupPlan plan = select_group_plan(rows, width, k, "candidate_logits_top_k");
  sm90_compact_logits(step, variant, candidates, slots, candidate_block_size, schedule, compact, stream);
  const common::select::CandidateColumns src{compact, width,   topk_span,           candidates,
                                             slots,   candidate_block_size, /*compact=*/true};
  launch_select(src, plan, out, stream);
}

}  // namespace dsa::cuda
