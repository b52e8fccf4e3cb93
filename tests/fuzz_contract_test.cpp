// Issue 11 §2, "a kernel's contract, declared once": the fuzzer draws and
// shrinks only inside an implementation's contract (an SGLang-like top-k
// that takes only k = 2048 gets cases instead of "does not apply"), a
// contract comes from JSON, and one nothing can satisfy is a setup error.
#include <gtest/gtest.h>

#include "dsa/error.hpp"
#include "dsa/fuzz/campaign.hpp"
#include "dsa/fuzz/contract_json.hpp"
#include "dsa/fuzz/generators.hpp"
#include "fuzz_test_support.hpp"

namespace dsa::fuzz {
namespace {

// The reference's top-k, refusing every k but 2048 (as SGLang's indexer top-k does).
class OnlyK2048 : public ForwardingOps {
public:
  OnlyK2048() : ForwardingOps("only k = 2048") {}
  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    if (out.k != 2048) throw Unsupported("k must be 2048");
    ForwardingOps::topk(logits, bounds, out);
  }
};

CampaignOptions topk_campaign(const Contract& contract) {
  CampaignOptions o;
  o.impl = "only k = 2048";
  o.make_impl = [] { return std::make_unique<OnlyK2048>(); };
  o.properties = {property::kTopkAgrees};
  o.cases = test::scaled_count(12);
  o.batch_cases = 4;
  o.limits.logits_elements = 1 << 15;
  o.limits.draw = contract;
  return o;
}

TEST(FuzzContract, AKernelThatTakesOnlyK2048GetsCasesInsideItsContract) {
  // Without a contract the probe (k = 4) is refused: the property does not apply.
  const CampaignResult without = run_campaign(topk_campaign(Contract{}));
  EXPECT_FALSE(without.properties[0].applicable());

  Contract c;
  c.ops = {Op::topk};
  c.k_values = {2048};
  const CampaignResult with = run_campaign(topk_campaign(c));
  const PropertyResult& p = with.properties[0];
  EXPECT_TRUE(p.applicable());
  EXPECT_FALSE(p.failure) << format_failure(*p.failure);
  EXPECT_EQ(p.passed, topk_campaign(c).cases);
  EXPECT_EQ(p.unsupported, 0);
}

TEST(FuzzContract, EveryDrawnCaseIsInsideTheContract) {
  GenLimits limits;
  limits.max_rows = 6;
  limits.logits_elements = 1 << 14;
  limits.exact_products = 1 << 18;
  limits.model_products = 1 << 16;
  Contract& c = limits.draw;
  c.k_values = {64, 512};
  c.row_starts = false;
  c.cache_layouts = {CacheLayout::block_flat};
  c.page_sizes = {64};
  c.min_next_n = 2;
  c.max_next_n = 2;
  c.heads = {64};
  c.head_dims = {128};
  c.lens_1d = false;
  c.rising_2d_lens = true;
  c.profile = "deepgemm_sm90";
  for (const auto& t : test::sample(gen_topk_case(limits), test::scaled_count(30), 1)) {
    EXPECT_TRUE(within(c, t)) << to_json(t).dump();
    EXPECT_TRUE(t.k == 64 || t.k == 512);
  }
  for (const auto& k : test::sample(gen_candidate_case(limits), test::scaled_count(30), 2))
    EXPECT_TRUE(within(c, k)) << to_json(k).dump();
  for (const auto& d : test::sample(gen_decode_case(limits), test::scaled_count(10), 3)) {
    EXPECT_TRUE(within(c, d)) << to_json(d).dump();
    EXPECT_TRUE(d.lens_2d);
    EXPECT_EQ(d.profile, "deepgemm_sm90");
  }
  for (const auto& pr : test::sample(gen_prefill_case(limits), test::scaled_count(10), 4))
    EXPECT_TRUE(within(c, pr)) << to_json(pr).dump();
}

TEST(FuzzContract, ShrinkingStaysInsideTheContract) {
  // Every case fails: the shrunk one is as small as the contract lets it be, and still inside.
  class AlwaysWrong : public ForwardingOps {
  public:
    AlwaysWrong() : ForwardingOps("always wrong") {}
    void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
      ForwardingOps::topk(logits, bounds, out);
      out.indices.assign(out.indices.size(), 0);
    }
  };
  CampaignOptions o = topk_campaign({});
  o.make_impl = [] { return std::make_unique<AlwaysWrong>(); };
  o.limits.draw.k_values = {2048};
  o.limits.draw.row_starts = false;
  const CampaignResult r = run_campaign(o);
  ASSERT_TRUE(r.properties[0].failure);
  const auto& shrunk = std::get<TopkCase>(r.properties[0].failure->shrunk);
  EXPECT_EQ(shrunk.k, 2048);
  EXPECT_TRUE(within(o.limits.draw, shrunk));
}

TEST(FuzzContract, AContractNothingCanSatisfyIsASetupError) {
  Contract c;
  c.ops = {Op::decode_logits};
  c.profile = "deepgemm_sm90";
  c.cache_layouts = {CacheLayout::preshuffle};  // e4m3fnuz only, which deepgemm_sm90 does not take
  CampaignOptions o = topk_campaign(c);
  o.properties = {property::kLogitsAgree, property::kPrefillLogitsAgree};
  c.heads = {7};  // and no prefill either
  o.limits.draw = c;
  try {
    run_campaign(o);
    ADD_FAILURE() << "an unsatisfiable contract ran";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "contract");
  }
}

TEST(FuzzContract, ContractsReadFromJsonNameTheirMistakes) {
  const Contract c = contract_from_json(nlohmann::json::parse(R"({"ops":["topk","candidate_topk"],"k_values":[2048],
      "row_starts":false,"cache_layouts":["block_flat"],"page_sizes":[64],"min_next_n":1,"max_next_n":2,
      "profile":"deepgemm_sm90","rising_2d_lens":true})"),
                                        "c.json");
  EXPECT_TRUE(c.takes(Op::topk));
  EXPECT_FALSE(c.takes(Op::decode_logits));
  EXPECT_EQ(c.k_values, std::vector<int32_t>{2048});
  EXPECT_EQ(c.max_next_n, 2);
  EXPECT_EQ(contract_from_json(contract_to_json(c), "again").k_values, c.k_values);
  const auto error = [](const std::string& text) {
    try {
      contract_from_json(nlohmann::json::parse(text), "c.json");
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.argument(), "contract");
      return std::string(e.what());
    }
    return std::string("<accepted>");
  };
  EXPECT_NE(error(R"({"k_values":[1]})").find("\"ops\" is missing"), std::string::npos);
  EXPECT_NE(error(R"({"ops":["topk"],"k_value":[1]})").find("\"k_value\" is not a clause"), std::string::npos);
  EXPECT_NE(error(R"({"ops":["topq"]})").find("topq"), std::string::npos);
  EXPECT_NE(error(R"({"ops":[],"profile":"nope"})").find("unknown profile"), std::string::npos);
  EXPECT_NE(error(R"({"ops":[],"page_sizes":[0]})").find("not a positive"), std::string::npos);
  EXPECT_NE(error(R"({"ops":[],"min_next_n":3,"max_next_n":2})").find("above max_next_n"), std::string::npos);
}

}  // namespace
}  // namespace dsa::fuzz
