// The probes' random source: splitmix64, so that a seed names the same dump on
// every machine and compiler (std:: distributions differ between libraries).
#pragma once

#include <cstdint>

namespace probes {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n > 0 (multiply-shift: no modulo bias worth the name at these n).
  uint32_t below(uint32_t n) { return uint32_t(((next() >> 32) * uint64_t(n)) >> 32); }
  // True with probability p.
  bool chance(double p) { return double(next() >> 11) * 0x1.0p-53 < p; }

 private:
  uint64_t state_;
};

}  // namespace probes
