// The logit of one token per lane: the key operand from the preshuffle
// cache, Reps tiles of dots against the row's query, AITER's epilogue. The
// dense and the compact kernels both call this, so a position's logit is the
// same bits whichever kernel computes it (the MFMA result of a column depends
// only on that column's operand).
#pragma once

#include "../layout/preshuffle.hpp"
#include "../mma/query_tiles.hpp"
#include "head_sum.hpp"

namespace dsa::gfx942 {

template <int Reps>
__device__ inline float token_logit(const QueryTiles<Reps>& q, const LaneWeights<Reps>& lw,
                                    const PreshuffleCache& cache, int32_t page, int32_t t, bool visible) {
  const TileOperand k = key_operand(cache, page, t);
  f32x4 dots[Reps];
#pragma unroll
  for (int r = 0; r < Reps; ++r) dots[r] = tile_dots(q.rep[r], k);
  return head_sum<Reps>(dots, lw, cache.scale(page, t), visible);
}

}  // namespace dsa::gfx942
