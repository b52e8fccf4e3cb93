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
#include <cmath>
#include <cstdint>
#include <limits>

namespace dsa::detail {

// RN_bf16 (ties to even, bf16 subnormals down to 2^-133, inf beyond the
// largest finite) of the exact value hi + lo, where hi = RN_double(hi + lo).
inline float bf16_round(double hi, double lo = 0.0) {
  if (std::isnan(hi)) return std::numeric_limits<float>::quiet_NaN();
  if (std::isinf(hi)) return float(hi);
  uint64_t bits = std::bit_cast<uint64_t>(hi);
  if (lo != 0.0 && (bits & 1) == 0) bits += (std::signbit(lo) == std::signbit(hi)) ? 1 : -1;  // toward lo, in magnitude
  const uint64_t sign = bits & 0x8000000000000000ull;
  const uint64_t magnitude = bits & ~0x8000000000000000ull;
  const double abs_value = std::bit_cast<double>(magnitude);
  double rounded;
  if (abs_value >= 0x1p-126) {
    // Keep 7 of the 52 fraction bits: add half an ulp minus one plus the kept lsb, then truncate.
    constexpr uint64_t kDropped = (uint64_t(1) << 45) - 1;
    const uint64_t r = (magnitude + (kDropped >> 1) + ((magnitude >> 45) & 1)) & ~kDropped;
    rounded = std::bit_cast<double>(r);
    if (rounded >= 0x1p128) rounded = std::numeric_limits<double>::infinity();
  } else {
    // The bf16 subnormal quantum is 2^-133; |hi| * 2^133 < 2^7 is exact, and
    // adding and removing 2^52 rounds it to an integer, ties to even.
    const double n = abs_value * 0x1p133;
    rounded = ((n + 0x1p52) - 0x1p52) * 0x1p-133;
  }
  return float(sign ? -rounded : rounded);
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
