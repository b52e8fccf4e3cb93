// Bit-exact models of the matrix units' fp8 dot products (NUMERICS.md).
//
// A model computes what one instruction writes for one output element
// D[m][n] = sum_k A[m][k] * B[n][k] (+ C), and a K-long chain of them the way
// the kernels chain them (each instruction's D is the next one's C; the first
// starts from zero with scale-d = 0). Every model is written from its
// description in NUMERICS.md with exact integer arithmetic inside.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "dsa/formats.hpp"

namespace dsa::mma {

enum class Model : uint8_t {
  exact,                        // fp32 round-to-nearest of the exact sum (not an instruction)
  sm90_mma_sync_e4m3,           // Hopper mma.sync m16n8k32 e4m3 (ptxas emulation: 2 x HMMA.16816)
  sm90_wgmma_e4m3,              // Hopper wgmma m64nNk32 e4m3 (native QGMMA, 13 fraction bits)
  sm100_tcgen05_f8f6f4_e4m3,    // Blackwell tcgen05 kind::f8f6f4 k32 (25 bits, published model)
  cdna3_mfma_f32_16x16x32_fp8,  // MI300 v_mfma_f32_16x16x32_fp8_fp8 (e4m3fnuz; 2 groups of 16)
  cdna3_mfma_f32_32x32x16_fp8,  // MI300 v_mfma_f32_32x32x16_fp8_fp8 (e4m3fnuz; 1 group of 16)
};

std::string_view to_string(Model m);
Model parse_model(std::string_view name);  // throws InvalidInput("model", ...)
std::vector<Model> all_models();
int instruction_k(Model m);  // K of one instruction (32, or 16 for 32x32x16)
// The element format the instruction reads (e4m3fn for NVIDIA, e4m3fnuz for CDNA3).
Fp8Format operand_format(Model m);

// One instruction, one output: a and b hold instruction_k(m) codes.
// use_c = false is scale-d = 0 (C ignored).
float instruction(Model m, const uint8_t* a, const uint8_t* b, float c, bool use_c);

// A chain over K codes (K a multiple of instruction_k): from zero, each
// instruction's result is the next one's C.
float chain(Model m, const uint8_t* a, const uint8_t* b, int k_len);
// The same chain starting from C (the first instruction accumulates c).
float chain_from(Model m, const uint8_t* a, const uint8_t* b, int k_len, float c);

// Bulk per-head dot products of the indexer: out[n * heads + h] =
// chain(q + h * head_dim, k + n * head_dim, head_dim) for n < num_tokens, h < heads.
// The hot path of profile logits: vectorised, with a fast path where no bit
// can be lost. Codes are in operand_format(m) (e4m3fn for Model::exact; see
// exact_dots for e4m3fnuz).
void chain_dots(Model m, const uint8_t* q, int heads, const uint8_t* k, int64_t num_tokens, int head_dim,
                float* out);
// Model::exact's chain_dots for codes of either format: fp32 round-to-nearest
// of each exact dot product (one double GEMM, exact: NUMERICS "Exact sums").
void exact_dots(Fp8Format format, const uint8_t* q, int heads, const uint8_t* k, int64_t num_tokens, int head_dim,
                float* out);

// MXFP4 block-scaled dot products: q_packed [heads][D/2], q_scales [heads][D/32],
// k_packed [N][D/2], k_scales [N][D/32]; out[n * heads + h].
// sm100_tcgen05_f8f6f4_e4m3 runs tcgen05 kind::mxf4 with K = 64 per
// instruction, as DeepGEMM's SM100 FP4 indexer issues it (D a multiple of 64;
// the published block-scaled model: exact sums of 16 products, each a term at
// its scales' exponent, 35 fraction bits, rounded toward zero:
// docs/matrix-unit-models.md). Model::exact gives fp32 RN of the exact sum
// (D a multiple of 32). Other models throw InvalidInput("model").
void chain_dots_mxfp4(Model m, const uint8_t* q_packed, const uint8_t* q_scales, int heads,
                      const uint8_t* k_packed, const uint8_t* k_scales, int64_t num_tokens, int head_dim,
                      float* out);

}  // namespace dsa::mma
