// gfx942: vLLM's pack_seq_triton before a padded step (ragged rows -> next_n
// slots per request, `pad` bytes in the empty ones): the shared block body of
// optimized/common/padding.hpp on the wave-64 vendor layer.
#include <hip/hip_runtime.h>

#include "dsa/common/arch/hip.hpp"
#include "dsa/common/padding.hpp"
#include "dsa/optimized/hip/kernel_params.hpp"

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kRowThreads) dsa_gfx942_pack_rows(dsa::common::PackRows p) {
  dsa::common::pack_rows_block<dsa::gfx942::kRowThreads>(dsa::common::arch::Hip{}, p);
}
