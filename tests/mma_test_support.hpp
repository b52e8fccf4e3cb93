// Hand-worked matrix-unit cases: operand vectors built from exact values.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "build_paths.hpp"
#include "cli_test_support.hpp"
#include "dsa/formats.hpp"
#include "dsa/mma/models.hpp"
#include "test_values.hpp"

namespace dsa::mma::testing {

inline float p2(int e) { return std::ldexp(1.0f, e); }
using ::dsa::test::kInf;
inline constexpr Model kMxf4 = Model::sm100_tcgen05_mxf4_k64;

// A file of BYTES under $TMPDIR, named by the process (ctest runs tests side by side) and NAME.
inline std::filesystem::path write_temp(const std::string& name, const std::vector<uint8_t>& bytes) {
  const auto p = std::filesystem::temp_directory_path() / ("dsa_mma_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return p;
}

// The exit code of `dsa-oracle mma-check ARGS` (shell text).
inline int mma_check(const std::string& args) { return ::dsa::test::run_cli("mma-check " + args).exit_code; }

// The bits of a float, for messages and for telling +0 from -0.
inline uint32_t bits(float v) { return std::bit_cast<uint32_t>(v); }

inline uint8_t code_of(Fp8Format f, float v) {
  const uint8_t c = float_to_fp8(f, v);
  if (fp8_to_float(f, c) != v) throw std::invalid_argument("not exactly representable: " + std::to_string(v));
  return c;
}

// a[k] * b[k] pairs on a zero background, K codes of the model's format.
class Dot {
 public:
  explicit Dot(Model m, int k_len = 0) : format_(operand_format(m)) {
    const int k = k_len ? k_len : instruction_k(m);
    a_.assign(size_t(k), 0);
    b_.assign(size_t(k), 0);
  }
  Dot& at(int k, float a, float b) {
    a_.at(size_t(k)) = code_of(format_, a);
    b_.at(size_t(k)) = code_of(format_, b);
    return *this;
  }
  Dot& code_at(int k, uint8_t a, uint8_t b) {
    a_.at(size_t(k)) = a;
    b_.at(size_t(k)) = b;
    return *this;
  }
  const uint8_t* a() const { return a_.data(); }
  const uint8_t* b() const { return b_.data(); }
  int size() const { return int(a_.size()); }

 private:
  Fp8Format format_;
  std::vector<uint8_t> a_, b_;
};

// The bulk path's value of a chain from zero over d.size() codes (one token, one head).
inline float bulk_chain(Model m, const uint8_t* a, const uint8_t* b, int k_len) {
  float out = 0;
  chain_dots(m, a, 1, b, 1, k_len, &out);
  return out;
}

// Bitwise equality (NaN equals NaN).
#define EXPECT_SAME_FLOAT(expected, got)                                                                              \
  do {                                                                                                                \
    const float e_ = (expected), g_ = (got);                                                                          \
    if (std::isnan(e_))                                                                                               \
      EXPECT_TRUE(std::isnan(g_)) << "got " << g_;                                                                    \
    else                                                                                                              \
      EXPECT_EQ(::dsa::mma::testing::bits(e_), ::dsa::mma::testing::bits(g_)) << "expected " << e_ << ", got " << g_; \
  } while (0)

}  // namespace dsa::mma::testing
