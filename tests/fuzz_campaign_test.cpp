// Campaigns: shards split the seed space without overlap, the same seed gives
// the same campaign, JSON lines merge into a summary, and the command line
// prints a replay line that reproduces its failure.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "build_paths.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/mutants.hpp"
#include "fuzz_test_support.hpp"

namespace dsa::fuzz {
namespace {

// Records every row set the top-k is asked about (a fingerprint per call).
struct Spy : IndexerOps {
  static std::vector<std::string>& calls() {
    static std::vector<std::string> seen;
    return seen;
  }
  std::unique_ptr<IndexerOps> ref = make_reference_ops();
  std::string name() const override { return "spy"; }
  void topk(const Logits& l, const RowBounds& b, TopkIndices& out) override {
    std::string print = std::to_string(l.rows) + "x" + std::to_string(l.width) + "k" + std::to_string(out.k);
    for (int64_t r = 0; r < l.rows; ++r) print += ":" + std::to_string(b.end[size_t(r)] - b.start[size_t(r)]);
    uint64_t h = 1469598103934665603ull;
    for (float v : l.values) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      h = (h ^ bits) * 1099511628211ull;
    }
    calls().push_back(print + "#" + std::to_string(h));
    ref->topk(l, b, out);
  }
};

std::multiset<std::string> run_spied(int32_t shard, int32_t shards, int64_t cases, uint64_t seed = 7) {
  Spy::calls().clear();
  CampaignOptions o;
  o.impl = "spy";
  o.make_impl = test::maker<Spy>();
  o.properties = {property::kTopkAgrees};
  o.seed = seed;
  o.shard = shard;
  o.shards = shards;
  o.cases = cases;
  o.batch_cases = 5;
  EXPECT_TRUE(run_campaign(o).passed());
  return {Spy::calls().begin(), Spy::calls().end()};
}

TEST(FuzzCampaign, ShardsSplitTheSeedSpaceWithoutOverlap) {
  const auto whole = run_spied(0, 1, 30);
  const auto first = run_spied(0, 3, 10), second = run_spied(1, 3, 10), third = run_spied(2, 3, 10);
  // Each run also asks one probe case; the three shards hold the whole run's cases exactly.
  std::multiset<std::string> together = first;
  together.insert(second.begin(), second.end());
  together.insert(third.begin(), third.end());
  EXPECT_EQ(whole.size() + 2, together.size());
  for (const auto& call : whole) EXPECT_GE(together.count(call), whole.count(call));
  std::set<std::string> overlap;
  for (const auto& call : first)
    if (second.count(call)) overlap.insert(call);
  EXPECT_LE(overlap.size(), 1u);  // the probe only
}

TEST(FuzzCampaign, TheSameSeedGivesTheSameCampaign) {
  EXPECT_EQ(run_spied(1, 2, 15, 3), run_spied(1, 2, 15, 3));
  EXPECT_NE(run_spied(1, 2, 15, 3), run_spied(1, 2, 15, 4));
}

TEST(FuzzCampaign, BadShardsAndMissingBudgetsAreRejected) {
  CampaignOptions o;
  o.make_impl = [] { return make_reference_ops(); };
  o.cases = 1;
  o.shard = 2;
  o.shards = 2;
  EXPECT_THROW(run_campaign(o), InvalidInput);
  o.shard = 0;
  o.cases = 0;
  EXPECT_THROW(run_campaign(o), InvalidInput);
  o.cases = 1;
  o.properties = {"no_such_property"};
  EXPECT_THROW(run_campaign(o), InvalidInput);
}

TEST(FuzzCampaign, JsonLinesMergeIntoASummary) {
  std::vector<nlohmann::json> lines;
  for (int32_t shard = 0; shard < 2; ++shard) {
    CampaignOptions o;
    o.impl = "reference";
    o.make_impl = [] { return make_reference_ops(); };
    o.properties = {property::kTopkAgrees, property::kCandidateSelectAgrees};
    o.shard = shard;
    o.shards = 2;
    o.cases = 5;
    o.record = [&](const nlohmann::json& j) { lines.push_back(j); };
    run_campaign(o);
  }
  // Per shard: a line per property, then the campaign's line.
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[2]["type"], "campaign");
  EXPECT_EQ(lines[2]["cases"], 10);
  EXPECT_EQ(lines[2]["checked_nothing"], false);
  MergeResult m = merge_records(lines);
  EXPECT_TRUE(m.passed);
  ASSERT_EQ(m.summary.size(), 2u);
  for (const auto& s : m.summary) {
    EXPECT_EQ(s["cases"], 10);
    EXPECT_EQ(s["passed"], 10);
    EXPECT_EQ(s["shards"], "2/2");
  }
  EXPECT_NE(format_merge(m).find("no failure"), std::string::npos);

  // One shard's failure fails the merge and keeps its replay line.
  lines.push_back({{"schema", kFuzzSchema}, {"type", "failure"}, {"impl", "reference"}, {"property", "topk_agrees"},
                   {"replay", "dsa-oracle fuzz --replay X"}});
  m = merge_records(lines);
  EXPECT_FALSE(m.passed);
  EXPECT_NE(format_merge(m).find("dsa-oracle fuzz --replay X"), std::string::npos);
  lines.push_back({{"schema", "something else"}});
  EXPECT_THROW(merge_records(lines), InvalidInput);
}

// ---- The command line, end to end.

struct CommandRun {
  int code = -1;
  std::string out;
};

CommandRun run(const std::string& command) {
  CommandRun r;
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string cli() { return shell_quote(DSA_CLI_PATH); }

TEST(FuzzCli, AFailurePrintsAReplayLineThatReproducesIt) {
  const Mutant* chosen = nullptr;
  for (const Mutant& m : mutant_catalog())  // one that runs here (not a CUDA mutant without a GPU)
    if (m.killed_by == property::kTopkAgrees && m.runs_here()) chosen = &m;
  ASSERT_NE(chosen, nullptr);
  const CommandRun found = run(cli() + " fuzz --quiet --mutant " + chosen->name + " --property topk_agrees --cases 200");
  EXPECT_EQ(found.code, 1) << found.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(found.out, m, std::regex("replay: (.*)"))) << found.out;
  const CommandRun replayed = run(m[1].str());
  EXPECT_EQ(replayed.code, 1) << replayed.out;
  EXPECT_NE(replayed.out.find("FAIL"), std::string::npos);
  // The same line against the reference passes: the case is legal, the mutant is wrong.
  std::string on_reference = std::regex_replace(m[1].str(), std::regex("--mutant '[^']*'"), "--impl reference");
  EXPECT_EQ(run(on_reference).code, 0) << on_reference;
}

TEST(FuzzCli, ShardsWriteJsonLinesThatMerge) {
  const auto dir = std::filesystem::temp_directory_path() / ("dsa_fuzz_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string files;
  for (int shard = 0; shard < 2; ++shard) {
    const std::string file = (dir / ("shard" + std::to_string(shard) + ".jsonl")).string();
    const CommandRun r = run(cli() + " fuzz --quiet --impl cpu_radix_topk --property topk_agrees,determinism --cases 4" +
                      " --shard " + std::to_string(shard) + "/2 --out " + file);
    EXPECT_EQ(r.code, 0) << r.out;
    files += " " + file;
  }
  const CommandRun merged = run(cli() + " fuzz-merge" + files + " --out " + (dir / "summary.json").string());
  EXPECT_EQ(merged.code, 0) << merged.out;
  EXPECT_NE(merged.out.find("cpu_radix_topk"), std::string::npos);
  std::ifstream in(dir / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(in);
  EXPECT_EQ(summary["passed"], true);
  for (const auto& p : summary["properties"]) EXPECT_EQ(p["cases"], 8);
  EXPECT_EQ(run(cli() + " fuzz --shard 2/2 --cases 1").code, 2);
  EXPECT_EQ(run(cli() + " fuzz --impl no_such_impl --cases 1").code, 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dsa::fuzz
