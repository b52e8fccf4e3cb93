// `dsa-oracle golden` and `dsa-oracle check` end to end, as a user runs them:
// a fresh set, outputs that are right, differently tied, wrong, and files that
// are missing or corrupt (exit codes 0, 1, 2 and clear messages).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <numeric>

#include <nlohmann/json.hpp>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/dataset/manifest.hpp"
#include "golden_test_support.hpp"

namespace dsa::golden_test {
namespace {

// A kernel's outputs folder: per case, a file of the same name holding only
// the outputs: the reference's, as `edit` leaves them.
void write_outputs(const std::string& golden, const std::string& outputs,
                   const std::function<void(const std::string& file, dataset::GoldenCase&)>& edit = {}) {
  fs::create_directories(outputs);
  for (const auto& c : dataset::read_manifest(golden + "/manifest.json").cases) {
    dataset::GoldenCase g = dataset::read_golden_case(dataset::read_safetensors(golden + "/" + c.file));
    if (edit) edit(c.file, g);
    Safetensors out;
    dataset::put_outputs(out, g, g.expected);
    dataset::write_safetensors(outputs + "/" + c.file, out);
  }
}

class CheckCli : public ::testing::Test {
protected:
  void SetUp() override {
    const CliRun r = run_cli("golden --preset edge --out '" + golden_ + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_TRUE(fs::exists(golden_ + "/manifest.json"));
  }
  CliRun check(const std::string& outputs, const std::string& extra = {}) {
    return run_cli("check --golden '" + golden_ + "' --outputs '" + outputs + "' " + extra);
  }
  TempDir dir_;
  const std::string golden_ = dir_ / "golden";
};

TEST_F(CheckCli, RightOutputsPassWithAJsonReport) {
  write_outputs(golden_, dir_ / "right");
  const std::string json = dir_ / "report.json";
  const CliRun r = check(dir_ / "right", "--json '" + json + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("7 cases: 7 passed, 0 failed, 0 bad input"), std::string::npos) << r.output;
  std::ifstream in(json);
  const auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report.at("schema"), "dsa-oracle/report/1");
  EXPECT_EQ(report.at("passed"), true);
  EXPECT_EQ(report.at("cases").size(), 7u);
  EXPECT_EQ(report.at("exit_code"), 0);
}

// The top-k of every row with ties broken towards the highest index instead of the lowest.
TEST_F(CheckCli, DifferentlyTiedOutputsPass) {
  bool changed = false;
  write_outputs(golden_, dir_ / "tied", [&](const std::string&, dataset::GoldenCase& g) {
    if (g.settings.op != dataset::GoldenOp::decode_topk) return;
    const Logits& values = g.given_logits ? *g.given_logits : *g.expected.logits;
    TopkIndices& t = *g.expected.topk_indices;
    const auto lens = g.window_end();
    for (int64_t r = 0; r < t.rows; ++r) {
      std::vector<int32_t> order(static_cast<size_t>(lens[size_t(r)]));
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        const uint32_t ka = topk_order_key(values.at(r, a)), kb = topk_order_key(values.at(r, b));
        return ka != kb ? ka > kb : a > b;
      });
      for (int32_t s = 0; s < t.k; ++s) {
        const int32_t v = s < int32_t(order.size()) ? order[size_t(s)] : -1;
        changed |= std::find(t.row(r), t.row(r) + t.k, v) == t.row(r) + t.k;
        t.row(r)[s] = v;
      }
    }
  });
  ASSERT_TRUE(changed);
  const CliRun r = check(dir_ / "tied");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(CheckCli, WrongOutputsFail) {
  write_outputs(golden_, dir_ / "wrong", [](const std::string& file, dataset::GoldenCase& g) {
    if (file.find("ties") == std::string::npos) return;
    g.expected.topk_indices->row(0)[0] = g.expected.topk_indices->row(0)[1];  // a duplicate
  });
  const CliRun r = check(dir_ / "wrong");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("edge_01_ties.safetensors"), std::string::npos);
  EXPECT_NE(r.output.find("FAIL"), std::string::npos);
  EXPECT_NE(r.output.find("1 failed"), std::string::npos) << r.output;
}

TEST_F(CheckCli, CorruptGoldenFileIsBadInput) {
  write_outputs(golden_, dir_ / "right");
  const std::string victim = golden_ + "/edge_00_short_rows.safetensors";
  auto bytes = read_bytes(victim);
  bytes[bytes.size() / 2] ^= 0x01;  // one bit of the data, the header still parses
  write_bytes(victim, bytes);
  const CliRun r = check(dir_ / "right");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("does not match its manifest hash"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("6 passed"), std::string::npos) << r.output;  // the other cases are still judged
}

TEST_F(CheckCli, MissingOrTruncatedOutputsAreBadInput) {
  write_outputs(golden_, dir_ / "outs");
  fs::remove(dir_ / "outs/edge_02_neg_inf_rows.safetensors");
  const std::string truncated = dir_ / "outs/edge_03_padded.safetensors";
  auto bytes = read_bytes(truncated);
  bytes.resize(bytes.size() - 10);
  write_bytes(truncated, bytes);
  const CliRun r = check(dir_ / "outs");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("edge_02_neg_inf_rows.safetensors: missing: the kernel"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("edge_03_padded.safetensors"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("truncated"), std::string::npos) << r.output;
}

TEST_F(CheckCli, UsageAndMissingManifest) {
  EXPECT_EQ(run_cli("check --golden '" + (dir_ / "nowhere") + "' --outputs '" + golden_ + "'").exit_code, 2);
  const CliRun r = run_cli("golden --preset nope --out '" + (dir_ / "x") + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown preset 'nope'"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "x"));
  EXPECT_EQ(run_cli("check --golden '" + golden_ + "'").exit_code, 2);  // --outputs is required
}

}  // namespace
}  // namespace dsa::golden_test
