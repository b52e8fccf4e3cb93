// Issue 11 §2, the campaign: --keep-going collects distinct failures grouped
// by shrunk case and message, the time budget is shared so that a slow
// property does not starve the others, and a run that checked nothing says so.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "dsa/fuzz/campaign.hpp"
#include "fuzz_test_support.hpp"

namespace dsa::fuzz {
namespace {

// Two bugs of the top-k at once, which shrinking cannot turn into each other:
// under an odd k a row shorter than k gets no -1 tail, and under an even k a
// row longer than k drops its best entry. (Bugs whose cases nest, say "short
// rows" and "long rows", shrink to one signature: a shorter row is a smaller case.)
class TwoTopkBugs : public ForwardingOps {
public:
  TwoTopkBugs() : ForwardingOps("two top-k bugs") {}
  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    ForwardingOps::topk(logits, bounds, out);
    for (int64_t r = 0; r < out.rows; ++r) {
      const int64_t len = bounds.end[size_t(r)] - bounds.start[size_t(r)];
      int32_t* row = out.row(r);
      if (out.k % 2 == 1 && len < out.k)
        for (int32_t s = int32_t(len); s < out.k; ++s) row[s] = 0;
      else if (out.k % 2 == 0 && len > out.k)
        row[0] = int32_t(len - 1) == row[0] ? int32_t(len - 2) : int32_t(len - 1);
    }
  }
};

CampaignOptions two_bugs(bool keep_going) {
  CampaignOptions o;
  o.impl = "two top-k bugs";
  o.make_impl = [] { return std::make_unique<TwoTopkBugs>(); };
  o.properties = {property::kTopkAgrees};
  o.cases = test::scaled_count(120);
  o.batch_cases = 10;
  o.keep_going = keep_going;
  o.shrink_seconds = 5;
  o.limits.logits_elements = 1 << 14;
  return o;
}

TEST(FuzzCampaignHardening, KeepGoingCollectsTheDistinctFailures) {
  const CampaignResult first = run_campaign(two_bugs(false));
  ASSERT_TRUE(first.properties[0].failure);
  EXPECT_EQ(first.properties[0].failure_count(), 1);

  const CampaignResult all = run_campaign(two_bugs(true));
  const PropertyResult& p = all.properties[0];
  ASSERT_TRUE(p.failure);
  ASSERT_GE(p.failure_count(), 2) << format_failure(*p.failure);
  EXPECT_NE(p.failure->signature, p.later_failures[0].signature);
  int64_t occurrences = p.failure->occurrences;
  for (const Failure& f : p.later_failures) occurrences += f.occurrences;
  EXPECT_GE(occurrences, p.failure_count());
  EXPECT_NE(format_campaign(two_bugs(true), all).find("distinct"), std::string::npos);
}

// A property whose every case takes 30 ms, and quick ones: with a 1.5 s budget
// every property still gets cases.
class SlowDecode : public ForwardingOps {
public:
  SlowDecode() : ForwardingOps("slow decode logits") {}
  void decode_logits(const DecodeProblem& p, const Profile& f, Logits& out) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    ForwardingOps::decode_logits(p, f, out);
  }
};

TEST(FuzzCampaignHardening, TheTimeBudgetIsSharedSoEveryPropertyGetsCases) {
  CampaignOptions o;
  o.impl = "slow decode logits";
  o.make_impl = [] { return std::make_unique<SlowDecode>(); };
  o.properties = {property::kLogitsAgree, property::kTopkAgrees, property::kCandidateSelectAgrees,
                  property::kColumnsPastLengthIgnored};
  o.seconds = 1.5;
  o.batch_cases = 100;  // one batch would eat the whole budget without the shared deadline
  o.limits.max_rows = 4;
  o.limits.logits_elements = 1 << 12;
  o.limits.exact_products = 1 << 14;
  const CampaignResult r = run_campaign(o);
  for (const auto& p : r.properties) {
    EXPECT_GT(p.passed, 0) << p.property;
    EXPECT_FALSE(p.failure) << format_failure(*p.failure);
  }
  EXPECT_TRUE(r.unchecked().empty());
  EXPECT_FALSE(r.checked_nothing());
  EXPECT_LT(r.seconds, 6.0);
}

TEST(FuzzCampaignHardening, ARunThatCheckedNothingIsNamed) {
  class NothingTaken : public IndexerOps {
  public:
    std::string name() const override { return "nothing taken"; }
  };
  CampaignOptions o;
  o.impl = "nothing taken";
  o.make_impl = [] { return std::make_unique<NothingTaken>(); };
  o.cases = 2;
  const CampaignResult r = run_campaign(o);
  EXPECT_TRUE(r.checked_nothing());
  EXPECT_TRUE(r.passed());  // nothing failed, and yet:
  EXPECT_NE(format_campaign(o, r).find("NOTHING WAS CHECKED"), std::string::npos);
  const nlohmann::json record = campaign_record(o, r);
  EXPECT_EQ(record["checked_nothing"], true);
}

}  // namespace
}  // namespace dsa::fuzz
