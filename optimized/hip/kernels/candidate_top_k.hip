// The design's topk.candidate_top_k on gfx942 (the consumer layers): the top k
// among the candidate blocks' columns of each row within [0, L_r), remapped to
// positions, -1 tail; no mask pass over the dense row. One block per row.
#include "../device/scheduler/logits_rows.hpp"
#include "../device/select/block_topk.hpp"

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kSelectThreads)
    dsa_gfx942_candidate_top_k(dsa::gfx942::CandidateTopkParams p) {
  using namespace dsa::gfx942;
  __shared__ BlockTopkShared sh;
  const int32_t row = int32_t(blockIdx.x);
  const int32_t len = topk_row_end(p.in, row);
  const float* logits = p.in.logits + int64_t(row) * p.in.logits_stride;
  const int32_t* blocks = p.candidate_blocks + int64_t(row) * p.slots;
  const int32_t S = p.candidate_block_size;
  auto position_at = [&](int32_t j) {
    const int32_t c = j / S, block = blocks[c];
    const int32_t pos = block * S + (j - c * S);
    return block >= 0 && pos < len ? pos : -1;
  };
  auto key_at = [&](int32_t j) {
    const int32_t pos = position_at(j);
    return pos >= 0 ? order_key(logits[pos]) : kNoEntryKey;
  };
  block_topk(p.slots * S, p.k, key_at, position_at, p.topk + int64_t(row) * p.topk_stride, sh);
}
