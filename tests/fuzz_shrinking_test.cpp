// Shrinking reaches small cases: at most 2 rows and 64 visible columns for
// bugs that allow it, from cases of up to 64 rows and 2^17 columns.
#include <gtest/gtest.h>

#include <cmath>

#include "fuzz_test_support.hpp"
#include "wrong_selections.hpp"

namespace dsa::fuzz {
namespace {

using test::maker;
using test::PatchedReference;

// Top-k by IEEE comparisons: NaN compares false with everything.
struct IeeeTopk : PatchedReference {
  void topk(const Logits& l, const RowBounds& b, TopkIndices& out) override {
    test::sort_topk(l, b, out, [](const float* v, int32_t x, int32_t y) { return v[x] > v[y]; });
  }
};

// Logits of entries from position 40 on off by one ulp.
struct LateEntriesOff : PatchedReference {
  void decode_logits(const DecodeProblem& p, const Profile& f, Logits& out) override {
    inner().decode_logits(p, f, out);
    for (int64_t r = 0; r < out.rows; ++r)
      for (int64_t c = 40; c < visible_len(p, r); ++c)
        if (std::isfinite(out.row(r)[c])) out.row(r)[c] = std::nextafter(out.row(r)[c], INFINITY);
  }
};

// Candidate top-k that forgets the last candidate slot.
struct LastSlotForgotten : PatchedReference {
  void candidate_topk(const Logits& l, const RowBounds& b, const CandidateBlocks& c, TopkIndices& out) override {
    CandidateBlocks fewer = c;
    for (int64_t r = 0; r < fewer.rows; ++r) fewer.row(r)[fewer.slots - 1] = -1;
    inner().candidate_topk(l, b, fewer, out);
  }
};

struct ShrinkTarget {
  const char* name;
  const char* property;
  std::function<std::unique_ptr<IndexerOps>()> make;
  int64_t max_visible;
};

void PrintTo(const ShrinkTarget& e, std::ostream* os) { *os << e.name; }

class FuzzShrinking : public ::testing::TestWithParam<ShrinkTarget> {};

TEST_P(FuzzShrinking, ReachesASmallCase) {
  const ShrinkTarget& e = GetParam();
  const CampaignResult r = test::fuzz_one(e.make, e.property, 500, 3);
  ASSERT_TRUE(r.properties[0].failure) << e.name << " not found";
  const Failure& f = *r.properties[0].failure;
  const CaseSize size = case_size(f.shrunk);
  EXPECT_LE(size.rows, 2) << describe(f.shrunk);
  EXPECT_LE(size.max_visible, e.max_visible) << describe(f.shrunk);
  EXPECT_TRUE(f.reproduced());
}

INSTANTIATE_TEST_SUITE_P(
    Bugs, FuzzShrinking,
    ::testing::Values(ShrinkTarget{"ieee_topk", property::kTopkAgrees, maker<IeeeTopk>(), 64},
                      ShrinkTarget{"late_entries", property::kLogitsAgree, maker<LateEntriesOff>(), 64},
                      ShrinkTarget{"last_slot", property::kCandidateTopkAgrees, maker<LastSlotForgotten>(), 64}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace dsa::fuzz
