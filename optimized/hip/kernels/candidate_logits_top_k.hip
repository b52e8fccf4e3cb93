// The design's candidate_logits_top_k on gfx942: the logits of the candidate
// blocks only, straight into compact rows, and their top k remapped to
// positions, in one launch. Compact column j = c * S + t scores position
// candidate_blocks[r][c] * S + t with token_logit, the same code as the dense
// kernel, so its value is the dense call's bit for bit. Grid (rows, splits):
// every block writes its run of compact columns (-inf for empty slots and
// positions at or beyond L_r); the last block of a row to finish (a counter
// per row) selects the row's top k from the compact row and resets the counter.
// That selection is the shared TreeTopK of optimized/common/select, the code of
// candidate_top_k, run by the one block over the row's leaves in turn.
#include "../device/epilogue/token_logit.hpp"
#include "../device/scheduler/decode_rows.hpp"
#include "../device/select/one_block.hpp"
#include "../device/select/tree.hpp"

namespace dsa::gfx942 {

struct CompactColumn {
  int32_t position;  // -1 when the column is not a candidate position of the row
};

__device__ inline CompactColumn compact_column(const CandidateLogitsTopkParams& p, const DecodeRow& r,
                                               uint32_t j) {
  const uint32_t c = j / uint32_t(p.candidate_block_size);
  const int32_t block = p.candidate_blocks[int64_t(r.row) * p.slots + c];
  const int32_t position = block * p.candidate_block_size + int32_t(j - c * uint32_t(p.candidate_block_size));
  return {block >= 0 && position < r.visible_len ? position : -1};
}

using FusedTree = common::select::TreeTopK<OneBlock<common::arch::Hip>, kThreadsPerBlock, kSelectItems>;
static_assert(FusedTree::kCapacity == kFusedSelectCapacity);

template <int Reps>
__device__ void candidate_logits_top_k(const CandidateLogitsTopkParams& p) {
  const DecodeRow r = decode_row(p.rows, int32_t(blockIdx.x));
  const int wave = threadIdx.x / 64;
  const int lane = lane_id();
  constexpr int kHeads = 16 * Reps;
  const int32_t width = p.slots * p.candidate_block_size;
  float* compact = p.compact + int64_t(r.row) * width;
  {
    const QueryTiles<Reps> q = load_query<Reps>(p.rows.q + int64_t(r.row) * kHeads * kHeadDim);
    const LaneWeights<Reps> lw = lane_weights<Reps>(p.rows.weights + int64_t(r.row) * kHeads);
    const PreshuffleCache cache{p.rows.kv_cache, int64_t(p.rows.page_size) * (kHeadDim + 4), p.rows.page_size};
    const int32_t first_tile = int32_t(blockIdx.y) * p.tiles_per_block;
    for (int32_t tile = wave; tile < p.tiles_per_block; tile += kWavesPerBlock) {
      const int32_t base = (first_tile + tile) * 16;
      if (base >= width) break;
      const int32_t j = base + lane % 16;
      const CompactColumn col = j < width ? compact_column(p, r, uint32_t(j)) : CompactColumn{-1};
      const bool visible = col.position >= 0;
      const PageSlot at = visible ? page_slot(r, uint32_t(col.position)) : PageSlot{0, 0};
      const float logit = token_logit<Reps>(q, lw, cache, at.page, at.slot, visible);
      if (lane < 16 && j < width) compact[j] = logit;
    }
  }

  __shared__ typename FusedTree::Shared sh;
  __shared__ uint32_t finished_before;
  __threadfence();  // release this block's compact columns before it counts itself done
  __syncthreads();
  if (threadIdx.x == 0) finished_before = atomicAdd(&p.row_done[r.row], 1u);
  __syncthreads();
  if (finished_before != gridDim.y - 1) return;
  __threadfence();  // acquire: the other blocks' compact columns are visible from here
  if (threadIdx.x == 0) p.row_done[r.row] = 0;

  common::select::CandidateColumns columns;
  columns.values = p.compact;
  columns.row_stride = width;
  columns.span.kind = p.rows.seq_lens_2d ? common::RowSpan::Kind::per_row_2d : common::RowSpan::Kind::visible_1d;
  columns.span.rows = int64_t(p.rows.batch) * p.rows.next_n;
  columns.span.width = int64_t(p.rows.max_pages) * p.rows.page_size;
  columns.span.seq_lens = p.rows.seq_lens;
  columns.span.next_n = p.rows.next_n;
  columns.blocks = p.candidate_blocks;
  columns.slots = p.slots;
  columns.block_size = p.candidate_block_size;
  columns.compact = true;
  const int64_t nodes = int64_t(r.row) * p.plan.nodes_per_row;
  const common::select::TreeOutput out{p.topk + int64_t(r.row) * p.topk_stride, p.slots_workspace + nodes * p.plan.k,
                                       p.counters + nodes, nullptr};
  FusedTree::run(OneBlock<common::arch::Hip>{}, sh, OneRow<common::select::CandidateColumns>{columns, r.row}, p.plan,
                 out);
}

}  // namespace dsa::gfx942

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kThreadsPerBlock)
    dsa_gfx942_candidate_logits_top_k_h32(dsa::gfx942::CandidateLogitsTopkParams p) {
  dsa::gfx942::candidate_logits_top_k<2>(p);
}

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kThreadsPerBlock)
    dsa_gfx942_candidate_logits_top_k_h64(dsa::gfx942::CandidateLogitsTopkParams p) {
  dsa::gfx942::candidate_logits_top_k<4>(p);
}
