// An exact fixed-point accumulator over [2^-512, 2^512) (internal): the exact
// tier's sums that do not fit a machine word (a product sum plus an arbitrary
// fp32 C, block-scaled MXFP4 terms spread over hundreds of binades).
#pragma once

#include <array>
#include <cstdint>

#include "rounding.hpp"

namespace dsa::mma::detail {

class ExactSum {
 public:
  static constexpr int kMinExp = -512;
  static constexpr int kLimbs = 16;  // 1024 bits, two's complement

  // Adds sig * 2^exp; requires kMinExp <= exp and exp + 64 < kMinExp + 64 * kLimbs - 1.
  void add(int64_t sig, int exp);
  bool is_zero() const;
  // The sum rounded to fp32 (or `precision` bits, see round_scaled).
  float round(Rounding mode, int precision = 24) const;

 private:
  std::array<uint64_t, kLimbs> limbs_{};
};

}  // namespace dsa::mma::detail
