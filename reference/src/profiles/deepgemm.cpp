// DeepGEMM's paged MQA logits kernels (SPEC 8): SM90 (confirmed on an H200)
// and SM100 with fp32 or bf16 reduction (read from source).
#include "catalog.hpp"

namespace dsa::profiles {
namespace {

std::vector<int> heads_of(int first, int stride, int count) {
  std::vector<int> h;
  for (int i = 0; i < count; ++i) h.push_back(first + i * stride);
  return h;
}

std::vector<ReduceStep> sm90_reduction(int heads) { return deepgemm_sm90_reduction(heads); }

// One thread holds every head of one entry: four fma chains from +0 (float2
// sum_0 = heads (4g, 4g+1), sum_1 = heads (4g+2, 4g+3), g ascending), then
// t = sum_0 + sum_1 per component and logit = RN(RN(t.x + t.y) * s).
std::vector<ReduceStep> sm100_program(const char* profile, int heads) {
  require_heads_multiple(profile, heads, 4, "the kernel asserts kNumHeads % 4 == 0");
  std::vector<ReduceStep> prog;
  int32_t next = 0;
  int32_t chain[4];
  for (int c = 0; c < 4; ++c) chain[c] = reduce::fma_chain_from_zero(prog, next, heads_of(c, 4, heads / 4));
  const int32_t tx = reduce::add(prog, next, chain[0], chain[2]);
  const int32_t ty = reduce::add(prog, next, chain[1], chain[3]);
  reduce::scale(prog, next, reduce::add(prog, next, tx, ty));
  return prog;
}

std::vector<ReduceStep> sm100_reduction(int heads) { return sm100_program("deepgemm_sm100", heads); }
std::vector<ReduceStep> sm100_bf16_reduction(int heads) { return sm100_program("deepgemm_sm100_bf16", heads); }

}  // namespace

Profile deepgemm_sm90() {
  Profile p;
  p.name = "deepgemm_sm90";
  p.origin =
      "DeepGEMM impls/sm90_fp8_paged_mqa_logits.cuh (SPEC 8). Per head q.k by 4 chained wgmma k32 e4m3 "
      "(2 for D = 64) from zero, no promotion (NUMERICS: 13-bit accumulation). Lane quad q holds heads "
      "8g+2q and 8g+2q+1; each partial is fma(w_g0, r_g0, RN(w_g1 * r_g1)) then fma in g order (the "
      "contraction the compiler chose, read from the SASS); P_q = RN(RN(S_even + S_odd) * s), the K scale "
      "applied per lane before lanes combine; H = 8 fuses the even head onto the odd product; logit = "
      "RN(RN(P0 + P1) + RN(P2 + P3)) (shfl xor 1, then 2). relu is fmaxf (NaN -> 0). CONFIRMED bit for bit "
      "on an H200 against the real kernel (DeepGEMM 477618c): 210,090 of 210,090 logits over 39 cases; "
      "the cases in data/deepgemm_sm90 are checked in CI.";
  p.mma = mma::Model::sm90_wgmma_e4m3;
  p.elements = {ElementFormat::e4m3fn};
  p.build_reduction = sm90_reduction;
  p.nan_bits = 0x7FFFFFFFu;
  return p;
}

Profile deepgemm_sm100() {
  Profile p;
  p.name = "deepgemm_sm100";
  p.origin =
      "DeepGEMM impls/sm100_mqa_logits.cuh, fp32 weights and logits (SPEC 8). Per head q.k by tcgen05 "
      "kind::f8f6f4 k32 (4 chained for D = 128), the published B200 model. One thread holds all heads of "
      "one entry: float2 sum_0 takes heads (4g, 4g+1), sum_1 heads (4g+2, 4g+3), each by __ffma2_rn from "
      "+0 in g order; t = sum_0 + sum_1 per component; logit = RN(RN(t.x + t.y) * s). That file computes "
      "relu as a + |a| (2 relu(a)) and halves the sum: the same bits except where doubling overflows or "
      "halving lands in the subnormals; NaN propagates through it. (The older "
      "sm100_fp8_paged_mqa_logits.cuh summed ((x0 + y0) + x1) + y1 instead: not this profile.) READ FROM "
      "SOURCE ONLY: no B200 here.";
  p.mma = mma::Model::sm100_tcgen05_f8f6f4_e4m3;
  p.elements = {ElementFormat::e4m3fn};
  p.head_stage.relu_propagates_nan = true;
  p.build_reduction = sm100_reduction;
  p.nan_bits = 0x7FFFFFFFu;
  return p;
}

Profile deepgemm_sm100_bf16() {
  Profile p;
  p.name = "deepgemm_sm100_bf16";
  p.origin =
      "DeepGEMM impls/sm100_mqa_logits.cuh with bf16 weights (the unified bf16 reduction, selected by the "
      "weights dtype in csrc/apis/attention.hpp, which then requires bf16 logits; the SM100 sparse path "
      "and DeepGEMM's test require its logits bitwise equal to the dense ones) (SPEC 7, 8). q.k by tcgen05 "
      "(kind::f8f6f4 for e4m3fn; block-scaled kind::mxf4 K = 64 for MXFP4, whose ue8m0 scales are inside "
      "the MMA). r = cvt.rn.relu.bf16x2.f32(acc) (relu then one rounding to bf16; NaN stays NaN); __hfma2 "
      "chains from +0: sum_0 = heads (4g, 4g+1), sum_1 = heads (4g+2, 4g+3); __hadd2_rn(sum_0, sum_1); "
      "__hadd_rn(x, y); for e4m3fn times the K scale cast to bf16, a bf16 multiply; MXFP4 has no scale "
      "multiply. Every step one bf16 rounding. The API accepts fp8 with bf16 weights, so e4m3fn is taken "
      "too. READ FROM SOURCE ONLY: no B200 here.";
  p.mma = mma::Model::sm100_tcgen05_f8f6f4_e4m3;
  p.mma_mxfp4 = mma::Model::sm100_tcgen05_mxf4_k64;
  p.elements = {ElementFormat::e4m3fn, ElementFormat::mxfp4};
  p.weights = Precision::bf16;
  p.logits = Precision::bf16;
  p.reduce = Precision::bf16;
  p.head_stage.round_relu_to = Precision::bf16;
  p.head_stage.relu_propagates_nan = true;
  p.build_reduction = sm100_bf16_reduction;
  p.nan_bits = 0x7FFF0000u;  // the bf16 canonical NaN 0x7FFF, widened
  return p;
}

}  // namespace dsa::profiles

namespace dsa {

// Lane q = lane % 4 of a quad holds heads 8g + 2q (even partial) and 8g + 2q + 1
// (odd partial); each partial is fma(w_g0, r_g0, RN(w_g1 * r_g1)) then fma in g
// order; P_q = RN(RN(S_even + S_odd) * s); logit = RN(RN(P0 + P1) + RN(P2 + P3)).
// With one group (H = 8) the compiler fuses the even head onto the odd product.
std::vector<ReduceStep> deepgemm_sm90_reduction(int heads, Sm90KScale k_scale) {
  profiles::require_heads_multiple("deepgemm_sm90", heads, 8, "the kernel asserts kNumHeads % 8 == 0");
  const int groups = heads / 8;
  std::vector<ReduceStep> prog;
  int32_t next = 0;
  std::vector<int32_t> lanes;
  for (int q = 0; q < 4; ++q) {
    if (groups == 1) {
      lanes.push_back(reduce::scale(prog, next, reduce::fma_chain_from_pair(prog, next, {2 * q, 2 * q + 1})));
      continue;
    }
    int32_t even = reduce::fma_chain_from_pair(prog, next, profiles::heads_of(2 * q, 8, groups));
    int32_t odd = reduce::fma_chain_from_pair(prog, next, profiles::heads_of(2 * q + 1, 8, groups));
    if (k_scale == Sm90KScale::parity_partials) {
      even = reduce::scale(prog, next, even);
      odd = reduce::scale(prog, next, odd);
      lanes.push_back(reduce::add(prog, next, even, odd));
    } else {
      lanes.push_back(reduce::scale(prog, next, reduce::add(prog, next, even, odd)));
    }
  }
  reduce::butterfly(prog, next, lanes, {1, 2});  // __shfl_xor 1, then 2
  return prog;
}

}  // namespace dsa
