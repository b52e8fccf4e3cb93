// Decoding operands into a model's lanes and running its chains on them
// (internal; shared by models.cpp, chain_dots.cpp, mxfp4.cpp and the dump
// checker). Written against the traits (trait.hpp): nothing here names a model.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/mma/models.hpp"
#include "kernels.hpp"
#include "registry.hpp"

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

inline Fp8Format fp8_format_of(Operands o) { return o == Operands::e4m3fnuz ? Fp8Format::e4m3fnuz : Fp8Format::e4m3fn; }

// The operand decoding of an fp8 model (its format and subnormal convention).
template <ModelTrait T>
const OperandTable& trait_operands(ZeroOperands zeros = ZeroOperands::no_term) {
  static_assert(T::kOperands != Operands::mxfp4);
  return operand_table(fp8_format_of(T::kOperands), T::kSubnormals, zeros);
}

// Decodes k_len codes for T: fp8 codes, or packed e2m1 pairs with one ue8m0
// scale per 32 (`scales`, MXFP4 only). A NaN code or a NaN scale (0xff) marks
// its instruction's slice.
template <ModelTrait T>
void decode_lanes(const uint8_t* codes, const uint8_t* scales, int k_len, DecodedVector& out,
                  ZeroOperands zeros = ZeroOperands::no_term) {
  out.mag.resize(size_t(k_len));
  out.neg.resize(size_t(k_len));
  out.exp.resize(size_t(k_len));
  out.slice_has_nan.assign(size_t(k_len / T::kK), 0);
  if constexpr (T::kOperands == Operands::mxfp4) {
    for (int k = 0; k < k_len; ++k) {
      const uint8_t nibble = k % 2 ? codes[k / 2] >> 4 : codes[k / 2] & 0xf;
      const int halves = kE2m1Halves[nibble];
      const size_t lane = size_t(T::lane_of(k));
      out.mag[lane] = uint64_t(halves < 0 ? -halves : halves);
      out.neg[lane] = halves < 0 ? ~uint64_t{0} : 0;
      out.exp[lane] = int16_t(int(scales[k / kMxfp4Block]) - kUe8m0Bias);
    }
    for (int blk = 0; blk < k_len / kMxfp4Block; ++blk)
      out.slice_has_nan[size_t(blk * kMxfp4Block / T::kK)] |= scales[blk] == kUe8m0Nan;
  } else {
    const OperandTable& t = trait_operands<T>(zeros);
    for (int k = 0; k < k_len; ++k) {
      const uint8_t code = codes[k];
      const size_t lane = size_t(T::lane_of(k));
      out.mag[lane] = t.mag[code];
      out.neg[lane] = t.neg[code];
      out.exp[lane] = t.exp[code];
      out.slice_has_nan[size_t(k / T::kK)] |= t.nan[code];
    }
  }
}

// One instruction with its NaN: a NaN operand makes the result NaN, and every
// NaN result has the unit's bits.
template <ModelTrait T>
float step_with_nan(const Lanes& a, const Lanes& b, bool nan_operand, int offset, float c, bool use_c) {
  const float nan = nan_of(T::kNan);
  const float d = nan_operand ? nan : T::Datapath::step(a, b, offset, c, use_c);
  return std::isnan(d) ? nan : d;
}

// A chain over `slices` instructions: chained, the first accumulates c when
// use_c and each later one the result before it; promoted, each starts from
// zero and is added to an fp32 accumulator that starts at c (use_c) or at the first result.
template <ModelTrait T>
float chain_lanes(const DecodedVector& a, const DecodedVector& b, int slices, float c, bool use_c,
                  Accumulation accumulation) {
  const Lanes la = a.lanes(), lb = b.lanes();
  if (accumulation == Accumulation::chained) {
    float acc = c;
    for (int j = 0; j < slices; ++j) {
      acc = step_with_nan<T>(la, lb, a.slice_has_nan[size_t(j)] | b.slice_has_nan[size_t(j)], j * T::kK, acc, use_c);
      use_c = true;
    }
    return acc;
  }
  float acc = use_c ? c : 0.0f;
  for (int j = 0; j < slices; ++j) {
    const float d =
        step_with_nan<T>(la, lb, a.slice_has_nan[size_t(j)] | b.slice_has_nan[size_t(j)], j * T::kK, 0.0f, false);
    acc = j == 0 && !use_c ? d : acc + d;
  }
  return std::isnan(acc) ? nan_of(T::kNan) : acc;
}

// Every (token, head) pair's chain, one pair at a time: the bulk path of a model
// without a SIMD kernel. Codes (and, for MXFP4, scales) as chain_dots /
// chain_dots_mxfp4 take them; out[n * heads + h].
template <ModelTrait T>
void pair_dots(const uint8_t* q, const uint8_t* q_scales, int heads, const uint8_t* k, const uint8_t* k_scales,
               int64_t num_tokens, int head_dim, float* out, Accumulation accumulation) {
  const bool mx = T::kOperands == Operands::mxfp4;
  const size_t row_bytes = mx ? size_t(head_dim / 2) : size_t(head_dim), row_scales = size_t(head_dim / kMxfp4Block);
  std::vector<DecodedVector> qd(static_cast<size_t>(heads));
  for (int h = 0; h < heads; ++h)
    decode_lanes<T>(q + size_t(h) * row_bytes, mx ? q_scales + size_t(h) * row_scales : nullptr, head_dim,
                    qd[size_t(h)]);
  DecodedVector kd;
  const int slices = head_dim / T::kK;
  for (int64_t n = 0; n < num_tokens; ++n) {
    decode_lanes<T>(k + size_t(n) * row_bytes, mx ? k_scales + size_t(n) * row_scales : nullptr, head_dim, kd);
    for (int h = 0; h < heads; ++h)
      out[size_t(n) * heads + h] = chain_lanes<T>(qd[size_t(h)], kd, slices, 0.0f, false, accumulation);
  }
}

// Model::exact: fp32 round-to-nearest of the exact sum of k_len products (+ c when use_c).
float exact_dot(Fp8Format format, const uint8_t* a, const uint8_t* b, int64_t k_len, float c, bool use_c);

}  // namespace dsa::mma::detail
