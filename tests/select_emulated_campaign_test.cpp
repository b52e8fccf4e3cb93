// The selection launches' host half and shared device code together, on the
// host emulator: a short fuzz campaign of every top-k and candidate property
// (the GPU campaign runs the same properties on the H200's build).
#include <gtest/gtest.h>

#include "dsa/fuzz/campaign.hpp"
#include "select_emulation_support.hpp"

namespace dsa::select_testing {
namespace {

template <class S>
void short_campaign(const std::string& name, int64_t cases, int64_t logits_elements) {
  fuzz::CampaignOptions o;
  o.impl = name;
  o.make_impl = [name] { return make_emulated_selection<S>(name); };
  o.seed = 77;
  o.cases = cases;
  o.batch_cases = 4;
  o.limits.logits_elements = logits_elements;  // the emulator runs a block's threads one after another
  const fuzz::CampaignResult r = fuzz::run_campaign(o);
  int applicable = 0;
  for (const fuzz::PropertyResult& p : r.properties) {
    EXPECT_FALSE(p.failure) << name << ": " << (p.failure ? fuzz::format_failure(*p.failure) : "");
    if (!p.applicable()) continue;
    ++applicable;
    EXPECT_GT(p.passed, 0) << p.property;
  }
  EXPECT_GE(applicable, 5) << fuzz::format_campaign(o, r);
}

// Two cases per property in every build, the sanitized one included: with one, a property whose only case
// falls outside the contract (determinism draws such cases) passes none.
TEST(SelectEmulatedCampaign, Warp32FindsNothing) {
  short_campaign<Shape<32, 64, 8>>("emulated_select_w32", 2, 1 << 13);
}
TEST(SelectEmulatedCampaign, Wave64FindsNothing) {
  short_campaign<Shape<64, 128, 8>>("emulated_select_w64", 2, 1 << 11);
}

}  // namespace
}  // namespace dsa::select_testing
