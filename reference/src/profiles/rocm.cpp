// The gfx942 (MI300) kernels (SPEC 8): AITER's Gluon paged logits and vLLM's
// Triton decode kernel for C4A layers. Both read from source only; where the
// source leaves the order to the compiler, the profile names its assumption.
#include "catalog.hpp"

namespace dsa::profiles {
namespace {

// AITER: o = mfma(q, k) over a [heads, entries] tile with the 16x16 MFMA layout
// (warps along the entries), so lane group g = lane / 16 holds, for its entry,
// heads 16 * rep + 4g + i (rep over H / 16 tiles, i < 4) in that register order.
// Per head r = relu(RN(dot * s)) (the head stage), then RN(r * w); the lane sums
// its heads in register order without contraction (the -inf mask select sits
// between the multiply and the sum); the four lane groups combine by shuffles
// at lane distance 32, then 16 (Triton reduces the largest distance first).
std::vector<ReduceStep> aiter_reduction(int heads) {
  require_heads_multiple("aiter_gfx942_gluon", heads, 32,
                         "the kernel's Q layout has ChunkQ / 32 rows per thread (ChunkQ = H, D = 128)");
  std::vector<ReduceStep> prog;
  int32_t next = 0;
  std::vector<int32_t> groups;
  for (int g = 0; g < 4; ++g) {
    std::vector<int> order;
    for (int rep = 0; rep < heads / 16; ++rep)
      for (int i = 0; i < 4; ++i) order.push_back(16 * rep + 4 * g + i);
    groups.push_back(reduce::mul_add_chain(prog, next, order));
  }
  reduce::butterfly(prog, next, groups, {2, 1});  // lane distance 32 = 2 groups, then 16 = 1 group
  return prog;
}

// vLLM: s = tl.dot(kv, q^T) over [64 entries, H heads], assumed lowered to the
// 32x32 MFMA with warps [2, 2]: lane l % 32 of a warp holds head 32w + l % 32 of
// its entries. Each lane's single term RN(relu(dot) * w) goes through a
// butterfly over the 32 lanes (distances 16, 8, 4, 2, 1), the warps' partials
// are added in order, then RN(sum * s).
std::vector<ReduceStep> vllm_c4a_reduction(int heads) {
  require_heads_multiple("vllm_triton_c4a", heads, 32,
                         "with fewer than 32 heads Triton would pick the 16x16x32 MFMA, which this profile does "
                         "not model");
  std::vector<ReduceStep> prog;
  int32_t next = 0;
  int32_t total = -1;
  for (int w = 0; w < heads / 32; ++w) {
    std::vector<int32_t> lanes;
    for (int l = 0; l < 32; ++l) lanes.push_back(reduce::product(prog, next, 32 * w + l));
    const int32_t part = reduce::butterfly(prog, next, lanes, {16, 8, 4, 2, 1});
    total = total < 0 ? part : reduce::add(prog, next, total, part);
  }
  reduce::scale(prog, next, total);
  return prog;
}

}  // namespace

Profile aiter_gfx942_gluon() {
  Profile p;
  p.name = "aiter_gfx942_gluon";
  p.origin =
      "AITER aiter/ops/triton/gluon/pa_mqa_logits.py on gfx942 (SPEC 8). q.k by v_mfma_f32_16x16x32_fp8_fp8 "
      "(e4m3fnuz; 4 chained for D = 128, K in order: ASSUMED, the k_width = 16 operand layout may permute "
      "K). Then o * s, relu (gl.maximum: NaN -> 0), times w, the -inf mask, gl.reduce over heads. "
      "ASSUMED (not established): lane group g = lane / 16 holds heads 16 rep + 4g + i in register order "
      "and sums them sequentially, each product rounded (no contraction across the mask select); the "
      "groups combine by shuffles at lane distance 32 then 16. H must be a multiple of 32 (the kernel's "
      "layouts). READ FROM SOURCE ONLY: no MI300 here.";
  p.mma = mma::Model::cdna3_mfma_f32_16x16x32_fp8;
  p.elements = {ElementFormat::e4m3fnuz};
  p.head_stage.scale_before_relu = true;
  p.build_reduction = aiter_reduction;
  p.nan_bits = 0x7FFFFFFFu;
  return p;
}

Profile vllm_triton_c4a() {
  Profile p;
  p.name = "vllm_triton_c4a";
  p.origin =
      "vLLM vllm/v1/attention/ops/rocm_aiter_mla_sparse.py, _fp8_paged_mqa_logits_decode_kernel (C4A "
      "layers, block-flat cache, gfx942) (SPEC 8): s = tl.dot(kv, q^T) -> relu (tl.maximum: NaN -> 0) -> "
      "times w -> tl.sum over heads -> times s. ASSUMED (not established): tl.dot with M = 64 entries and "
      "N = H >= 32 lowers to v_mfma_f32_32x32x16_fp8_fp8 (Triton picks 32x32 when min(M, N) >= 32), K in "
      "order, 8 chained for D = 128; warps [2, 2], so a lane holds one head of an entry; the head sum is a "
      "butterfly over the 32 lanes at distances 16, 8, 4, 2, 1 of the rounded products (no contraction), "
      "then the two warps' partials in order; the K scale last. H must be a multiple of 32. READ FROM "
      "SOURCE ONLY: no MI300 here.";
  p.mma = mma::Model::cdna3_mfma_f32_32x32x16_fp8;
  p.elements = {ElementFormat::e4m3fnuz};
  p.build_reduction = vllm_c4a_reduction;
  p.nan_bits = 0x7FFFFFFFu;
  return p;
}

}  // namespace dsa::profiles
