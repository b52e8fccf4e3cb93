// `check --impl`: an implementation run in process on a golden set
// (dataset/run_case.hpp), stage by stage through IndexerOps into poisoned
// buffers, and judged; what it does not take is "not run", never a pass.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <stdexcept>

#include "dsa/dataset/check.hpp"
#include "dsa/dataset/run_case.hpp"
#include "dsa/optimized/implementations.hpp"
#include "dsa/oracle/poison.hpp"
#include "golden_test_support.hpp"

namespace dsa::golden_test {
namespace {

using dataset::CaseStatus;

Contract taking(std::set<Op> ops, std::string profile = {}) {
  Contract c;
  c.ops = std::move(ops);
  c.profile = std::move(profile);
  return c;
}

dataset::SetCheck check_with(IndexerOps& impl, const Contract& contract, const std::string& set) {
  return dataset::check_implementation(committed(set), impl, contract);
}

TEST(CheckImpl, TopkTwinRunsThePrefillTopkWithRowStartsOnTheGoldenLogits) {
  const optimized::Implementation& twin = optimized::find_implementation("cpu_radix_topk");
  auto impl = twin.make();
  const dataset::SetCheck r = check_with(*impl, twin.contract, "exact/prefill");
  ASSERT_EQ(r.cases.size(), 1u);
  const auto& c = r.cases[0];
  EXPECT_EQ(c.status, CaseStatus::passed) << r.report().to_text();
  EXPECT_EQ(c.ops_run, std::vector<std::string>{"topk"});
  EXPECT_EQ(c.from_golden, std::vector<std::string>{"logits"});  // it takes no logits op
  EXPECT_EQ(c.checked, std::vector<std::string>{"topk_indices"});
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(CheckImpl, ATakesNothingImplementationChecksNothingAndDoesNotPass) {
  ForwardingOps impl("forwarding");
  const dataset::SetCheck r = check_with(impl, taking({}), "exact/edge");
  EXPECT_EQ(r.count(CaseStatus::not_run), r.cases.size());
  EXPECT_TRUE(r.checked_nothing());
  EXPECT_EQ(r.exit_code(), 1);
  for (const auto& c : r.cases) EXPECT_NE(c.error.find("not an op of forwarding"), std::string::npos) << c.error;
  EXPECT_EQ(r.to_json()["not_run"], r.cases.size());
}

TEST(CheckImpl, AClaimedProfileKeepsItsLogitsOffOtherProfilesCases) {
  // It claims deepgemm_sm90: on the exact set its logits op is not run, and
  // its top-k reads the golden logits.
  ForwardingOps impl("forwarding");
  const dataset::SetCheck r = check_with(impl, taking({Op::decode_logits, Op::topk}, "deepgemm_sm90"), "exact/v32_decode");
  EXPECT_EQ(r.exit_code(), 0) << r.report().to_text();
  for (const auto& c : r.cases) {
    EXPECT_EQ(c.ops_run, std::vector<std::string>{"topk"}) << c.file;
    EXPECT_EQ(c.from_golden, std::vector<std::string>{"logits"}) << c.file;
  }
  const dataset::SetCheck own = check_with(impl, taking({Op::decode_logits, Op::topk}, "deepgemm_sm90"), "deepgemm_sm90/v32_decode");
  EXPECT_EQ(own.exit_code(), 0) << own.report().to_text();
  for (const auto& c : own.cases) EXPECT_EQ(c.ops_run, (std::vector<std::string>{"decode_logits", "topk"})) << c.file;
}

TEST(CheckImpl, AClaimCoversTheProfilesOfTheSameArithmetic) {
  // dsa_sm90 is deepgemm_sm90's datapath (same_arithmetic): a kernel claiming it, as cuda_sm90 does, is judged
  // on DeepGEMM's sets; one claiming the promoted dsa_sm90_accurate is not.
  ForwardingOps impl("forwarding");
  const dataset::SetCheck twin =
      check_with(impl, taking({Op::decode_logits, Op::topk}, "dsa_sm90"), "deepgemm_sm90/v32_decode");
  EXPECT_EQ(twin.exit_code(), 0) << twin.report().to_text();
  ASSERT_FALSE(twin.cases.empty());
  for (const auto& c : twin.cases) {
    EXPECT_EQ(c.status, CaseStatus::passed) << c.file;
    EXPECT_EQ(c.ops_run, (std::vector<std::string>{"decode_logits", "topk"})) << c.file;
  }
  const dataset::SetCheck other =
      check_with(impl, taking({Op::decode_logits, Op::topk}, "dsa_sm90_accurate"), "deepgemm_sm90/v32_decode");
  for (const auto& c : other.cases) {
    EXPECT_EQ(c.ops_run, std::vector<std::string>{"topk"}) << c.file;
    EXPECT_EQ(c.from_golden, std::vector<std::string>{"logits"}) << c.file;
  }
}

// Breaks the top-k: the last slot of every row is left as the harness poisoned it.
class LeavesTheLastSlot : public ForwardingOps {
public:
  LeavesTheLastSlot() : ForwardingOps("leaves_the_last_slot") {}
  void topk(const Logits& l, const RowBounds& b, TopkIndices& out) override {
    TopkIndices mine = out;
    inner().topk(l, b, mine);
    for (int64_t r = 0; r < out.rows; ++r) std::copy(mine.row(r), mine.row(r) + out.k - 1, out.row(r));
  }
};

TEST(CheckImpl, AnUnwrittenEntryFailsTheCase) {
  LeavesTheLastSlot impl;
  const dataset::SetCheck r = check_with(impl, taking({Op::decode_logits, Op::topk}), "exact/v32_decode");
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(r.count(CaseStatus::failed), r.cases.size());
  EXPECT_NE(r.report().to_text().find("topk_indices"), std::string::npos);
}

class Throws : public ForwardingOps {
public:
  explicit Throws(bool unsupported) : ForwardingOps("throws"), unsupported_(unsupported) {}
  void topk(const Logits&, const RowBounds&, TopkIndices&) override {
    if (unsupported_) throw Unsupported("throws: not this call");
    throw std::runtime_error("device fault (emulated)");
  }

private:
  bool unsupported_;
};

TEST(CheckImpl, AThrowIsAFailureAndUnsupportedIsNotRun) {
  Throws faulting(false);
  const dataset::SetCheck failed = check_with(faulting, taking({Op::topk}), "exact/v32_decode");
  EXPECT_EQ(failed.exit_code(), 1);
  for (const auto& c : failed.cases) {
    EXPECT_EQ(c.status, CaseStatus::failed);
    EXPECT_NE(c.error.find("device fault (emulated)"), std::string::npos) << c.error;
  }
  Throws refusing(true);
  const dataset::SetCheck refused = check_with(refusing, taking({Op::topk}), "exact/v32_decode");
  EXPECT_EQ(refused.count(CaseStatus::not_run), refused.cases.size());
  EXPECT_EQ(refused.exit_code(), 1);
  EXPECT_NE(refused.cases[0].error.find("not this call"), std::string::npos) << refused.cases[0].error;
}

TEST(CheckImpl, OutsideTheContractIsNotRun) {
  const optimized::Implementation& twin = optimized::find_implementation("cpu_radix_topk");
  auto impl = twin.make();
  Contract narrow = twin.contract;
  narrow.k_values = {7};
  const dataset::SetCheck r = check_with(*impl, narrow, "exact/v32_decode");
  EXPECT_EQ(r.count(CaseStatus::not_run), r.cases.size());
  EXPECT_NE(r.cases[0].error.find("outside the contract: k = 2048 (takes 7)"), std::string::npos) << r.cases[0].error;
  narrow = twin.contract;
  narrow.row_starts = false;
  EXPECT_EQ(check_with(*impl, narrow, "exact/prefill").count(CaseStatus::not_run), 1u);
}

TEST(CheckImpl, FusedLaunchTakesTheCompactCase) {
  ForwardingOps impl("forwarding");
  const dataset::SetCheck r = check_with(impl, taking({Op::candidate_logits_top_k}), "exact/v41_c4a");
  bool compact_seen = false;
  for (const auto& c : r.cases) {
    if (c.op != "compact_candidate_logits") {
      EXPECT_EQ(c.status, CaseStatus::not_run) << c.file;
      continue;
    }
    compact_seen = true;
    EXPECT_EQ(c.status, CaseStatus::passed) << r.report().to_text();
    EXPECT_EQ(c.ops_run, std::vector<std::string>{"candidate_logits_top_k"});
    EXPECT_EQ(c.checked, (std::vector<std::string>{"topk_indices", "compact_logits"}));
  }
  EXPECT_TRUE(compact_seen);
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(CheckImpl, SparseStagesOfTheSm100Case) {
  ForwardingOps impl("forwarding");
  const dataset::SetCheck r =
      check_with(impl, taking({Op::expand_candidate_blocks, Op::sparse_logits, Op::sparse_topk}), "deepgemm_sm100_bf16/mxfp4");
  for (const auto& c : r.cases)
    if (c.op == "sparse_sm100") {
      EXPECT_EQ(c.status, CaseStatus::passed) << r.report().to_text();
      EXPECT_EQ(c.ops_run, (std::vector<std::string>{"expand_candidate_blocks", "sparse_logits", "sparse_topk"}));
    }
  // Only the top-k over `end`: the sparse blocks and logits come from the golden file.
  const dataset::SetCheck topk_only = check_with(impl, taking({Op::sparse_topk}), "deepgemm_sm100_bf16/mxfp4");
  for (const auto& c : topk_only.cases)
    if (c.op == "sparse_sm100") {
      EXPECT_EQ(c.status, CaseStatus::passed) << topk_only.report().to_text();
      EXPECT_EQ(c.from_golden, (std::vector<std::string>{"sparse_block_ids", "sparse_logits"}));
    }
}

TEST(CheckImplCli, ExitCodesAndStatements) {
  TempDir dir;
  const std::string prefill = "--golden '" + committed("exact/prefill") + "'";
  CliRun r = run_cli("check --impl reference " + prefill);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 passed, 0 failed, 0 bad input, 0 not run"), std::string::npos) << r.output;

  r = run_cli("check --impl cpu_compact_candidates " + prefill);  // takes neither prefill stage
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("not run"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing was checked"), std::string::npos) << r.output;

  EXPECT_EQ(run_cli("check " + prefill).exit_code, 2);  // neither --impl nor --outputs
  r = run_cli("check --impl reference --outputs '" + dir.path().string() + "' " + prefill);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_cli("check --impl no_such_impl " + prefill);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("known: reference"), std::string::npos) << r.output;
}

// `run --impl`: the step's ops an implementation takes, judged against the brute force.
TEST(RunImplCli, RunsTheOpsItTakesAndRefusesToPassWithNone) {
  TempDir dir;
  CliRun r = run_cli("run --impl cpu_persistent_topk --rows 2 --context 3000");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cpu_persistent_topk (topk)"), std::string::npos) << r.output;
  r = run_cli("run --impl cpu_compact_candidates --rows 1 --context 3000");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("nothing checked"), std::string::npos) << r.output;
}

// `run` on defaults: after the main job, every other implementation of the table on the same steps,
// one line per op it takes, judged against the reference; one that cannot run here is skipped with why.
TEST(RunImplCli, EveryImplementationOfTheTableGetsALine) {
  TempDir dir;
  const CliRun r = run_cli("run --rows 1 --context 3000");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto line_of = [&](const std::string& name) {
    const size_t at = r.output.find("\n" + name + " ");
    return at == std::string::npos ? std::string() : r.output.substr(at + 1, r.output.find('\n', at + 1) - at - 1);
  };
  for (const optimized::Implementation& entry : optimized::implementations()) {
    if (entry.name == "reference") continue;
    const std::string line = line_of(entry.name);
    ASSERT_FALSE(line.empty()) << entry.name << " has no line in:\n" << r.output;
    const bool takes_a_run_op = entry.takes(Op::decode_logits) || entry.takes(Op::topk);
    if (!takes_a_run_op) {
      EXPECT_NE(line.find("not run: takes neither"), std::string::npos) << line;
    } else if (!entry.available()) {
      EXPECT_NE(line.find("skipped: runs on"), std::string::npos) << line;
    }
  }
  const std::string radix = line_of("cpu_radix_topk");
  EXPECT_NE(radix.find("topk"), std::string::npos) << radix;
  EXPECT_NE(radix.find("pass ("), std::string::npos) << radix;
  EXPECT_NE(line_of("cpu_compact_candidates").find("not run"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dsa::golden_test
