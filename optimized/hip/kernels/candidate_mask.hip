// gfx942: the candidate mask where a gfx942 launch does not take the call
// (vLLM's full mask, or the strided one over [start, E_r)): the shared block
// body of optimized/common/candidate_mask.hpp on the wave-64 vendor layer.
// The row's candidate bitmap is dynamic LDS (kMaskBitmapBytes at most).
#include <hip/hip_runtime.h>

#include "dsa/common/arch/hip.hpp"
#include "dsa/common/candidate_mask.hpp"
#include "dsa/optimized/hip/kernel_params.hpp"

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kRowThreads)
    dsa_gfx942_candidate_mask(dsa::common::CandidateMaskRows p) {
  extern __shared__ uint32_t bitmap[];
  dsa::common::candidate_mask_block<dsa::gfx942::kRowThreads>(dsa::common::arch::Hip{}, p, bitmap);
}
