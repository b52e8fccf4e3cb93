// The project's own random numbers: the same seed gives the same numbers on
// every machine and compiler (the standard library's distributions do not).
// Generator: xoshiro256** seeded by splitmix64. Distributions use only exactly
// rounded IEEE operations (+ - * / sqrt), never libm's log/sin/cos.
#pragma once

#include <cstdint>

namespace dsa {

class Rng {
public:
  explicit Rng(uint64_t seed);
  uint64_t next_u64();
  uint32_t next_u32() { return uint32_t(next_u64() >> 32); }
  // Uniform integer in [lo, hi] (inclusive), unbiased (rejection).
  int64_t uniform_int(int64_t lo, int64_t hi);
  // Uniform in [0, 1) with 53 random bits.
  double uniform01();
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  // Approximately standard normal: Irwin-Hall sum of 12 uniforms minus 6
  // (exact IEEE arithmetic, so it is reproducible everywhere; tails end at +-6).
  double normal();
  bool bernoulli(double p) { return uniform01() < p; }
  // An independent stream derived from this one (for per-row or per-case seeds).
  Rng split();

private:
  uint64_t s_[4];
};

}  // namespace dsa
