// Helpers of the golden-set and check tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/dataset/presets.hpp"
#include "dsa/dataset/safetensors.hpp"
#include "dsa/error.hpp"
#include "cli_test_support.hpp"
#include "test_support.hpp"

namespace dsa::golden_test {

namespace fs = std::filesystem;
using dataset::Safetensors;

// A fresh folder under $TMPDIR, removed with its content (ctest runs tests in parallel).
class TempDir {
public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "dsa_golden_XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

private:
  fs::path path_;
};

using ::dsa::test::python_with_numpy;
using ::dsa::test::source_dir;

// A committed golden set (data/golden/SET).
inline std::string committed(const std::string& set) {
  return (fs::path(source_dir()) / "data" / "golden" / set).string();
}

using ::dsa::test::CliRun;
using ::dsa::test::run_cli;

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// Case i of a preset (small, seed 1), with its expected outputs.
inline dataset::GoldenCase preset_case(const std::string& preset, const std::string& profile, size_t index,
                                       uint64_t seed = 1) {
  return dataset::plan_preset({preset, seed, profile, "small"}).at(index).build();
}

// A copy of `file` with tensor `name` left out, or replaced by (dtype, shape, bytes).
inline Safetensors without(const Safetensors& file, const std::string& name) {
  Safetensors copy;
  copy.metadata = file.metadata;
  for (const auto& [n, t] : file.tensors())
    if (n != name) copy.put(n, t.dtype, t.shape, t.bytes);
  return copy;
}
inline Safetensors replaced(const Safetensors& file, const std::string& name, dataset::Dtype dtype, dataset::Shape shape,
                            std::vector<uint8_t> bytes) {
  Safetensors copy = without(file, name);
  copy.put(name, dtype, std::move(shape), std::move(bytes));
  return copy;
}
// The same tensor with its bytes changed by `edit`.
inline Safetensors edited(const Safetensors& file, const std::string& name,
                          const std::function<void(std::vector<uint8_t>&)>& edit) {
  const auto& t = file.at(name);
  std::vector<uint8_t> bytes = t.bytes;
  edit(bytes);
  return replaced(file, name, t.dtype, t.shape, std::move(bytes));
}

// Expects `f` to throw InvalidInput whose argument is `argument` and whose
// message holds `words`.
template <class F>
void expect_invalid(F&& f, const std::string& argument, const std::string& words = {}) {
  try {
    f();
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), argument) << e.what();
    if (!words.empty()) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    return;
  }
  ADD_FAILURE() << "no InvalidInput (expected one naming '" << argument << "')";
}

}  // namespace dsa::golden_test
