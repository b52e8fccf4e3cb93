// The Python side with Debian's python3-numpy: the example loads committed
// golden cases, recomputes their top-k with numpy and checks both by the
// oracle's rule (python/test_load_golden_example.py). Skipped only without numpy.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "golden_test_support.hpp"

namespace dsa::golden_test {
namespace {

// A python3 that has numpy, or "" (DSA_PYTHON first, then python3, then Debian's).
TEST(GoldenPython, ExampleRecomputesTheTopkAndChecksTheRule) {
  const std::string py = python_with_numpy();
  if (py.empty()) GTEST_SKIP() << "no python3 with numpy (Debian: apt-get install python3-numpy)";
  TempDir dir;
  const std::string log = dir / "python.log";
  const std::string script = source_dir() + "/python/test_load_golden_example.py";
  const std::string command =
      "'" + py + "' '" + script + "' '" + source_dir() + "/data/golden' > '" + log + "' 2>&1";
  const int status = std::system(command.c_str());
  const auto output = read_bytes(log);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << std::string(output.begin(), output.end());
}

}  // namespace
}  // namespace dsa::golden_test
