// Shared helpers of the test suite.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dsa/problem.hpp"
#include "dsa/synthetic.hpp"

namespace dsa::test {

inline uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// The repository root (for data/ files).
inline std::string source_dir() {
  if (const char* env = std::getenv("DSA_SOURCE_DIR")) return env;
  return DSA_SOURCE_DIR;
}

// A small decode problem: B requests of the given token lengths.
inline DecodeProblem small_decode(std::vector<int32_t> seq_lens, int32_t next_n = 1, int32_t heads = 8,
                                  int32_t head_dim = 64, uint64_t seed = 7,
                                  ElementFormat element = ElementFormat::e4m3fn,
                                  CacheLayout layout = CacheLayout::block_flat, int32_t block_size = 16) {
  SyntheticDecodeConfig c;
  c.batch = int32_t(seq_lens.size());
  c.next_n = next_n;
  c.heads = heads;
  c.head_dim = head_dim;
  c.element = element;
  c.layout = layout;
  c.block_size = block_size;
  c.seq_lens = std::move(seq_lens);
  Rng rng(seed);
  return make_decode_problem(c, rng);
}

}  // namespace dsa::test
