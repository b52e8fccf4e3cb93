// The fuzzer's properties on the ops a whole step adds around the logits and
// the top-k: each catches an implementation of that op alone with a bug it is
// meant to see, and gives "does not apply" to one that lacks the op.
#include <gtest/gtest.h>

#include <cmath>

#include "dsa/fuzz/mutants.hpp"
#include "dsa/oracle/poison.hpp"
#include "fuzz_test_support.hpp"

namespace dsa::fuzz {
namespace {

using test::fuzz_one;
using test::maker;

// Only prefill logits: the determinism and every-entry-written properties must reach it through prefill cases.
class PrefillOnly : public IndexerOps {
public:
  std::string name() const override { return "prefill only"; }
  void prefill_logits(const PrefillProblem& p, const Profile& f, Logits& out) override { ref_->prefill_logits(p, f, out); }

protected:
  std::unique_ptr<IndexerOps> ref_ = make_reference_ops();
};

struct PrefillLeavesKs : PrefillOnly {  // the entry at ks of every row is never written
  void prefill_logits(const PrefillProblem& p, const Profile& f, Logits& out) override {
    const Logits before = out;
    ref_->prefill_logits(p, f, out);
    for (int64_t r = 0; r < out.rows; ++r)
      if (p.ke[size_t(r)] > p.ks[size_t(r)]) out.row(r)[p.ks[size_t(r)]] = before.row(r)[p.ks[size_t(r)]];
  }
};

struct PrefillRunDependent : PrefillOnly {  // every second call, row 0's first entry one ulp up
  int calls = 0;
  void prefill_logits(const PrefillProblem& p, const Profile& f, Logits& out) override {
    ref_->prefill_logits(p, f, out);
    if (++calls % 2 == 0 && p.rows > 0 && p.ke[0] > p.ks[0]) {
      float& v = out.row(0)[p.ks[0]];
      if (std::isfinite(v)) v = std::nextafter(v, INFINITY);
    }
  }
};

TEST(FuzzOpProperties, DeterminismAndEveryEntryWrittenDrawPrefillCases) {
  for (const char* property : {property::kDeterminism, property::kEveryEntryWritten}) {
    const CampaignResult r = fuzz_one(maker<PrefillOnly>(), property, 4);
    ASSERT_EQ(r.properties.size(), 1u);
    EXPECT_TRUE(r.properties[0].applicable()) << property;
    EXPECT_EQ(r.properties[0].passed, 4) << property;
  }
}

TEST(FuzzOpProperties, PrefillLogitsUnwrittenOrRunDependentAreCaught) {
  const CampaignResult unwritten = fuzz_one(maker<PrefillLeavesKs>(), property::kEveryEntryWritten, 100);
  ASSERT_TRUE(unwritten.properties[0].failure);
  EXPECT_NE(unwritten.properties[0].failure->message.find("prefill_logits"), std::string::npos);
  const CampaignResult drifting = fuzz_one(maker<PrefillRunDependent>(), property::kDeterminism, 100);
  ASSERT_TRUE(drifting.properties[0].failure);
  EXPECT_EQ(kind_name(drifting.properties[0].failure->shrunk), "prefill");
}

}  // namespace
}  // namespace dsa::fuzz
