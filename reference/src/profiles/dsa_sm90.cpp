// The project's own SM90 kernels (optimized/cuda, kernels/sm90_logits_kernel.cuh): dsa_sm90 and
// dsa_sm90_accurate. Their wgmma accumulator layout (M = 64 entries, N = the heads of one row)
// puts heads 8g + 2q and 8g + 2q + 1 in lane q of a quad, as in DeepGEMM's SM90 kernel, and the
// epilogue (epilogue/head_sum.cuh) writes DeepGEMM's order with explicit rounding intrinsics: the
// head sum is deepgemm_sm90's program, reused here rather than rewritten.
#include "catalog.hpp"

namespace dsa::profiles {
namespace {

std::vector<ReduceStep> dsa_sm90_reduction(int heads) {
  require_heads_multiple("dsa_sm90", heads, 8, "the order is defined per group of 8 heads");
  return deepgemm_sm90().build_reduction(heads);
}

Profile sm90_common() {
  Profile p;
  p.mma = mma::Model::sm90_wgmma_e4m3;
  p.elements = {ElementFormat::e4m3fn};
  p.build_reduction = dsa_sm90_reduction;
  p.nan_bits = 0x7FFFFFFFu;
  return p;
}

const char* kHeadSum =
    "Head sum (epilogue/head_sum.cuh, __fmaf_rn/__fmul_rn/__fadd_rn so no contraction can move a bit): lane q of "
    "a quad holds heads 8g+2q and 8g+2q+1 of two entries; each partial is fma(w_g0, r_g0, RN(w_g1 * r_g1)) then "
    "fma in g order; P_q = RN(RN(S_even + S_odd) * s), the K scale per lane before the lanes combine; logit = "
    "RN(RN(P0 + P1) + RN(P2 + P3)) (shfl xor 1, then 2); relu is fmaxf (NaN -> 0). The same program as "
    "deepgemm_sm90. ";

}  // namespace

Profile dsa_sm90() {
  Profile p = sm90_common();
  p.name = "dsa_sm90";
  p.origin = std::string(
                 "optimized/cuda kernels cuda_sm90 (paged, compact candidate and prefill logits, H 32/64, D 64/128). "
                 "Per head q.k by D/32 chained wgmma m64nHk32 e4m3 from zero (scale-d = 0 on the first), no "
                 "promotion (NUMERICS: 13-bit accumulation). ") +
             kHeadSum + "Status: see docs/cuda.md and bench/gpu/RESULTS.md for what ran on the H200.";
  return p;
}

Profile dsa_sm90_accurate() {
  Profile p = sm90_common();
  p.name = "dsa_sm90_accurate";
  p.accumulation = mma::Accumulation::promoted;
  p.origin = std::string(
                 "optimized/cuda kernels cuda_sm90_accurate. Per head q.k: each k32 slice is its own wgmma "
                 "m64nHk32 e4m3 from zero (scale-d = 0), and the D/32 results are added in slice order into an "
                 "fp32 accumulator, one RN add per step (acc = RN(RN(RN(d0 + d1) + d2) + d3) for D = 128), so the "
                 "13-bit truncation does not compound across steps. ") +
             kHeadSum + "Status: see docs/cuda.md and bench/gpu/RESULTS.md for what ran on the H200.";
  return p;
}

}  // namespace dsa::profiles
