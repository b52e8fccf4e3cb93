// The `exact` profile: the mathematical sum of SPEC 4 with one fp32 rounding
// per step in the plainest order. It is the foundation's tier: what a careful
// CPU implementation computes, not any GPU kernel.
#include "catalog.hpp"

#include <numeric>

namespace dsa::profiles {
namespace {

// acc = +0; acc = fma(w_h, r_h, acc) for h = 0 .. H-1; logit = RN(acc * s).
std::vector<ReduceStep> exact_reduction(int heads) {
  require_heads_multiple("exact", heads, 1, "");
  std::vector<int> order(static_cast<size_t>(heads));
  std::iota(order.begin(), order.end(), 0);
  std::vector<ReduceStep> prog;
  int32_t next = 0;
  reduce::scale(prog, next, reduce::fma_chain_from_zero(prog, next, order));
  return prog;
}

}  // namespace

Profile exact() {
  Profile p;
  p.name = "exact";
  p.origin =
      "The reference's own order, no kernel's (SPEC 4): per-head dot products exact (fp32 rounding of the "
      "exact sum, NUMERICS 'Exact sums'; for MXFP4 the block-scaled sum rounded once), relu (NaN kept, as "
      "torch.relu), a sequential fused multiply-add chain from +0 over heads 0..H-1, then RN(acc * s). "
      "fp32 throughout; NaN written as the x86 default NaN. Nothing to confirm on hardware: it is the "
      "definition the tolerance tier measures against.";
  p.mma = mma::Model::exact;
  p.elements = {ElementFormat::e4m3fn, ElementFormat::e4m3fnuz, ElementFormat::mxfp4};
  p.applies_k_scale = true;  // fp8 entries; MXFP4 entries carry their block scales inside the dot
  p.head_stage.relu_propagates_nan = true;
  p.build_reduction = exact_reduction;
  p.nan_bits = 0xFFC00000u;
  return p;
}

}  // namespace dsa::profiles
