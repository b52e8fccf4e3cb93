// The fuzzer's properties: the reference passes every one; each catches an
// implementation with a bug it is meant to see (bugs written here, apart
// from the mutant catalog); Unsupported answers are counted apart.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "dsa/error.hpp"
#include "dsa/fuzz/mutants.hpp"
#include "dsa/padding.hpp"
#include "fuzz_test_support.hpp"

namespace dsa::fuzz {
namespace {

using test::fuzz_one;
using test::maker;
using test::PatchedReference;

float next_up(float v) { return std::isfinite(v) ? std::nextafter(v, INFINITY) : v; }

TEST(FuzzProperties, TheReferencePassesEveryProperty) {
  CampaignOptions o;
  o.impl = "reference";
  o.make_impl = [] { return make_reference_ops(); };
  o.properties = property_names();  // the opt-in one too: the reference writes clean rows
  o.cases = test::scaled_count(8);
  const CampaignResult r = run_campaign(o);
  ASSERT_EQ(r.properties.size(), properties().size());
  for (const PropertyResult& p : r.properties) {
    EXPECT_TRUE(p.applicable()) << p.property;
    EXPECT_FALSE(p.failure) << p.property << "\n" << (p.failure ? format_failure(*p.failure) : "");
    EXPECT_EQ(p.cases, o.cases) << p.property;
    EXPECT_EQ(p.passed, o.cases) << p.property;
    EXPECT_EQ(p.unsupported, 0) << p.property;
  }
  EXPECT_TRUE(r.passed());
}

// ---- One bug per property.

struct FirstIndicesTopk : PatchedReference {  // "top-k" = the first k columns
  void topk(const Logits&, const RowBounds& b, TopkIndices& out) override {
    for (int64_t r = 0; r < out.rows; ++r)
      for (int32_t s = 0; s < out.k; ++s) out.row(r)[s] = s < b.end[size_t(r)] - b.start[size_t(r)] ? s : -1;
  }
};

struct ReadsOnePastTheRow : PatchedReference {
  void topk(const Logits& l, const RowBounds& b, TopkIndices& out) override {
    for (int64_t r = 0; r < out.rows; ++r) {
      const int64_t start = b.start[size_t(r)], end = std::min(b.end[size_t(r)] + 1, l.width);
      topk_row(l.row(r) + start, end - start, out.k, out.row(r));
    }
  }
};

struct LeavesTheLastSlot : PatchedReference {
  void topk(const Logits& l, const RowBounds& b, TopkIndices& out) override {
    TopkIndices mine = out;
    inner().topk(l, b, mine);
    for (int64_t r = 0; r < out.rows; ++r) std::copy_n(mine.row(r), out.k - 1, out.row(r));
  }
};

// Ties go to the lowest index on odd calls, to the highest on even ones.
struct AlternatingTies : PatchedReference {
  int calls = 0;
  void topk(const Logits& l, const RowBounds& b, TopkIndices& out) override {
    if (++calls % 2) return inner().topk(l, b, out);
    for (int64_t r = 0; r < out.rows; ++r) {
      const int64_t start = b.start[size_t(r)], n = b.end[size_t(r)] - start;
      std::vector<float> reversed(l.row(r) + start, l.row(r) + start + n);
      std::reverse(reversed.begin(), reversed.end());
      topk_row(reversed.data(), n, out.k, out.row(r));
      for (int32_t s = 0; s < out.k; ++s)
        if (out.row(r)[s] >= 0 && n > out.k) out.row(r)[s] = int32_t(n - 1 - out.row(r)[s]);
    }
  }
};

struct FirstBlocks : PatchedReference {  // "selection" = blocks 0 .. C-1 of the row
  void candidate_select(const Logits&, const RowBounds& b, CandidateBlocks& out) override {
    for (int64_t r = 0; r < out.rows; ++r)
      for (int32_t s = 0; s < out.slots; ++s)
        out.row(r)[s] = int64_t(s) * out.block_size < b.end[size_t(r)] ? s : -1;
  }
};

struct IgnoresCandidates : PatchedReference {  // candidate top-k = the plain top-k of [0, L_r)
  void candidate_topk(const Logits& l, const RowBounds& b, const CandidateBlocks&, TopkIndices& out) override {
    inner().topk(l, b, out);
  }
};

struct OneUlpLogits : PatchedReference {  // column 0 one ulp off
  void decode_logits(const DecodeProblem& p, const Profile& f, Logits& out) override {
    inner().decode_logits(p, f, out);
    for (int64_t r = 0; r < out.rows; ++r) out.row(r)[0] = next_up(out.row(r)[0]);
  }
  void prefill_logits(const PrefillProblem& p, const Profile& f, Logits& out) override {
    inner().prefill_logits(p, f, out);
    for (int64_t r = 0; r < out.rows; ++r)
      if (p.ke[size_t(r)] > p.ks[size_t(r)]) out.row(r)[p.ks[size_t(r)]] = next_up(out.row(r)[p.ks[size_t(r)]]);
  }
  void compact_candidate_logits(const DecodeProblem& p, const Profile& f, const CandidateBlocks& c,
                                Logits& out) override {
    inner().compact_candidate_logits(p, f, c, out);
    for (auto& v : out.values) v = next_up(v);
  }
};

struct PageIdLeaks : PatchedReference {  // logits that depend on where the first page lives
  void decode_logits(const DecodeProblem& p, const Profile& f, Logits& out) override {
    inner().decode_logits(p, f, out);
    if (p.block_table[0] % 2)
      for (auto& v : out.values) v = next_up(v);
  }
};

struct PaddedRowsAsVllm : PatchedReference {  // vLLM's padded-row lengths (SPEC 5)
  void decode_logits(const DecodeProblem& p, const Profile& f, Logits& out) override {
    DecodeProblem q = p;
    q.padded_lengths = PaddedLengths::vllm_padded;
    inner().decode_logits(q, f, out);
  }
};

struct GarbagePastTheRow : PatchedReference {  // leaves the columns past L_r as they were
  void decode_logits(const DecodeProblem& p, const Profile& f, Logits& out) override {
    Logits mine = out;
    inner().decode_logits(p, f, mine);
    for (int64_t r = 0; r < out.rows; ++r)
      std::copy_n(mine.row(r), visible_len(p, r), out.row(r));
  }
};

struct PropertyAndBug {
  const char* property;
  std::function<std::unique_ptr<IndexerOps>()> make;
};

void PrintTo(const PropertyAndBug& e, std::ostream* os) { *os << e.property; }

class FuzzPropertyCatches : public ::testing::TestWithParam<PropertyAndBug> {};

TEST_P(FuzzPropertyCatches, ItsBug) {
  const PropertyAndBug& e = GetParam();
  const CampaignResult r = fuzz_one(e.make, e.property, 300);
  ASSERT_EQ(r.properties.size(), 1u);
  const PropertyResult& p = r.properties[0];
  ASSERT_TRUE(p.failure) << e.property << " ran " << p.cases << " cases without a failure";
  EXPECT_TRUE(p.failure->reproduced());
  // The printed replay string brings back the same failing case.
  const std::string json = to_json(p.failure->shrunk).dump();
  EXPECT_NE(p.failure->replay.find(json), std::string::npos);
  EXPECT_EQ(replay(e.make, e.property, json).verdict, Verdict::fail);
}

INSTANTIATE_TEST_SUITE_P(
    OneBugEach, FuzzPropertyCatches,
    ::testing::Values(PropertyAndBug{property::kTopkAgrees, maker<FirstIndicesTopk>()},
                      PropertyAndBug{property::kColumnsPastLengthIgnored, maker<ReadsOnePastTheRow>()},
                      PropertyAndBug{property::kEveryEntryWritten, maker<LeavesTheLastSlot>()},
                      PropertyAndBug{property::kDeterminism, maker<AlternatingTies>()},
                      PropertyAndBug{property::kCandidateSelectAgrees, maker<FirstBlocks>()},
                      PropertyAndBug{property::kCandidateTopkAgrees, maker<IgnoresCandidates>()},
                      PropertyAndBug{property::kMaskThenTopkEqualsCandidateTopk, maker<IgnoresCandidates>()},
                      PropertyAndBug{property::kLogitsAgree, maker<OneUlpLogits>()},
                      PropertyAndBug{property::kPrefillLogitsAgree, maker<OneUlpLogits>()},
                      PropertyAndBug{property::kCompactLogitsAgree, maker<OneUlpLogits>()},
                      PropertyAndBug{property::kCompactEqualsDense, maker<OneUlpLogits>()},
                      PropertyAndBug{property::kPagePermutationInvariance, maker<PageIdLeaks>()},
                      PropertyAndBug{property::kPaddedEqualsUnpadded, maker<PaddedRowsAsVllm>()},
                      PropertyAndBug{property::kLogitsAgreeClean, maker<GarbagePastTheRow>()}),
    [](const auto& info) { return std::string(info.param.property); });

TEST(FuzzProperties, GarbagePastTheRowIsAllowedUnlessCleanRowsArePromised) {
  const int cases = test::scaled_count(40);
  const CampaignResult r = fuzz_one(maker<GarbagePastTheRow>(), property::kLogitsAgree, cases);
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.properties[0].passed, cases);
}

// ---- Unsupported: counted apart, never a pass.

struct TopkOnly : IndexerOps {
  std::unique_ptr<IndexerOps> ref = make_reference_ops();
  std::string name() const override { return "topk only"; }
  void topk(const Logits& l, const RowBounds& b, TopkIndices& out) override { ref->topk(l, b, out); }
};

struct SmallKOnly : TopkOnly {  // as a launch that "returns False" for large k
  void topk(const Logits& l, const RowBounds& b, TopkIndices& out) override {
    if (out.k > 16) throw Unsupported("k > 16");
    ref->topk(l, b, out);
  }
};

TEST(FuzzProperties, PropertiesNeedingOpsAnImplementationLacksDoNotApply) {
  CampaignOptions o;
  o.impl = "topk only";
  o.make_impl = maker<TopkOnly>();
  o.cases = 6;
  const CampaignResult r = run_campaign(o);
  for (const PropertyResult& p : r.properties) {
    const bool topk_kind = p.property == property::kTopkAgrees || p.property == property::kColumnsPastLengthIgnored ||
                           p.property == property::kDeterminism || p.property == property::kEveryEntryWritten ||
                           p.property == property::kMaskThenTopkEqualsCandidateTopk ||
                           p.property == property::kPaddedEqualsUnpadded;  // its top-k on the reference's logits
    EXPECT_EQ(p.applicable(), topk_kind) << p.property;
    if (!topk_kind) {
      EXPECT_EQ(p.cases, 0) << p.property;
    }
    EXPECT_FALSE(p.failure) << p.property;
  }
  // A property that takes several kinds draws only those the implementation takes.
  for (const PropertyResult& p : r.properties) {
    if (p.property == property::kDeterminism) {
      EXPECT_EQ(p.unsupported, 0);
    }
  }
  EXPECT_NE(format_campaign(o, r).find("does not apply"), std::string::npos);
}

TEST(FuzzProperties, UnsupportedCasesAreCountedApartAndNeverPass) {
  const CampaignResult r = fuzz_one(maker<SmallKOnly>(), property::kTopkAgrees, 200);
  const PropertyResult& p = r.properties[0];
  EXPECT_FALSE(p.failure);
  EXPECT_GT(p.unsupported, 0);
  EXPECT_GT(p.passed, 0);
  EXPECT_EQ(p.passed + p.unsupported, p.cases);
  const nlohmann::json record = property_record({}, p);
  EXPECT_EQ(record["unsupported"], p.unsupported);
  EXPECT_EQ(record["passed"], p.passed);
}

TEST(FuzzProperties, ACaseOfAnotherKindIsABadReplay) {
  auto ref = make_reference_ops();
  TopkCase c;
  c.rows = {{0, 3, ValueKind::normal, 0}};
  EXPECT_THROW(check_case(find_property(property::kLogitsAgree), *ref, c), InvalidInput);
  EXPECT_THROW(find_property("no_such_property"), InvalidInput);
  EXPECT_EQ(check_case(find_property(property::kTopkAgrees), *ref, c).verdict, Verdict::pass);
}

TEST(FuzzProperties, EveryCatalogPropertyNameExists) {
  for (const Mutant& m : mutant_catalog()) {
    if (m.killed_by.rfind("comparator_test:", 0) == 0) continue;
    EXPECT_NO_THROW(find_property(m.killed_by)) << m.name;
  }
}

}  // namespace
}  // namespace dsa::fuzz
