// The gfx942 (MI300) kernels (SPEC 8): AITER's Gluon paged logits, our HIP
// kernels that copy its arithmetic (optimized/hip), and vLLM's Triton decode
// kernel for C4A layers. AITER's and vLLM's are read from source only; where
// the source leaves the order to the compiler, the profile names its assumption.
#include <string>
#include <vector>

#include "catalog.hpp"
#include "dsa/error.hpp"

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

// AITER's dot operands have k_width = 16: lane group g of a 16x16x32 MFMA holds
// 16 consecutive dims 64c + 16g + [0, 16) of its row, and Triton issues the
// two 8-dim halves as consecutive instructions (the kPack loop of its MFMA
// lowering). Instruction i = 2c + half, slot 8g + e reads dim 64c + 16g + 8half + e.
std::vector<int32_t> mfma_k_width16_dims(int head_dim) {
  if (head_dim <= 0 || head_dim % 64 != 0)
    throw InvalidInput("head_dim", "the k_width = 16 operands of the 16x16x32 MFMA cover 64 dims per step; D = " +
                                       std::to_string(head_dim) + " is not a multiple of 64");
  std::vector<int32_t> order;
  for (int c = 0; c < head_dim / 64; ++c)
    for (int half = 0; half < 2; ++half)
      for (int g = 0; g < 4; ++g)
        for (int e = 0; e < 8; ++e) order.push_back(64 * c + 16 * g + 8 * half + e);
  return order;
}

// The arithmetic of AITER's Gluon kernel: both profiles below are it.
Profile gluon_arithmetic() {
  Profile p;
  p.mma = mma::Model::cdna3_mfma_f32_16x16x32_fp8;
  p.elements = {ElementFormat::e4m3fnuz};
  p.head_stage.scale_before_relu = true;
  p.build_reduction = aiter_reduction;
  p.dim_order = mfma_k_width16_dims;
  p.nan_bits = 0x7FFFFFFFu;
  return p;
}

}  // namespace

Profile aiter_gfx942_gluon() {
  Profile p = gluon_arithmetic();
  p.name = "aiter_gfx942_gluon";
  p.origin =
      "AITER aiter/ops/triton/gluon/pa_mqa_logits.py on gfx942 (SPEC 8). q.k by v_mfma_f32_16x16x32_fp8_fp8 "
      "(e4m3fnuz; 4 chained from zero for D = 128). Dims: the dot operands have k_width = 16 and Triton's "
      "MFMA lowering issues each lane's two 8-dim halves as consecutive instructions, so instruction 2c + half "
      "reads dims 64c + 16g + 8half + [0, 8) from lane group g (read from Triton's source, the kPack loop of "
      "DotOpToLLVM/MFMA.cpp). Then o * s, relu (gl.maximum: NaN -> 0), times w, the -inf mask, gl.reduce over "
      "heads. ASSUMED (not established): lane group g = lane / 16 holds heads 16 rep + 4g + i in register "
      "order and sums them sequentially, each product rounded (no contraction across the mask select); the "
      "groups combine by shuffles at lane distance 32 then 16. H must be a multiple of 32 (the kernel's "
      "layouts). READ FROM SOURCE ONLY: no MI300 here.";
  return p;
}

Profile dsa_gfx942() {
  Profile p = gluon_arithmetic();
  p.name = "dsa_gfx942";
  p.origin =
      "This project's gfx942 HIP kernels (optimized/hip: paged_logits, candidate_logits_top_k), which copy "
      "AITER's Gluon arithmetic so that compact candidate logits equal the dense call's bit for bit: 4 chained "
      "v_mfma_f32_16x16x32_fp8_fp8 from zero with k_width = 16 operands (instruction 2c + half reads dims "
      "64c + 16g + 8half + [0, 8) of lane group g), per head relu(RN(dot * s)) then RN(r * w), the lane's 16 "
      "heads 16 rep + 4g + i added in register order without contraction, shuffles at lane distance 32 then "
      "16. The adds, the shuffles and the MFMA operands are read back from the code objects' disassembly by "
      "tests/gfx942_head_order_test.cpp. Built into gfx942 code objects in CI; NO MI300 here: bit-exactness "
      "on the chip rests on the published CDNA3 MFMA model (NUMERICS) and this profile.";
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
