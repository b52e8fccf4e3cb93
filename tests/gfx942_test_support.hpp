// The gfx942 code objects of this build (build/gfx942) for the tests that read
// them. Without the gfx942 toolchain the build has none and those tests skip.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "build_paths.hpp"

namespace dsa::test {

inline std::vector<std::string> gfx942_code_objects() {
  std::vector<std::string> names;
  std::stringstream list(build_gfx942_code_objects());
  for (std::string name; std::getline(list, name, ',');)
    if (!name.empty()) names.push_back(name);
  return names;
}

inline bool gfx942_built() { return !gfx942_code_objects().empty(); }

inline std::string gfx942_file(const std::string& name) {
  if (!gfx942_built()) return {};
  const std::string path = std::string(DSA_GFX942_DIR) + "/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A statement in a test body: skips the test where the build has no gfx942 code objects.
#define DSA_REQUIRE_GFX942()                   \
  if (!::dsa::test::gfx942_built()) {          \
    GTEST_SKIP() << "this build has no gfx942 code objects (DSA_GFX942 off or clang-19 missing)"; \
  }                                            \
  static_assert(true)

}  // namespace dsa::test
