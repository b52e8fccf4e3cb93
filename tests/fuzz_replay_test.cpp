// Replaying a failure that depends on the run: the campaign's replays of the
// shrunk case, the replay line it prints, `replay` with attempts, and the
// mutant table's marks.
#include <gtest/gtest.h>

#include <climits>
#include <memory>
#include <set>

#include "dsa/error.hpp"
#include "fuzz_test_support.hpp"

namespace dsa::fuzz {
namespace {

// The reference, except that the instances whose number (0-based, in order of
// creation) is in `faulty` put a position no row has at the head of every top-k.
struct SometimesWrongTopk : test::PatchedReference {
  bool wrong = false;
  void topk(const Logits& l, const RowBounds& b, TopkIndices& out) override {
    inner().topk(l, b, out);
    if (wrong && out.rows > 0 && out.k > 0) out.row(0)[0] = INT32_MAX;
  }
};

std::function<std::unique_ptr<IndexerOps>()> sometimes_wrong(std::set<int> faulty) {
  auto made = std::make_shared<int>(0);
  return [made, faulty] {
    auto ops = std::make_unique<SometimesWrongTopk>();
    ops->wrong = faulty.count((*made)++) > 0;
    return ops;
  };
}

// Instance 0 is the campaign's probe of the ops the implementation takes, instance 1
// runs the first case; with 1 in `faulty` that case fails and nothing is shrunk (no
// shrink step makes an instance), so the replays are instances 2, 3, ...
Failure first_failure(std::set<int> faulty) {
  CampaignOptions o;
  o.impl = "test";
  o.make_impl = sometimes_wrong(std::move(faulty));
  o.properties = {property::kTopkAgrees};
  o.cases = 20;
  o.shrink_steps = 0;
  o.replay_prefix = "dsa-oracle fuzz --impl test";
  const CampaignResult r = run_campaign(o);
  if (!r.properties.at(0).failure) throw std::runtime_error("the wrong top-k was not found");
  return *r.properties[0].failure;
}

TEST(FuzzReplay, AFailureThatFailsAgainAtOnceIsPlain) {
  const Failure f = first_failure({1, 2});
  EXPECT_EQ(f.cases, 1);
  EXPECT_TRUE(f.reproduced());
  EXPECT_EQ(f.replay_attempts, 1);
  EXPECT_EQ(f.replay.find("--replay-attempts"), std::string::npos) << f.replay;
  const std::string report = format_failure(f);
  EXPECT_EQ(report.find("run-dependent"), std::string::npos) << report;
  EXPECT_EQ(report.find("WARNING"), std::string::npos) << report;
}

TEST(FuzzReplay, AFailureThatFailsAgainLaterIsRunDependent) {
  const Failure f = first_failure({1, 4});  // replays 1 and 2 (instances 2, 3) pass, replay 3 fails
  EXPECT_TRUE(f.reproduced());
  EXPECT_EQ(f.replay_attempts, 3);
  EXPECT_NE(f.replay.find("--replay-attempts 16 --replay"), std::string::npos) << f.replay;
  const std::string report = format_failure(f);
  EXPECT_NE(report.find("run-dependent: failed again only on replay 3 of up to 16"), std::string::npos) << report;
}

TEST(FuzzReplay, AFailureThatNeverFailsAgainIsWarnedAbout) {
  const Failure f = first_failure({1});
  EXPECT_FALSE(f.reproduced());
  EXPECT_EQ(f.replay_attempts, 0);
  EXPECT_NE(f.replay.find("--replay-attempts 16"), std::string::npos) << f.replay;
  const std::string report = format_failure(f);
  EXPECT_NE(report.find("WARNING: did not fail again in 16 replays"), std::string::npos) << report;
}

TEST(FuzzReplay, ReplayTriesUntilAnAttemptFails) {
  const Failure f = first_failure({1, 2});
  const std::string json = to_json(f.shrunk).dump();
  const ReplayOutcome found = replay(sometimes_wrong({2}), property::kTopkAgrees, json, {}, {}, 16);
  EXPECT_EQ(found.verdict, Verdict::fail);
  EXPECT_EQ(found.attempts, 3);
  EXPECT_EQ(found.failed_on, 3);
  EXPECT_FALSE(found.message.empty());

  const ReplayOutcome missed = replay(sometimes_wrong({2}), property::kTopkAgrees, json, {}, {}, 2);
  EXPECT_EQ(missed.verdict, Verdict::pass);
  EXPECT_EQ(missed.attempts, 2);
  EXPECT_EQ(missed.failed_on, 0);

  const ReplayOutcome once = replay(sometimes_wrong({0}), property::kTopkAgrees, json);
  EXPECT_EQ(once.verdict, Verdict::fail);
  EXPECT_EQ(once.failed_on, 1);

  EXPECT_THROW(replay(sometimes_wrong({}), property::kTopkAgrees, json, {}, {}, 0), InvalidInput);
}

TEST(FuzzReplay, TheMutantTableMarksKillsThatDidNotFailAgainAtOnce) {
  std::vector<MutantResult> results;
  for (const auto& [name, attempts] : {std::pair{"at_once", 1}, std::pair{"later", 5}, std::pair{"never", 0}}) {
    MutantResult r;
    r.name = name;
    r.killed_by = property::kTopkAgrees;
    r.killed = true;
    r.failure = first_failure({1, 2});
    r.failure->replay_attempts = attempts;
    results.push_back(r);
  }
  const std::string table = format_mutant_table(results);
  EXPECT_NE(table.find("yes (~)"), std::string::npos) << table;
  EXPECT_NE(table.find("yes (!)"), std::string::npos) << table;
  EXPECT_NE(table.find("(~) later: its shrunk case failed again only on replay 5"), std::string::npos) << table;
  EXPECT_NE(table.find("(!) never: its shrunk case did not fail again in 16 replays"), std::string::npos) << table;
  EXPECT_EQ(table.find("at_once: its shrunk case"), std::string::npos) << table;
  EXPECT_NE(table.find("every mutant killed"), std::string::npos) << table;
}

}  // namespace
}  // namespace dsa::fuzz
