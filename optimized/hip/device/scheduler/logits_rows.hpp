// Row bounds of the selection launches over dense decode logits: the top-k
// reads [0, L_r), the candidate ops [0, E_r) (the seed's _row_bounds).
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>

#include "dsa/optimized/hip/kernel_params.hpp"

namespace dsa::gfx942 {

__device__ inline int32_t topk_row_end(const LogitsRows& in, int32_t row) {
  const int32_t b = row / in.next_n, j = row - b * in.next_n;
  const int32_t len = in.seq_lens_2d ? in.seq_lens[row] : in.seq_lens[b] - in.next_n + j + 1;
  return len > 0 ? len : 0;
}

__device__ inline int32_t candidate_row_end(const LogitsRows& in, int32_t row) {
  const int32_t len = in.seq_lens_2d ? in.seq_lens[row] : in.seq_lens[row / in.next_n];
  return len > 0 ? len : 0;
}

}  // namespace dsa::gfx942
