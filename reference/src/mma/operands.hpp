// Decoded operands of the matrix-unit models (internal): fp8 codes, and the
// e2m1 elements and ue8m0 scales of MXFP4.
//
// Every e4m3fn / e4m3fnuz value is an integer multiple of 2^-10, so a code
// decodes to a magnitude in fixed point (|v| * 2^10, at most 448 * 2^10 <
// 2^19), a sign mask and the alignment exponent the model uses for it. The
// product of two operands is then the exact integer mag_a * mag_b in units of
// 2^-20 (< 2^38) with alignment exponent exp_a + exp_b: align-truncate-sum
// runs on integers only.
#pragma once

#include <cstdint>

#include "dsa/formats.hpp"

namespace dsa::mma::detail {

inline constexpr int kOperandShift = 10;                 // |v| * 2^10 is an integer
inline constexpr int kProductShift = 2 * kOperandShift;  // products in units of 2^-20

// Exponent of a zero operand when zero products are no term: the sum with any
// other operand's exponent stays far below every real term, so it never wins
// the maximum (NUMERICS "Zero operands").
inline constexpr int16_t kNoTermExponent = -4096;
// Below this, a maximum exponent means "no term at all".
inline constexpr int kNoTermBelow = -1000;

// How the alignment exponent of an e4m3 subnormal is taken.
enum class Subnormals : uint8_t {
  as_is,       // 0.fff x 2^emin: exponent emin (wgmma, tcgen05, CDNA3 and the published models)
  normalised,  // floor(log2|v|): the f16 exponent after the mma.sync emulation's unpack
};

// How a zero operand enters the maximum exponent.
enum class ZeroOperands : uint8_t {
  no_term,        // no term (H200 wgmma, checked on hardware; the project's choice elsewhere)
  exponent_m126,  // MMA-Sim: a zero operand has exponent -126 and its product takes part in the max
};

struct OperandTable {
  uint32_t mag[256];
  uint64_t neg[256];  // ~0 for a negative value, 0 otherwise
  int16_t exp[256];   // alignment exponent
  bool nan[256];
};

const OperandTable& operand_table(Fp8Format format, Subnormals subnormals, ZeroOperands zeros = ZeroOperands::no_term);

// An fp32 value as sig * 2^exp (sig < 2^24) with its alignment exponent
// floor(log2|v|) (-126 for subnormals, as the published models take it).
struct Fp32Parts {
  bool neg = false;
  uint32_t sig = 0;
  int exp = 0;
  int align = 0;
};
Fp32Parts split_fp32(float v);  // v finite

// MXFP4: an e2m1 nibble as a signed value in units of 1/2 ({0, 1, 2, 3, 4, 6, 8, 12});
// its products are integers in units of 1/4. One ue8m0 scale per 32 elements.
inline constexpr int8_t kE2m1Halves[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
inline constexpr int kMxfp4Block = 32;
inline constexpr int kUe8m0Bias = 127;
inline constexpr uint8_t kUe8m0Nan = 0xff;

}  // namespace dsa::mma::detail
