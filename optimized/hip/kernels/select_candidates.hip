// The design's topk.select_candidates on gfx942 (the source layer): per row the
// `slots` best candidate blocks by score (the max of the block's logits within
// [0, E_r), NaN propagating; the newest block +inf), ties to the lower block,
// blocks scoring -inf never chosen, -1 in the empty slots. The blocks come out
// in another order than vLLM's (SPEC 7: the order is free). One block per row.
#include "../device/scheduler/logits_rows.hpp"
#include "../device/select/block_topk.hpp"

namespace dsa::gfx942 {

__device__ inline float block_score(const float* logits, int32_t block, int32_t S, int32_t end) {
  const int32_t first = block * S;
  if ((end - 1) / S == block) return __builtin_inff();  // the block of the newest entry is always kept
  float m = -__builtin_inff();
  for (int32_t t = first; t < first + S && t < end; ++t) {
    const float v = logits[t];
    m = (v != v || m != m) ? __builtin_nanf("") : fmaxf(m, v);
  }
  return m;
}

}  // namespace dsa::gfx942

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kSelectThreads)
    dsa_gfx942_select_candidates(dsa::gfx942::SelectCandidatesParams p) {
  using namespace dsa::gfx942;
  __shared__ BlockTopkShared sh;
  const int32_t row = int32_t(blockIdx.x);
  const int32_t end = candidate_row_end(p.in, row);
  const float* logits = p.in.logits + int64_t(row) * p.in.logits_stride;
  const int32_t S = p.candidate_block_size;
  const int32_t blocks = (end + S - 1) / S;
  auto key_at = [&](int32_t c) {
    const float score = block_score(logits, c, S, end);
    return score == -__builtin_inff() ? kNoEntryKey : order_key(score);
  };
  block_topk(blocks, p.slots, key_at, [](int32_t c) { return c; }, p.candidate_blocks + int64_t(row) * p.slots, sh);
}
