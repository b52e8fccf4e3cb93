// The external implementation: any command that reads a case from a
// safetensors file and writes its outputs. The numpy top-k "kernel" of
// python/examples passes; its off-by-one twin is caught and shrunk.
#include <gtest/gtest.h>

#include <cstdlib>

#include "dsa/error.hpp"
#include "dsa/fuzz/campaign.hpp"
#include "dsa/fuzz/external.hpp"
#include "dsa/fuzz/implementations.hpp"
#include "fuzz_test_support.hpp"
#include "test_support.hpp"

namespace dsa::fuzz {
namespace {

// A Python 3 with numpy (Debian's python3-numpy may sit beside another python3 on PATH).
std::string python_with_numpy() {
  for (const char* python : {"python3", "/usr/bin/python3"})
    if (std::system((std::string(python) + " -c 'import numpy' > /dev/null 2>&1").c_str()) == 0) return python;
  return {};
}

std::string example(const std::string& script) {
  return shell_quote(test::source_dir() + "/python/examples/" + script);
}

CampaignOptions external_campaign(const std::string& command, int64_t cases) {
  CampaignOptions o;
  o.impl = "external:" + command;
  o.make_impl = [command] { return make_external_ops(command); };
  o.properties = {property::kTopkAgrees};
  o.cases = cases;
  o.batch_cases = 3;
  o.shrink_seconds = 60;
  o.replay_prefix = "dsa-oracle fuzz --impl " + shell_quote(o.impl);
  return o;
}

TEST(FuzzExternal, TheNumpyTopkPassesAndItsOffByOneTwinIsCaughtAndShrunk) {
  const std::string python = python_with_numpy();
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy";

  const CampaignResult right = run_campaign(external_campaign(python + " " + example("numpy_topk.py"), 6));
  ASSERT_EQ(right.properties.size(), 1u);
  EXPECT_FALSE(right.properties[0].failure) << format_failure(*right.properties[0].failure);
  EXPECT_EQ(right.properties[0].passed, 6);

  const CampaignResult wrong = run_campaign(external_campaign(python + " " + example("numpy_topk_wrong.py"), 60));
  const PropertyResult& p = wrong.properties[0];
  ASSERT_TRUE(p.failure) << "the off-by-one script passed " << p.cases << " cases";
  const CaseSize size = case_size(p.failure->shrunk);
  EXPECT_LE(size.rows, 2) << summary(p.failure->shrunk);
  EXPECT_LE(size.max_visible, 64) << summary(p.failure->shrunk);
  EXPECT_TRUE(p.failure->reproduced);
  EXPECT_NE(p.failure->replay.find("numpy_topk_wrong.py"), std::string::npos);
}

TEST(FuzzExternal, ExitStatusThreeIsUnsupportedAndNeverAPass) {
  // `sh -c CMD` takes the appended --in/--out as its own $0 and $1.
  const CampaignResult r = run_campaign(external_campaign("sh -c 'exit 3'", 3));
  EXPECT_FALSE(r.properties[0].applicable());
  EXPECT_EQ(r.properties[0].passed, 0);
  EXPECT_FALSE(r.properties[0].failure);
}

TEST(FuzzExternal, ACommandThatFailsOrWritesNothingIsAFailure) {
  auto broken = make_external_ops("sh -c 'echo kernel exploded >&2; exit 1'");
  TopkCase c;
  c.k = 2;
  c.rows = {{0, 5, ValueKind::normal, 1}};
  Outcome o = check_case(find_property(property::kTopkAgrees), *broken, c);
  EXPECT_EQ(o.verdict, Verdict::fail);
  EXPECT_NE(o.message.find("kernel exploded"), std::string::npos) << o.message;

  auto silent = make_external_ops("true");
  o = check_case(find_property(property::kTopkAgrees), *silent, c);
  EXPECT_EQ(o.verdict, Verdict::fail);
  EXPECT_NE(o.message.find("wrote no"), std::string::npos) << o.message;

  EXPECT_THROW(make_external_ops("  "), InvalidInput);
  EXPECT_THROW(make_implementation("external:"), InvalidInput);
}

}  // namespace
}  // namespace dsa::fuzz
