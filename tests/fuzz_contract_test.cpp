// Issue 11 §2, "a kernel's contract, declared once": the fuzzer draws and
// shrinks only inside an implementation's contract (an SGLang-like top-k
// that takes only k = 2048 gets cases instead of "does not apply"), a
// contract comes from JSON, and one nothing can satisfy is a setup error.
#include <gtest/gtest.h>

#include <set>

#include "dsa/error.hpp"
#include "dsa/fuzz/campaign.hpp"
#include "dsa/fuzz/contract_json.hpp"
#include "dsa/fuzz/generators.hpp"
#include "dsa/optimized/implementations.hpp"
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
  c.candidate_block_sizes = {16, 32};
  c.profile = "deepgemm_sm90";
  for (const auto& t : test::sample(gen_topk_case(limits), test::scaled_count(30), 1)) {
    EXPECT_TRUE(within(c, t)) << to_json(t).dump();
    EXPECT_TRUE(t.k == 64 || t.k == 512);
  }
  for (const auto& k : test::sample(gen_candidate_case(limits), test::scaled_count(30), 2)) {
    EXPECT_TRUE(within(c, k)) << to_json(k).dump();
    EXPECT_TRUE(k.block_size == 16 || k.block_size == 32);
  }
  for (const auto& d : test::sample(gen_decode_case(limits), test::scaled_count(10), 3)) {
    EXPECT_TRUE(within(c, d)) << to_json(d).dump();
    EXPECT_TRUE(d.lens_2d);
    EXPECT_EQ(d.profile, "deepgemm_sm90");
    EXPECT_TRUE(d.candidate_block_size == 16 || d.candidate_block_size == 32);
  }
  for (const auto& pr : test::sample(gen_prefill_case(limits), test::scaled_count(10), 4))
    EXPECT_TRUE(within(c, pr)) << to_json(pr).dump();
}

// The reference held to a table entry's contract as its kernel holds itself:
// every call outside it (judged by the contract's own clauses, not by the
// fuzzer's) is refused, and each op called inside it is noted.
class ContractKeeper : public ForwardingOps {
public:
  ContractKeeper(const Contract& contract, std::set<Op>* called)
      : ForwardingOps("contract keeper"), contract_(contract), called_(called) {}

  void decode_logits(const DecodeProblem& p, const Profile& f, Logits& out) override {
    keep(Op::decode_logits, f.name, contract_.refusal(p));
    ForwardingOps::decode_logits(p, f, out);
  }
  void prefill_logits(const PrefillProblem& p, const Profile& f, Logits& out) override {
    keep(Op::prefill_logits, f.name, contract_.refusal(p));
    ForwardingOps::prefill_logits(p, f, out);
  }
  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    keep(Op::topk, "", contract_.refusal_k(out.k) + starts(bounds));
    ForwardingOps::topk(logits, bounds, out);
  }
  void candidate_select(const Logits& logits, const RowBounds& bounds, CandidateBlocks& out) override {
    keep(Op::candidate_select, "", contract_.refusal_candidate_block(out.block_size));
    ForwardingOps::candidate_select(logits, bounds, out);
  }
  void candidate_mask(Logits& logits, const RowBounds& bounds, const CandidateBlocks& c, CandidateMask v) override {
    keep(Op::candidate_mask, "", contract_.refusal_candidate_block(c.block_size));
    ForwardingOps::candidate_mask(logits, bounds, c, v);
  }
  void candidate_topk(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& c,
                      TopkIndices& out) override {
    keep(Op::candidate_topk, "", contract_.refusal_k(out.k) + contract_.refusal_candidate_block(c.block_size));
    ForwardingOps::candidate_topk(logits, bounds, c, out);
  }
  void compact_candidate_logits(const DecodeProblem& p, const Profile& f, const CandidateBlocks& c,
                                Logits& out) override {
    keep(Op::compact_candidate_logits, f.name, contract_.refusal(p) + contract_.refusal_candidate_block(c.block_size));
    ForwardingOps::compact_candidate_logits(p, f, c, out);
  }
  void prefill_compact_candidate_logits(const PrefillProblem& p, const Profile& f, const CandidateBlocks& c,
                                        Logits& out) override {
    keep(Op::prefill_compact_candidate_logits, f.name,
         contract_.refusal(p) + contract_.refusal_candidate_block(c.block_size));
    ForwardingOps::prefill_compact_candidate_logits(p, f, c, out);
  }
  void candidate_logits_top_k(const DecodeProblem& p, const Profile& f, const CandidateBlocks& c, Logits& compact,
                              TopkIndices& out) override {
    keep(Op::candidate_logits_top_k, f.name,
         contract_.refusal(p) + contract_.refusal_candidate_block(c.block_size) + contract_.refusal_k(out.k));
    ForwardingOps::candidate_logits_top_k(p, f, c, compact, out);
  }
  void pack_rows(const ByteRows& ragged, std::span<const int32_t> lens, uint8_t pad, ByteRows& packed) override {
    keep(Op::pack_rows, "", "");
    ForwardingOps::pack_rows(ragged, lens, pad, packed);
  }
  void unpack_topk(const TopkIndices& padded, std::span<const int32_t> lens, TopkIndices& out) override {
    keep(Op::unpack_topk, "", "");
    ForwardingOps::unpack_topk(padded, lens, out);
  }
  bool skip_decode_fill(bool prefill_rows, int64_t decode_tokens, int64_t tokens, bool padding) override {
    keep(Op::skip_decode_fill, "", "");
    return ForwardingOps::skip_decode_fill(prefill_rows, decode_tokens, tokens, padding);
  }
  void expand_candidate_blocks(const CandidateBlocks& c, const RowBounds& bounds, SparseBlocks& out) override {
    keep(Op::expand_candidate_blocks, "", contract_.refusal_candidate_block(c.block_size));
    ForwardingOps::expand_candidate_blocks(c, bounds, out);
  }
  void sparse_logits(const DecodeProblem& p, const Profile& f, const SparseBlocks& sparse, Logits& out) override {
    keep(Op::sparse_logits, f.name, contract_.refusal(p));
    ForwardingOps::sparse_logits(p, f, sparse, out);
  }
  void sparse_topk(const Logits& logits, const SparseBlocks& sparse, std::span<const int64_t> row_ks,
                   TopkIndices& out) override {
    keep(Op::sparse_topk, "", contract_.refusal_k(out.k));
    ForwardingOps::sparse_topk(logits, sparse, row_ks, out);
  }

private:
  std::string starts(const RowBounds& bounds) const {
    if (contract_.row_starts) return {};
    for (const int64_t s : bounds.start)
      if (s > 0) return "a row starting at " + std::to_string(s);
    return {};
  }
  void keep(Op op, const std::string& profile, const std::string& refusal) {
    if (!contract_.takes(op)) throw Unsupported(std::string(to_string(op)) + " is not in the contract");
    if (!profile.empty() && !contract_.claims_profile(profile)) throw Unsupported("profile " + profile);
    if (!refusal.empty()) throw Unsupported(refusal);
    called_->insert(op);
  }

  Contract contract_;
  std::set<Op>* called_;
};

// `fuzz --impl cuda_sm90` judged nothing while the fuzzer's probes fell
// outside the kernels' contract. Each GPU entry of the table, played by the
// reference held to the entry's contract: every property its ops make
// applicable gets cases, none is refused, and every op of the contract that
// a property exercises is called inside it.
TEST(FuzzContract, EveryGpuEntryOfTheTableGetsCasesInsideItsContract) {
  int entries = 0;
  for (const optimized::Implementation& entry : optimized::implementations()) {
    if (entry.device == optimized::Device::cpu) continue;
    ++entries;
    std::set<Op> called;
    CampaignOptions o;
    o.impl = entry.name + " (contract keeper)";
    o.make_impl = [&] { return std::make_unique<ContractKeeper>(entry.contract, &called); };
    o.cases = 2;
    o.batch_cases = 2;
    o.limits.max_rows = 2;
    o.limits.logits_elements = 1 << 10;
    o.limits.exact_products = 1 << 14;
    o.limits.model_products = 1 << 13;
    o.limits.draw = entry.contract;
    const CampaignResult r = run_campaign(o);
    int applicable = 0;
    for (const PropertyResult& p : r.properties) {
      if (!p.applicable()) continue;
      ++applicable;
      // The every-op properties draw every case of a kind whose probe an implementation takes, and a
      // selection-only entry takes some decode cases (the padding, the sparse form) but not others:
      // those are refused as ops, not as clauses of the contract (a gap of their generators).
      if (p.property == property::kDeterminism || p.property == property::kEveryEntryWritten) continue;
      EXPECT_EQ(p.unsupported, 0) << entry.name << " " << p.property;
      EXPECT_EQ(p.passed, 2) << entry.name << " " << p.property;
      EXPECT_FALSE(p.failure) << entry.name << " " << format_failure(*p.failure);
    }
    EXPECT_GT(applicable, 0) << entry.name;
    for (const Op op : entry.contract.ops)
      EXPECT_TRUE(called.contains(op)) << entry.name << ": " << to_string(op) << " never called";
  }
  if (entries == 0) GTEST_SKIP() << "no GPU entry in this build's table (built without CUDA)";
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

// `fuzz --against`: each case goes to both implementations, so it is drawn
// inside both contracts; two that share no value of a clause are a setup error naming it.
TEST(FuzzContract, AgainstDrawsInsideBothContracts) {
  Contract gpu;
  gpu.ops = {Op::decode_logits, Op::compact_candidate_logits, Op::prefill_logits};
  gpu.profile = "dsa_sm90";
  gpu.page_sizes = {64};
  gpu.max_next_n = 4;
  gpu.heads = {32, 64};
  gpu.candidate_block_sizes = {8, 16, 32, 64};
  Contract other;
  other.ops = {Op::decode_logits, Op::topk};
  other.heads = {64, 128};
  other.min_next_n = 2;
  other.lens_1d = false;
  const Contract c = both(gpu, other, "gpu", "other");
  EXPECT_EQ(c.ops, std::set<Op>{Op::decode_logits});
  EXPECT_EQ(c.profile, "dsa_sm90");
  EXPECT_EQ(c.page_sizes, std::vector<int32_t>{64});
  EXPECT_EQ(c.heads, std::vector<int32_t>{64});
  EXPECT_EQ(c.candidate_block_sizes, gpu.candidate_block_sizes);
  EXPECT_EQ(c.min_next_n, 2);
  EXPECT_EQ(c.max_next_n, 4);
  EXPECT_FALSE(c.lens_1d);
  GenLimits limits;
  limits.max_rows = 3;
  limits.draw = c;
  for (const auto& d : test::sample(gen_decode_case(limits), test::scaled_count(10), 5)) {
    EXPECT_TRUE(within(gpu, d) && within(other, d)) << to_json(d).dump();
  }

  const auto error = [](const Contract& a, const Contract& b) {
    try {
      both(a, b, "a", "b");
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.argument(), "contract");
      return std::string(e.what());
    }
    return std::string("<accepted>");
  };
  Contract pages16;
  pages16.page_sizes = {16};
  EXPECT_NE(error(gpu, pages16).find("no page size in common (a takes 64, b takes 16)"), std::string::npos);
  Contract exact;
  exact.profile = "exact";
  EXPECT_NE(error(gpu, exact).find("profile dsa_sm90"), std::string::npos);
  Contract next_n_8;
  next_n_8.min_next_n = 8;
  EXPECT_NE(error(gpu, next_n_8).find("no next_n in common"), std::string::npos);
  Contract only_1d;
  only_1d.lens_2d = false;
  EXPECT_NE(error(other, only_1d).find("1-D"), std::string::npos);
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
  EXPECT_EQ(contract_from_json(nlohmann::json::parse(R"({"ops":["compact_candidate_logits"],"candidate_block_sizes":[8,16]})"),
                               "c.json")
                .candidate_block_sizes,
            (std::vector<int32_t>{8, 16}));
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
