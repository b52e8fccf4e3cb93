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
#ifdef DSA_WITH_GFX942
  std::vector<std::string> names;
  std::stringstream list(DSA_GFX942_CODE_OBJECTS);
  for (std::string name; std::getline(list, name, ',');)
    if (!name.empty()) names.push_back(name);
  return names;
#else
  return {};
#endif
}

inline std::string gfx942_file(const std::string& name) {
#ifdef DSA_WITH_GFX942
  const std::string path = std::string(DSA_GFX942_DIR) + "/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
#else
  (void)name;
  return {};
#endif
}

#ifdef DSA_WITH_GFX942
#define DSA_REQUIRE_GFX942() (void)0
#else
#define DSA_REQUIRE_GFX942() GTEST_SKIP() << "this build has no gfx942 code objects (DSA_GFX942 off or clang-19 missing)"
#endif

}  // namespace dsa::test
