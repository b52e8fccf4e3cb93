// Dense paged MQA logits on gfx942 in the arithmetic of AITER's Gluon kernel
// (profile dsa_gfx942): the dense call that the compact candidate launch is
// compared against. Each wave scores 16 tokens per step; lane group 0 writes
// (the shuffles leave every group with the sum). Columns of the row's last
// tile past L_r get -inf, as AITER's masked store does; nothing at or beyond
// `width` is written.
#include "../device/epilogue/token_logit.hpp"
#include "../device/scheduler/decode_rows.hpp"

namespace dsa::gfx942 {

template <int Reps>
__device__ void paged_logits(const PagedLogitsParams& p) {
  const DecodeRow r = decode_row(p.rows, int32_t(blockIdx.x));
  const int wave = threadIdx.x / 64;
  const int lane = lane_id();
  constexpr int kHeads = 16 * Reps;
  const QueryTiles<Reps> q = load_query<Reps>(p.rows.q + int64_t(r.row) * kHeads * kHeadDim);
  const LaneWeights<Reps> lw = lane_weights<Reps>(p.rows.weights + int64_t(r.row) * kHeads);
  const PreshuffleCache cache{p.rows.kv_cache, int64_t(p.rows.page_size) * (kHeadDim + 4), p.rows.page_size};
  float* out = p.logits + int64_t(r.row) * p.logits_stride;

  const int32_t first_tile = int32_t(blockIdx.y) * p.tiles_per_block;
  for (int32_t tile = wave; tile < p.tiles_per_block; tile += kWavesPerBlock) {
    const int32_t base = (first_tile + tile) * 16;
    if (base >= r.visible_len) break;
    const int32_t n = base + lane % 16;
    const bool visible = n < r.visible_len;
    // An invisible lane reads token 0 of page 0 (always there) and masks it.
    const PageSlot at = visible ? page_slot(r, uint32_t(n)) : PageSlot{0, 0};
    const float logit = token_logit<Reps>(q, lw, cache, at.page, at.slot, visible);
    if (lane < 16 && n < p.width) out[n] = logit;
  }
}

}  // namespace dsa::gfx942

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kThreadsPerBlock)
    dsa_gfx942_paged_logits_h32(dsa::gfx942::PagedLogitsParams p) {
  dsa::gfx942::paged_logits<2>(p);
}

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kThreadsPerBlock)
    dsa_gfx942_paged_logits_h64(dsa::gfx942::PagedLogitsParams p) {
  dsa::gfx942::paged_logits<4>(p);
}
