// docs/regression.md, "I changed my kernel: is it still right?", run as a
// user runs it: the numpy kernel's baseline recorded, the same kernel passing
// it, the copy that reorders its head sum failing on the logits bits only,
// with a numerics report that shows by how much, and a wrong kernel failing.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "golden_test_support.hpp"

namespace dsa::golden_test {
namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(RegressionWalkthrough, TheReorderedNumpyKernelKeepsItsTopkAndTheReportShowsTheLogitsMoved) {
  const std::string python = python_with_numpy();
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy";
  TempDir dir;
  fs::create_directories(dir / "in");
  fs::copy_file(source_dir() + "/data/golden/exact/v32_decode/v32_decode_00_nn1.safetensors",
                dir / "in/v32_decode_00_nn1.safetensors");
  auto kernel = [&](const std::string& script) {
    return "'external:" + python + " " + source_dir() + "/python/examples/" + script + "'";
  };

  // 1. The old version's baseline.
  const CliRun recorded = run_cli("golden --record --impl " + kernel("numpy_indexer.py") + " --in '" + (dir / "in") +
                                      "' --out '" + (dir / "base") + "' --version v1");
  ASSERT_EQ(recorded.exit_code, 0) << recorded.output;
  EXPECT_NE(recorded.output.find("1 of 1 cases recorded"), std::string::npos) << recorded.output;
  EXPECT_EQ(read_json(dir / "base/baseline.json")["baseline"]["version"], "v1");

  // 2. The same version passes its baseline bit for bit.
  const CliRun same = run_cli("check --baseline '" + (dir / "base") + "' --impl " + kernel("numpy_indexer.py"));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("no numerics report"), std::string::npos) << same.output;

  // 3. The reordered head sum: other logits bits, the same top-k, and a numerics report.
  const CliRun reordered =
      run_cli("check --baseline '" + (dir / "base") + "' --impl " + kernel("numpy_indexer_reordered.py") +
                  " --json '" + (dir / "report.json") + "' --numerics-json '" + (dir / "numerics.json") + "' --svg '" +
                  (dir / "ulps.svg") + "'");
  EXPECT_EQ(reordered.exit_code, 1) << reordered.output;
  EXPECT_NE(reordered.output.find("the change moved the worst error from"), std::string::npos) << reordered.output;
  const nlohmann::json report = read_json(dir / "report.json");
  bool logits_failed = false, topk_same = false;
  for (const auto& check : report["checks"]) {
    if (check["check"] == "logits") logits_failed = !check["passed"].get<bool>();
    if (check["check"] == "baseline_selection")
      topk_same = check["passed"].get<bool>() && check["details"]["rows_values_differ_same_set"] == 2;
  }
  EXPECT_TRUE(logits_failed) << reordered.output;
  EXPECT_TRUE(topk_same) << reordered.output;
  const nlohmann::json numerics = read_json(dir / "numerics.json");
  const auto& base = numerics["overall"]["fp32"]["baseline"];
  const auto& now = numerics["overall"]["fp32"]["new"];
  EXPECT_EQ(base["entries"], now["entries"]);
  EXPECT_GT(now["ulps"]["max"].get<double>(), 0);
  EXPECT_NE(base["exact_bits"], now["exact_bits"]);  // the bits moved
  EXPECT_LT(now["rel"]["max"].get<double>(), 6e-8);  // within fp32's unit roundoff of the terms: no worse
  EXPECT_EQ(numerics["eps_needed"]["new"], 0.0);     // the top-k is exact on the exact values
  std::ifstream svg(dir / "ulps.svg");
  const std::string plot((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(plot.find("<svg"), std::string::npos);
  EXPECT_NE(plot.find("baseline"), std::string::npos);

  // 4. A kernel that fails every call fails (wrong in-process kernels: tests/baseline_test.cpp).
  const CliRun broken = run_cli("check --baseline '" + (dir / "base") + "' --impl 'external:sh -c \"exit 1\"'");
  EXPECT_EQ(broken.exit_code, 1) << broken.output;
}

}  // namespace
}  // namespace dsa::golden_test
