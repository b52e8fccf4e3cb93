// Decoding fp8 vectors into a model's lanes and running its instructions on
// them (internal; shared by models.cpp, chain_dots.cpp and the dump checker).
#pragma once

#include <cstdint>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/mma/models.hpp"
#include "kernels.hpp"

namespace dsa::mma::detail {

// A decoded vector of K codes in the model's lane order, with a NaN flag per
// instruction slice. Buffers are reused across decodes.
struct DecodedVector {
  std::vector<uint64_t> mag;
  std::vector<uint64_t> neg;
  std::vector<int16_t> exp;
  std::vector<uint8_t> slice_has_nan;
  Lanes lanes() const { return {mag.data(), neg.data(), exp.data()}; }
};

// Throws InvalidInput("k_len", ...) unless k_len is a positive multiple of instruction_k(m).
void require_k_len(Model m, int64_t k_len);

// Where the model's lane order puts code k (kernels.hpp): the sets its datapath
// sums apart become contiguous runs.
int lane_of(Model m, int k);
// The operand decoding of model m (its format and subnormal convention).
const OperandTable& model_operands(Model m, ZeroOperands zeros = ZeroOperands::no_term);

// Decodes codes[0, k_len) for model m (not Model::exact).
void decode_lanes(Model m, const uint8_t* codes, int k_len, DecodedVector& out,
                  ZeroOperands zeros = ZeroOperands::no_term);

// One instruction at slice `slice` (offset slice * instruction_k); nan_operand:
// a NaN code among its operands.
float run_instruction(Model m, const Lanes& a, const Lanes& b, bool nan_operand, int slice, float c, bool use_c);
// The NaN the model's unit writes (NVIDIA 0x7FFFFFFF, CDNA3 the IEEE default).
float model_nan(Model m);

// Calls f(Policy{}) with the compile-time policy of model m (kernels.hpp).
template <class F>
decltype(auto) with_policy(Model m, F&& f) {
  switch (m) {
    case Model::sm90_mma_sync_e4m3:
      return f(MmaSyncE4m3{});
    case Model::sm90_wgmma_e4m3:
      return f(WgmmaE4m3{});
    case Model::sm100_tcgen05_f8f6f4_e4m3:
      return f(Tcgen05F8f6f4{});
    case Model::cdna3_mfma_f32_16x16x32_fp8:
      return f(Cdna3Mfma16x16x32{});
    case Model::cdna3_mfma_f32_32x32x16_fp8:
      return f(Cdna3Mfma32x32x16{});
    case Model::exact:
      break;
  }
  throw InvalidInput("model", "exact has no instruction lanes");
}

// A chain over every slice: the first accumulates c when use_c, each later one
// the previous result.
float run_chain(Model m, const DecodedVector& a, const DecodedVector& b, int k_len, float c, bool use_c);

// Model::exact: fp32 round-to-nearest of the exact sum of k_len products (+ c when use_c).
float exact_dot(Fp8Format format, const uint8_t* a, const uint8_t* b, int64_t k_len, float c, bool use_c);

}  // namespace dsa::mma::detail
