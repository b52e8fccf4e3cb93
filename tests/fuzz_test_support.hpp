// Helpers of the fuzzer's tests: drawing cases from a generator with a fixed
// seed, and implementations under test with one deliberate bug each (kept
// apart from the mutant catalog, so that these tests pin the fuzzer, not it).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include <rapidcheck.h>

#include "dsa/fuzz/campaign.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::test {

// Under the sanitizers a case costs several times more: the suite's sanitized
// run draws fewer cases (the bugs these tests look for die within their first
// cases either way). Asked at run time (DSA_SANITIZED, set by scripts/test.sh):
// the drivers are compiled plain, the same object in both builds.
inline int fuzz_scale() { return std::getenv("DSA_SANITIZED") ? 3 : 1; }
inline int scaled_count(int n) { return std::max(1, n / fuzz_scale()); }

// n values of `gen`, sizes cycling over 0..100 as a campaign's batches do.
template <class T>
std::vector<T> sample(const rc::Gen<T>& gen, int n, uint64_t seed) {
  std::vector<T> out;
  rc::Random random(seed);
  for (int i = 0; i < n; ++i) out.push_back(gen(random.split(), (i * 7) % 101).value());
  return out;
}

// The reference with some ops replaced (each test overrides what it breaks).
class PatchedReference : public ForwardingOps {
public:
  PatchedReference() : ForwardingOps("patched reference") {}
};

template <class Ops>
std::function<std::unique_ptr<IndexerOps>()> maker() {
  return [] { return std::make_unique<Ops>(); };
}

// A campaign of one property on one implementation, with a case budget.
inline fuzz::CampaignResult fuzz_one(const std::function<std::unique_ptr<IndexerOps>()>& make,
                                     const std::string& property, int64_t cases, uint64_t seed = 1) {
  fuzz::CampaignOptions o;
  o.impl = "test";
  o.make_impl = make;
  o.properties = {property};
  o.cases = cases;
  o.seed = seed;
  o.shrink_seconds = 20;
  o.replay_prefix = "dsa-oracle fuzz --impl test";
  return fuzz::run_campaign(o);
}

}  // namespace dsa::test
