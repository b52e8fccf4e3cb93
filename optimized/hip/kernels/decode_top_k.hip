// The design's topk.decode_top_k on gfx942: the top k of each decode row's
// [0, L_r) columns, every entry written (-1 tail), ties taken lowest column
// first (the same set on every run). One block of 4 waves per row.
#include "../device/scheduler/logits_rows.hpp"
#include "../device/select/block_topk.hpp"

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kSelectThreads)
    dsa_gfx942_decode_top_k(dsa::gfx942::DecodeTopkParams p) {
  using namespace dsa::gfx942;
  __shared__ BlockTopkShared sh;
  const int32_t row = int32_t(blockIdx.x);
  const int32_t len = topk_row_end(p.in, row);
  const float* logits = p.in.logits + int64_t(row) * p.in.logits_stride;
  block_topk(
      len, p.k, [&](int32_t n) { return order_key(logits[n]); }, [](int32_t n) { return n; },
      p.topk + int64_t(row) * p.topk_stride, sh);
}
