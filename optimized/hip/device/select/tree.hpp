// The selection on gfx942: the shared TreeTopK of optimized/common/select
// (the source the CUDA build runs on the H200) on the wave-64 vendor layer
// (dsa/common/arch/hip.hpp: 64 lanes, 64-bit ballots). Nothing of the
// algorithm is written here; only the block shape and the entry points are.
#pragma once

#include <hip/hip_runtime.h>

#include "dsa/common/arch/hip.hpp"
#include "dsa/common/select/sources.hpp"
#include "dsa/common/select/topk_tree.hpp"
#include "dsa/optimized/hip/kernel_params.hpp"

namespace dsa::gfx942 {

// 8 waves of 16 keys (8192 entries a block, as on CUDA): two waves per SIMD,
// so a block holds up to 256 VGPRs per lane and never spills.
using SelectTree = common::select::TreeTopK<common::arch::Hip, kSelectThreads, kSelectItems>;
static_assert(SelectTree::kCapacity == kSelectCapacity);

template <class Source>
__device__ void select_tree(const TreeParams<Source>& p) {
  __shared__ typename SelectTree::Shared shared;
  SelectTree::run(common::arch::Hip{}, shared, p.src, p.plan, p.out);
}

}  // namespace dsa::gfx942
