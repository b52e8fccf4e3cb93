// A short campaign against every implementation of the table, every property
// that applies, as CI runs it (a few seconds each). An entry built but not
// runnable here (a GPU kernel on a machine without its GPU) is skipped.
#include <gtest/gtest.h>

#include "dsa/fuzz/campaign.hpp"
#include "dsa/fuzz/implementations.hpp"
#include "dsa/optimized/implementations.hpp"
#include "fuzz_test_support.hpp"

namespace dsa::fuzz {
namespace {

class FuzzShortCampaign : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzShortCampaign, FindsNothing) {
  if (!optimized::find_implementation(GetParam()).available())
    GTEST_SKIP() << GetParam() << " is built but cannot run on this machine";
  CampaignOptions o;
  o.impl = GetParam();
  o.make_impl = [name = GetParam()] { return make_implementation(name); };
  o.seed = 2024;
  o.cases = test::scaled_count(8);  // per property: a few seconds in all, and every property gets its share
  o.batch_cases = 4;
  const CampaignResult r = run_campaign(o);
  int applicable = 0;
  for (const PropertyResult& p : r.properties) {
    EXPECT_FALSE(p.failure) << GetParam() << ": " << (p.failure ? format_failure(*p.failure) : "");
    if (!p.applicable()) continue;
    ++applicable;
    EXPECT_GT(p.passed, 0) << GetParam() << " " << p.property;
    EXPECT_EQ(p.passed + p.unsupported, o.cases) << GetParam() << " " << p.property;
  }
  EXPECT_GE(applicable, 3) << format_campaign(o, r);
}

INSTANTIATE_TEST_SUITE_P(Implementations, FuzzShortCampaign,
                         ::testing::ValuesIn(optimized::implementation_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace dsa::fuzz
