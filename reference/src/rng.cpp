#include "dsa/rng.hpp"

namespace dsa {
namespace {
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t state = seed;
  for (auto& word : s_) word = splitmix64(state);
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

int64_t Rng::uniform_int(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  const uint64_t span = uint64_t(hi) - uint64_t(lo) + 1;
  if (span == 0) return int64_t(next_u64());  // the whole 64-bit range
  // Rejection keeps every value equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % span;
  uint64_t x;
  do x = next_u64();
  while (x >= limit);
  return lo + int64_t(x % span);
}

double Rng::uniform01() { return double(next_u64() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  double sum = 0.0;
  for (int i = 0; i < 12; ++i) sum += uniform01();
  return sum - 6.0;
}

Rng Rng::split() { return Rng(next_u64() ^ 0xD1B54A32D192ED03ull); }

}  // namespace dsa
