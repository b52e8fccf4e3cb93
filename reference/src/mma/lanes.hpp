// Decoding fp8 vectors into a model's lanes and running its instructions on
// them (internal; shared by models.cpp, chain_dots.cpp and the dump checker).
#pragma once

#include <cstdint>
#include <vector>

#include "dsa/mma/models.hpp"
#include "kernels.hpp"

namespace dsa::mma::detail {

// A decoded vector of K codes in the model's lane order, with a NaN flag per
// instruction slice. Buffers are reused across decodes.
struct DecodedVector {
  std::vector<uint32_t> mag;
  std::vector<uint64_t> neg;
  std::vector<int16_t> exp;
  std::vector<uint8_t> slice_has_nan;
  Lanes lanes() const { return {mag.data(), neg.data(), exp.data()}; }
};

// Throws InvalidInput("k_len", ...) unless k_len is a positive multiple of instruction_k(m).
void require_k_len(Model m, int64_t k_len);

// Decodes codes[0, k_len) for model m (not Model::exact).
void decode_lanes(Model m, const uint8_t* codes, int k_len, DecodedVector& out,
                  ZeroOperands zeros = ZeroOperands::no_term);

// One instruction at slice `slice` (offset slice * instruction_k).
float run_instruction(Model m, const Lanes& a, const Lanes& b, int slice, float c, bool use_c);

// A chain over every slice: the first accumulates c when use_c, each later one
// the previous result. A NaN operand makes its instruction's result NaN.
float run_chain(Model m, const DecodedVector& a, const DecodedVector& b, int k_len, float c, bool use_c);

// Model::exact: fp32 round-to-nearest of the exact sum of k_len products (+ c when use_c).
float exact_dot(Fp8Format format, const uint8_t* a, const uint8_t* b, int64_t k_len, float c, bool use_c);

}  // namespace dsa::mma::detail
