// Exactly rounded bf16 arithmetic for the reduction evaluator (internal).
//
// A bf16 step must be the single rounding of the exact result: __hfma2 rounds
// w * r + c once, and rounding first to double (or fp32) and then to bf16 can
// land on a false tie. The operands are bf16 values (8 significant bits), so
// a product is exact in double; a sum is carried as the exact pair hi + lo
// (TwoSum), and hi is nudged to the odd neighbour toward lo before the final
// rounding ("round to odd": with 53 >= 8 + 2 bits, RN_bf16 of the odd value
// equals RN_bf16 of the exact one).
#pragma once

#include <bit>
#include <cstdint>

namespace dsa::detail {

// RN_bf16 (ties to even, bf16 subnormals down to 2^-133, inf beyond the
// largest finite) of the exact value hi + lo, where hi = RN_double(hi + lo).
// Branch-free so that the evaluator's loops vectorise.
inline float bf16_round(double hi, double lo = 0.0) {
  constexpr uint64_t kSign = 0x8000000000000000ull, kInfBits = 0x7FF0000000000000ull;
  constexpr uint64_t kDropped = (uint64_t(1) << 45) - 1;  // 52 - 7 fraction bits go
  constexpr uint64_t kMinNormalBits = 0x3810000000000000ull, kTwoTo128Bits = 0x47F0000000000000ull;  // 2^-126, 2^128
  const uint64_t bits = std::bit_cast<uint64_t>(hi);
  const uint64_t sign = bits & kSign;
  uint64_t magnitude = bits & ~kSign;
  // Round to odd: an inexact even hi moves one ulp toward lo (in magnitude).
  // (Integer masks, no bools: they keep the loop vectorisable.)
  const uint64_t lo_bits = std::bit_cast<uint64_t>(lo);
  const uint64_t lo_nonzero = (0 - (lo_bits & ~kSign)) >> 63;
  const uint64_t finite = (magnitude - kInfBits) >> 63;
  const uint64_t nudge = lo_nonzero & finite & (~magnitude & 1);
  const uint64_t up = ((lo_bits ^ bits) >> 63) ^ 1;         // lo has hi's sign
  magnitude += (0 - nudge) & ((up << 1) - 1);              // +1 or -1 (mod 2^64), or nothing
  const double abs_value = std::bit_cast<double>(magnitude);
  // Normal results: add half an ulp minus one plus the kept lsb, then truncate.
  const uint64_t normal = (magnitude + (kDropped >> 1) + ((magnitude >> 45) & 1)) & ~kDropped;
  // Subnormal results: the quantum is 2^-133; |hi| * 2^133 < 2^7 is exact, and
  // adding and removing 2^52 rounds it to an integer, ties to even. NaN takes
  // this path too (the integer path could carry its payload into the sign).
  const uint64_t subnormal = std::bit_cast<uint64_t>(((abs_value * 0x1p133 + 0x1p52) - 0x1p52) * 0x1p-133);
  const uint64_t is_normal = (((magnitude - kMinNormalBits) >> 63) ^ 1) & ((magnitude - kInfBits - 1) >> 63);
  uint64_t rounded = (normal & (0 - is_normal)) | (subnormal & (is_normal - 1));
  // Beyond bf16's range (2^128 and up, NaN excluded): infinity.
  const uint64_t overflow = (((rounded - kTwoTo128Bits) >> 63) ^ 1) & ((rounded - kInfBits - 1) >> 63);
  rounded = (kInfBits & (0 - overflow)) | (rounded & (overflow - 1));
  const float f = float(std::bit_cast<double>(rounded));
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | uint32_t(sign >> 32));
}

// RN_bf16(a + b) for doubles a, b whose sum does not overflow (exact TwoSum).
inline float bf16_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double err = (a - (s - bb)) + (b - bb);
  return bf16_round(s, err);
}

// RN_bf16 of an fp32 value (one rounding; fp32 -> double is exact).
inline float bf16_of(float x) { return bf16_round(double(x)); }

}  // namespace dsa::detail
