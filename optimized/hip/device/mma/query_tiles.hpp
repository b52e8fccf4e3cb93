// A row's query held in registers for the whole kernel: Reps = H / 16 tiles of
// 16 heads, each lane holding the operand of head 16 rep + lane % 16.
#pragma once

#include "head_tile.hpp"

namespace dsa::gfx942 {

template <int Reps>
struct QueryTiles {
  TileOperand rep[Reps];
};

// q_row: [H][128] fp8 codes of one decode row.
template <int Reps>
__device__ inline QueryTiles<Reps> load_query(const uint8_t* q_row) {
  QueryTiles<Reps> q;
  const int h = lane_id() % 16;
#pragma unroll
  for (int r = 0; r < Reps; ++r) q.rep[r] = query_operand(q_row + (16 * r + h) * kHeadDim);
  return q;
}

}  // namespace dsa::gfx942
