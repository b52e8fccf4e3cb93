// Shared helpers of the test suite.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "build_paths.hpp"
#include "dsa/problem.hpp"
#include "dsa/synthetic.hpp"
#include "test_values.hpp"

namespace dsa::test {

// The repository root (for data/ files).
inline std::string source_dir() {
  if (const char* env = std::getenv("DSA_SOURCE_DIR")) return env;
  return DSA_SOURCE_DIR;
}

// The data made outside the project: ../shared/data beside the checkout (the CMake cache variable
// DSA_SHARED_DATA), or the folder the environment variable DSA_SHARED_DATA names.
inline std::string shared_data_dir() {
  if (const char* env = std::getenv("DSA_SHARED_DATA")) return env;
  return DSA_SHARED_DATA_DIR;
}

// A python3 that imports numpy ($DSA_PYTHON first; Debian's python3-numpy may sit beside another python3
// on PATH), or "" when there is none.
inline std::string python_with_numpy() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("DSA_PYTHON")) candidates.push_back(env);
  candidates.insert(candidates.end(), {"python3", "/usr/bin/python3"});
  for (const std::string& py : candidates)
    if (std::system(("'" + py + "' -c 'import numpy' >/dev/null 2>&1").c_str()) == 0) return py;
  return "";
}

// In a test body: skip (never pass) when the shared data folder is absent, naming the path looked at.
#define DSA_SKIP_WITHOUT_SHARED_DATA()                                                                      \
  do {                                                                                                      \
    if (!std::filesystem::is_directory(::dsa::test::shared_data_dir()))                                     \
      GTEST_SKIP() << "the shared data folder " << ::dsa::test::shared_data_dir()                           \
                   << " is absent (set DSA_SHARED_DATA, or the CMake cache variable of that name)";         \
  } while (0)

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
