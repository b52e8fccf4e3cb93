// gfx942: vLLM's unpack_seq_triton after a padded step (the first d_b top-k
// rows of each request): the shared block body of optimized/common/padding.hpp
// on the wave-64 vendor layer.
#include <hip/hip_runtime.h>

#include "dsa/common/arch/hip.hpp"
#include "dsa/common/padding.hpp"
#include "dsa/optimized/hip/kernel_params.hpp"

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kRowThreads)
    dsa_gfx942_unpack_topk(dsa::common::UnpackTopk p) {
  dsa::common::unpack_topk_block<dsa::gfx942::kRowThreads>(dsa::common::arch::Hip{}, p);
}
