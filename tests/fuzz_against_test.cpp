// Differential fuzzing (fuzz/differential.hpp): an implementation held to
// another on every drawn case, with no reference. Equal ones pass; a logit one
// ulp off, a tie-break change and a wrong choice are caught, shrunk, replayed;
// an external command is held to an in-process one.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "dsa/error.hpp"
#include "dsa/fuzz/campaign.hpp"
#include "dsa/fuzz/differential.hpp"
#include "dsa/fuzz/external.hpp"
#include "dsa/topk.hpp"
#include "fuzz_test_support.hpp"
#include "test_support.hpp"
#include "wrong_selections.hpp"

namespace dsa::fuzz {
namespace {

using test::HighestIndexFirst;
using test::maker;
using test::SwapsBelowTheCut;

// Every decode logit of row 0 at its column 0 one ulp up: the logits differ, the selections read their own.
class OneUlpUp : public ForwardingOps {
public:
  OneUlpUp() : ForwardingOps("one_ulp_up") {}
  void decode_logits(const DecodeProblem& p, const Profile& profile, Logits& out) override {
    inner().decode_logits(p, profile, out);
    if (visible_lens(p)[0] > 0) out.row(0)[0] = std::nextafter(out.row(0)[0], INFINITY);
  }
};

// No op at all: every call Unsupported.
class TakesNothing : public IndexerOps {
public:
  std::string name() const override { return "takes_nothing"; }
};

CampaignOptions against_reference(MakeImpl make_impl, std::vector<std::string> properties, int64_t cases) {
  CampaignOptions o;
  o.impl = "under test against reference";
  o.make_impl = std::move(make_impl);
  o.against = "reference";
  o.make_against = [] { return make_reference_ops(); };
  o.properties = std::move(properties);
  o.cases = cases;
  o.batch_cases = 10;
  o.shrink_seconds = 10;
  o.limits.max_rows = 8;
  o.limits.logits_elements = 1 << 14;
  o.limits.exact_products = 1 << 18;
  o.limits.model_products = 1 << 16;
  o.replay_prefix = "dsa-oracle fuzz --impl X --against reference";
  return o;
}

TEST(FuzzAgainst, AnImplementationHeldToItselfPassesEveryProperty) {
  const CampaignResult r = run_campaign(against_reference([] { return make_reference_ops(); }, {}, 10));
  ASSERT_EQ(r.properties.size(), 2u);  // the default set is the differential properties
  for (const auto& p : r.properties) {
    EXPECT_TRUE(p.applicable()) << p.property;
    EXPECT_FALSE(p.failure) << format_failure(*p.failure);
    EXPECT_EQ(p.passed, 10) << p.property;
  }
}

TEST(FuzzAgainst, ALogitOneUlpOffFailsAgainstLogitsAndIsShrunkAndReplayed) {
  const CampaignResult r = run_campaign(against_reference(maker<OneUlpUp>(), {property::kAgainstLogits}, 50));
  const PropertyResult& p = r.properties[0];
  ASSERT_TRUE(p.failure) << "one ulp off passed " << p.cases << " cases";
  EXPECT_TRUE(p.failure->reproduced());
  EXPECT_NE(p.failure->message.find("decode_logits: one_ulp_up (actual) versus reference (expected)"),
            std::string::npos)
      << p.failure->message;
  EXPECT_LE(case_size(p.failure->shrunk).rows, 2) << summary(p.failure->shrunk);
  const std::string json = to_json(p.failure->shrunk).dump();
  EXPECT_EQ(replay(maker<OneUlpUp>(), property::kAgainstLogits, json, [] { return make_reference_ops(); }).verdict,
            Verdict::fail);
  EXPECT_EQ(replay([] { return make_reference_ops(); }, property::kAgainstLogits, json,
                   [] { return make_reference_ops(); })
                .verdict,
            Verdict::pass);
  // Its selections read its own logits: they obey the rule and match wherever the logits do.
  const CampaignResult s = run_campaign(against_reference(maker<OneUlpUp>(), {property::kAgainstSelections}, 10));
  EXPECT_FALSE(s.properties[0].failure) << format_failure(*s.properties[0].failure);
}

TEST(FuzzAgainst, ATieBreakChangeFailsUnlessTiesAreLegal) {
  CampaignOptions o = against_reference(maker<HighestIndexFirst>(), {property::kAgainstSelections}, 30);
  const CampaignResult strict = run_campaign(o);
  ASSERT_TRUE(strict.properties[0].failure) << "a tie-break change passed " << strict.properties[0].cases << " cases";
  EXPECT_NE(strict.properties[0].failure->message.find("differ only among ties"), std::string::npos)
      << strict.properties[0].failure->message;
  o.against_options.ties_legal = true;
  const CampaignResult legal = run_campaign(o);
  EXPECT_FALSE(legal.properties[0].failure) << format_failure(*legal.properties[0].failure);
}

TEST(FuzzAgainst, AnotherValueChosenFailsOnTheRuleAndTheSets) {
  CampaignOptions o = against_reference(maker<SwapsBelowTheCut>(), {property::kAgainstSelections}, 60);
  o.against_options.ties_legal = true;  // the failure is not a tie-break
  const CampaignResult r = run_campaign(o);
  ASSERT_TRUE(r.properties[0].failure);
  const std::string& m = r.properties[0].failure->message;
  EXPECT_NE(m.find("topk_indices of swaps_below_the_cut breaks the oracle's rule"), std::string::npos) << m;
  EXPECT_NE(m.find("chose other values"), std::string::npos) << m;
}

TEST(FuzzAgainst, NothingSharedIsUnsupportedAndUnknownNamesAreBadInput) {
  const CampaignResult r = run_campaign(against_reference(maker<TakesNothing>(), {}, 5));
  for (const auto& p : r.properties) {
    EXPECT_FALSE(p.applicable()) << p.property;
    EXPECT_EQ(p.passed, 0);
  }
  EXPECT_THROW(run_campaign(against_reference([] { return make_reference_ops(); }, {property::kTopkAgrees}, 5)),
               InvalidInput);
  EXPECT_THROW(against_properties(nullptr), InvalidInput);
}

TEST(FuzzAgainst, AnExternalCommandIsHeldToAnInProcessImplementation) {
  bool numpy = false;
  for (const char* python : {"python3", "/usr/bin/python3"})
    if (!numpy && std::system((std::string(python) + " -c 'import numpy' > /dev/null 2>&1").c_str()) == 0) {
      numpy = true;
      const std::string command = std::string(python) + " " +
                                  shell_quote(test::source_dir() + "/python/examples/numpy_topk.py");
      CampaignOptions o =
          against_reference([command] { return make_external_ops(command); }, {property::kAgainstSelections}, 2);
      o.batch_cases = 2;
      const CampaignResult r = run_campaign(o);
      EXPECT_TRUE(r.properties[0].applicable());
      EXPECT_FALSE(r.properties[0].failure) << format_failure(*r.properties[0].failure);
      EXPECT_GT(r.properties[0].passed, 0);
    }
  if (!numpy) GTEST_SKIP() << "no python3 with numpy";
}

// The command line: a mutant held to the reference fails, and the replay line it prints carries --against.
TEST(FuzzAgainst, TheCommandLinePrintsAReplayLineThatHoldsToTheSameImplementation) {
  const std::string log =
      (std::filesystem::temp_directory_path() / ("dsa_against_" + std::to_string(::getpid()))).string();
  auto run = [&](const std::string& command) {
    const int status = std::system((command + " > '" + log + "' 2>&1").c_str());
    std::ifstream in(log);
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                          std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  };
  const auto [code, out] = run("'" + std::string(DSA_CLI_PATH) +
                               "' fuzz --mutant visible_len_off_by_one --against reference --property against_logits "
                               "--cases 30 --quiet");
  EXPECT_EQ(code, 1) << out;
  const size_t at = out.find("replay: ");
  ASSERT_NE(at, std::string::npos) << out;
  const std::string replay = out.substr(at + 8, out.find('\n', at) - at - 8);
  EXPECT_NE(replay.find("--against 'reference'"), std::string::npos) << replay;
  const auto [replay_code, replay_out] = run(replay);
  EXPECT_EQ(replay_code, 1) << replay_out;
  EXPECT_NE(replay_out.find("FAIL"), std::string::npos) << replay_out;
  std::remove(log.c_str());
}

}  // namespace
}  // namespace dsa::fuzz
