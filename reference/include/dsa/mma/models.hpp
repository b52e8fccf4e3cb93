// Bit-exact models of the matrix units' low-precision dot products (NUMERICS.md).
//
// A model computes what one instruction writes for one output element
// D[m][n] = sum_k A[m][k] * B[n][k] (+ C), and a K-long chain of them the way
// the kernels chain them (each instruction's D is the next one's C; the first
// starts from zero with scale-d = 0). Every model is written from its
// description in NUMERICS.md with exact integer arithmetic inside; each is one
// trait (reference/src/mma/models/), listed once in reference/src/mma/registry.hpp.
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
  sm100_tcgen05_f8f6f4_e4m3,    // Blackwell tcgen05 kind::f8f6f4 k32 e4m3 (25 bits, published model)
  sm100_tcgen05_mxf4_k64,       // Blackwell tcgen05 kind::mxf4 k64 (e2m1, ue8m0 per 32; published model)
  cdna3_mfma_f32_16x16x32_fp8,  // MI300 v_mfma_f32_16x16x32_fp8_fp8 (e4m3fnuz; 2 groups of 16)
  cdna3_mfma_f32_32x32x16_fp8,  // MI300 v_mfma_f32_32x32x16_fp8_fp8 (e4m3fnuz; 1 group of 16)
};

// What an instruction's A and B hold.
enum class Operands : uint8_t {
  e4m3fn,
  e4m3fnuz,
  mxfp4,  // e2m1 pairs (low nibble = even k) with one ue8m0 scale per 32 k
};

// How a K-long chain joins its instructions.
enum class Accumulation : uint8_t {
  chained,   // each instruction's D is the next one's C (the kernels' own chains)
  promoted,  // each instruction from zero (scale-d = 0), its D added to an fp32
             // accumulator by an ordinary round-to-nearest add (promotion on CUDA cores)
};

std::string_view to_string(Model m);
std::string_view to_string(Operands o);
std::string_view to_string(Accumulation a);
Model parse_model(std::string_view name);    // throws InvalidInput("model", ...)
std::vector<Model> all_models();             // exact first, then the registry's order
std::string_view instruction_name(Model m);  // the instruction in PTX / ISA words ("" for exact)
int instruction_k(Model m);                  // K of one instruction (32, 16 for 32x32x16, 64 for mxf4)
// What the instruction reads. Model::exact reads e4m3fn here (exact_dots takes
// e4m3fnuz too, and chain_dots_mxfp4 MXFP4).
Operands operands(Model m);
// The element format of an fp8 model (e4m3fn for NVIDIA, e4m3fnuz for CDNA3);
// throws InvalidInput("model", ...) for a block-scaled model.
Fp8Format operand_format(Model m);

// One instruction, one output: a and b hold instruction_k(m) fp8 codes.
// use_c = false is scale-d = 0 (C ignored). Throws InvalidInput("model") for a
// block-scaled model (instruction_mxfp4).
float instruction(Model m, const uint8_t* a, const uint8_t* b, float c, bool use_c);
// One block-scaled instruction: *_packed hold instruction_k(m) / 2 bytes of
// e2m1 pairs, *_scales instruction_k(m) / 32 ue8m0 codes.
float instruction_mxfp4(Model m, const uint8_t* a_packed, const uint8_t* a_scales, const uint8_t* b_packed,
                        const uint8_t* b_scales, float c, bool use_c);

// A chain over K codes (K a multiple of instruction_k): from zero, each
// instruction's result is the next one's C (or, promoted, added to the fp32
// accumulator). Model::exact is one rounding of the exact sum and takes only chained.
float chain(Model m, const uint8_t* a, const uint8_t* b, int k_len, Accumulation acc = Accumulation::chained);
// The same chain starting from C (the first instruction accumulates c; promoted:
// the accumulator starts at c).
float chain_from(Model m, const uint8_t* a, const uint8_t* b, int k_len, float c,
                 Accumulation acc = Accumulation::chained);

// Bulk per-head dot products of the indexer: out[n * heads + h] =
// chain(q + h * head_dim, k + n * head_dim, head_dim) for n < num_tokens, h < heads.
// The hot path of profile logits: vectorised, with a fast path where no bit
// can be lost. Codes are in operand_format(m) (e4m3fn for Model::exact; see
// exact_dots for e4m3fnuz).
void chain_dots(Model m, const uint8_t* q, int heads, const uint8_t* k, int64_t num_tokens, int head_dim, float* out,
                Accumulation acc = Accumulation::chained);
// Model::exact's chain_dots for codes of either format: fp32 round-to-nearest
// of each exact dot product (one double GEMM, exact: NUMERICS "Exact sums").
void exact_dots(Fp8Format format, const uint8_t* q, int heads, const uint8_t* k, int64_t num_tokens, int head_dim,
                float* out);

// MXFP4 block-scaled dot products: q_packed [heads][D/2], q_scales [heads][D/32],
// k_packed [N][D/2], k_scales [N][D/32]; out[n * heads + h]. A block-scaled
// model (sm100_tcgen05_mxf4_k64: D a multiple of 64) chains its instructions;
// Model::exact gives fp32 RN of the exact sum (D a multiple of 32). Other
// models throw InvalidInput("model").
void chain_dots_mxfp4(Model m, const uint8_t* q_packed, const uint8_t* q_scales, int heads, const uint8_t* k_packed,
                      const uint8_t* k_scales, int64_t num_tokens, int head_dim, float* out,
                      Accumulation acc = Accumulation::chained);

}  // namespace dsa::mma
