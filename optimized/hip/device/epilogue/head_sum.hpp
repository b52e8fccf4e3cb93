// The logit of the lane's token from its tiles' dots, in the order of AITER's
// Gluon epilogue (SPEC 8): per head o = dot * s, relu (fmaxf: NaN -> 0), times
// the head's weight, -inf outside the row; then the sum over heads the way
// Triton's gl.reduce lowers it: the lane's 4 * Reps values in register order
// (rep-major: heads 16 rep + 4g + i), one rounding per add, then shuffles at
// lane distance 32, then 16.
//
// -ffp-contract=off keeps the multiply by w and the add apart, as the select
// between them does in AITER's kernel. The profile `dsa_gfx942` states this
// order; tests/gfx942_head_order_test.cpp reads it back from the code object.
#pragma once

#include <hip/hip_runtime.h>

#include "../common/wave.hpp"
#include "../mma/head_tile.hpp"

namespace dsa::gfx942 {

// weights[rep][i] is the weight of head 16 rep + 4g + i for this lane's group g.
template <int Reps>
struct LaneWeights {
  float w[Reps][4];
};

template <int Reps>
__device__ inline LaneWeights<Reps> lane_weights(const float* row_weights) {
  const int g = lane_id() / 16;
  LaneWeights<Reps> lw;
#pragma unroll
  for (int rep = 0; rep < Reps; ++rep)
#pragma unroll
    for (int i = 0; i < 4; ++i) lw.w[rep][i] = row_weights[16 * rep + 4 * g + i];
  return lw;
}

template <int Reps>
__device__ inline float head_sum(const f32x4 (&dots)[Reps], const LaneWeights<Reps>& lw, float k_scale,
                                 bool visible) {
  float sum = 0.f;
#pragma unroll
  for (int rep = 0; rep < Reps; ++rep) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float o = dots[rep][i] * k_scale;
      o = fmaxf(o, 0.f);
      o = o * lw.w[rep][i];
      o = visible ? o : -__builtin_inff();
      sum = (rep == 0 && i == 0) ? o : sum + o;
    }
  }
  sum = sum + shuffle_xor(sum, 32);
  sum = sum + shuffle_xor(sum, 16);
  return sum;
}

}  // namespace dsa::gfx942
