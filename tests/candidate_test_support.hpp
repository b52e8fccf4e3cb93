// Helpers of the candidate-block, padding and SM100 sparse tests.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/logits.hpp"
#include "dsa/profile.hpp"
#include "dsa/synthetic.hpp"
#include "dsa/topk.hpp"
#include "test_values.hpp"

namespace dsa::testing {

using ::dsa::test::bits_of;
using ::dsa::test::kInf;
using ::dsa::test::kNaN;

inline Logits make_logits(int64_t rows, int64_t width, std::vector<float> values) {
  EXPECT_EQ(values.size(), size_t(rows * width));
  return Logits{rows, width, std::move(values)};
}

inline std::vector<int32_t> row_of(const TopkIndices& t, int64_t r) { return {t.row(r), t.row(r) + t.k}; }
inline std::vector<int32_t> slots_of(const CandidateBlocks& c, int64_t r) { return {c.row(r), c.row(r) + c.slots}; }

// The valid (non -1) entries of a row, sorted.
inline std::vector<int32_t> chosen_set(const int32_t* row, int k) {
  std::vector<int32_t> s;
  for (int i = 0; i < k; ++i)
    if (row[i] >= 0) s.push_back(row[i]);
  std::sort(s.begin(), s.end());
  return s;
}

// A small decode step from the project's synthetic inputs: bf16 weights (so
// every profile takes them), 1-D lengths, the element's natural layout.
inline DecodeProblem small_decode_problem(ElementFormat element, int32_t heads, int32_t head_dim,
                                          std::vector<int32_t> seq_lens, int32_t next_n, uint64_t seed,
                                          int32_t block_size = 16) {
  SyntheticDecodeConfig config;
  config.batch = int32_t(seq_lens.size());
  config.next_n = next_n;
  config.heads = heads;
  config.head_dim = head_dim;
  config.element = element;
  config.layout = element == ElementFormat::mxfp4 ? CacheLayout::mxfp4 : CacheLayout::block_flat;
  config.block_size = block_size;
  config.seq_lens = std::move(seq_lens);
  config.bf16_weights = true;
  Rng rng(seed);
  return make_decode_problem(config, rng);
}

// Whether the profile can build its head sum for H heads.
inline bool takes_heads(const Profile& profile, int32_t heads) {
  try {
    ReductionProgram program(profile, heads);
    return true;
  } catch (const InvalidInput&) {
    return false;
  }
}

// The smallest H of {8, 16, 32, 64} that the profile takes.
inline int32_t heads_for(const Profile& profile) {
  for (const int32_t h : {8, 16, 32, 64})
    if (takes_heads(profile, h)) return h;
  ADD_FAILURE() << profile.name << " takes none of H = 8, 16, 32, 64";
  return 64;
}

// Runs a RapidCheck property with at most `cases` cases (the suite runs on 2
// cores, twice), reporting through GoogleTest like RC_GTEST_PROP.
template <class Testable>
void check_property(int cases, Testable&& testable) {
  auto params = rc::detail::configuration().testParams;
  params.maxSuccess = std::min(params.maxSuccess, cases);
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  const auto result = rc::detail::checkTestable(std::forward<Testable>(testable), metadata, params);
  if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    FAIL() << message.str();
  }
}

// Runs a property that must fail (a deliberately wrong implementation),
// without shrinking and without RapidCheck's "reproduce" notice at exit.
template <class Testable>
bool property_fails(int cases, Testable&& testable) {
  struct Silent : rc::detail::TestListener {
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  } silent;
  auto params = rc::detail::configuration().testParams;
  params.maxSuccess = cases;
  params.disableShrinking = true;
  rc::detail::TestMetadata metadata;
  metadata.id = "expected-failure";
  const auto result = rc::detail::checkProperty(rc::detail::toProperty(std::forward<Testable>(testable)), metadata,
                                                params, silent);
  return result.template is<rc::detail::FailureResult>();
}

}  // namespace dsa::testing
