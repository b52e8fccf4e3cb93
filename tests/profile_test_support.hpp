// Helpers of the profile tests: running one token through a profile, and an
// exact bf16 rounding written independently of the evaluator (wide integers).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "dsa/profile.hpp"

namespace dsa::test {

// The logit of one entry: dots[h], weights[h] and its K scale (null: none).
inline float reduce_one(const Profile& p, const std::vector<float>& dots, const std::vector<float>& weights,
                        const float* scale) {
  const ReductionProgram program(p, int(dots.size()));
  float out = 0.0f;
  program.run(dots.data(), weights.data(), scale, 1, &out);
  return out;
}

// x = m * 2^e exactly, |m| < 2^24.
struct Scaled {
  __int128 m;
  int e;
};

inline Scaled scaled_of(float x) {
  int e;
  const double f = std::frexp(double(x), &e);
  return {__int128(std::ldexp(f, 24)), e - 24};
}

// RN to 8 significant bits (ties to even), bf16's subnormal quantum 2^-133, of m * 2^e.
// No overflow handling: callers keep values in range.
inline float bf16_of_exact(__int128 m, int e) {
  if (m == 0) return 0.0f;
  const bool neg = m < 0;
  __int128 a = neg ? -m : m;
  int bits = 0;
  for (__int128 t = a; t; t >>= 1) ++bits;
  const int quantum = std::max(e + bits - 1, -126) - 7;
  if (quantum > e) {
    const int shift = quantum - e;
    const __int128 q = a >> shift, rem = a - (q << shift), half = __int128(1) << (shift - 1);
    a = q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
    e = quantum;
  }
  const double v = std::ldexp(double(a), e);
  return float(neg ? -v : v);
}

// RN_bf16(a * b + c) from the exact value; exponents must stay moderate (the
// aligned sum fits in 127 bits).
inline float bf16_fma_exact(float a, float b, float c) {
  const Scaled x = scaled_of(a), y = scaled_of(b), z = scaled_of(c);
  if (x.m == 0 || y.m == 0) return bf16_of_exact(z.m, z.e);
  if (z.m == 0) return bf16_of_exact(x.m * y.m, x.e + y.e);
  const int e = std::min(x.e + y.e, z.e);
  const auto pow2 = [](int k) { return __int128(1) << k; };  // (no shifts of negative values)
  return bf16_of_exact(x.m * y.m * pow2(x.e + y.e - e) + z.m * pow2(z.e - e), e);
}
inline float bf16_add_exact(float a, float b) { return bf16_fma_exact(a, 1.0f, b); }
inline float bf16_mul_exact(float a, float b) { return bf16_fma_exact(a, b, 0.0f); }

}  // namespace dsa::test
