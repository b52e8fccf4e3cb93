// Contract: every clause refuses exactly the calls outside it, and the
// default contract takes anything.
#include "dsa/contract.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace dsa {
namespace {

TEST(Contract, TheDefaultTakesAnyCallButNoOp) {
  const Contract any;
  const DecodeProblem p = test::small_decode({40, 17}, 2);
  EXPECT_EQ(any.refusal(p), "");
  EXPECT_EQ(any.refusal_k(2048), "");
  EXPECT_FALSE(any.takes(Op::topk));
  EXPECT_TRUE(any.claims_profile("deepgemm_sm90"));
  EXPECT_EQ(describe(any), "ops: none; profile: any");
}

TEST(Contract, EachClauseNamesWhatItRefuses) {
  DecodeProblem p = test::small_decode({40, 17}, 2, 8, 64, 7, ElementFormat::e4m3fn, CacheLayout::block_flat, 16);
  Contract c;
  c.ops = {Op::decode_logits, Op::topk};
  c.profile = "deepgemm_sm90";
  EXPECT_TRUE(c.takes(Op::topk));
  EXPECT_FALSE(c.takes(Op::candidate_topk));
  EXPECT_TRUE(c.claims_profile("deepgemm_sm90"));
  EXPECT_FALSE(c.claims_profile("exact"));
  EXPECT_FALSE(c.claims_profile("dsa_sm90_accurate"));
  EXPECT_FALSE(c.claims_profile("no_such_profile"));
  // dsa_sm90 is deepgemm_sm90's arithmetic under another name: each claims the other's cases.
  EXPECT_TRUE(c.claims_profile("dsa_sm90"));
  Contract ours;
  ours.profile = "dsa_sm90";
  EXPECT_TRUE(ours.claims_profile("deepgemm_sm90"));
  EXPECT_FALSE(ours.claims_profile("deepgemm_sm100"));
  Contract unregistered;
  unregistered.profile = "external_kernel";
  EXPECT_TRUE(unregistered.claims_profile("external_kernel"));
  EXPECT_FALSE(unregistered.claims_profile("deepgemm_sm90"));

  c.page_sizes = {64};
  EXPECT_EQ(c.refusal(p), "page size 16 (takes 64)");
  c.page_sizes = {16, 64};
  c.cache_layouts = {CacheLayout::preshuffle};
  EXPECT_EQ(c.refusal(p), "cache layout block_flat (takes preshuffle)");
  c.cache_layouts = {};
  c.max_next_n = 1;
  EXPECT_EQ(c.refusal(p), "next_n 2 (takes 1 to 1)");
  c.max_next_n = 4;
  c.heads = {64};
  EXPECT_EQ(c.refusal(p), "heads 8 (takes 64)");
  c.heads = {8};
  c.head_dims = {128};
  EXPECT_EQ(c.refusal(p), "head_dim 64 (takes 128)");
  c.head_dims = {};
  c.lens_1d = false;
  EXPECT_EQ(c.refusal(p), "1-D seq_lens (takes 2-D lengths only)");
  c.lens_1d = true;
  EXPECT_EQ(c.refusal(p), "");

  // 2-D lengths that fall within a request.
  p.seq_lens_2d = true;
  p.seq_lens = {30, 31, 12, 11};
  c.lens_2d = false;
  EXPECT_EQ(c.refusal(p), "2-D seq_lens (takes 1-D lengths only)");
  c.lens_2d = true;
  EXPECT_EQ(c.refusal(p), "");
  c.rising_2d_lens = true;
  EXPECT_NE(c.refusal(p).find("fall within request 1"), std::string::npos) << c.refusal(p);
  p.seq_lens = {30, 31, 11, 12};
  EXPECT_EQ(c.refusal(p), "");

  c.k_values = {2048};
  EXPECT_EQ(c.refusal_k(4), "k = 4 (takes 2048)");
  EXPECT_EQ(c.refusal_k(2048), "");
}

TEST(Contract, RowStartsOfPrefillRows) {
  SyntheticPrefillConfig config;
  config.rows = 4;
  config.heads = 8;
  config.head_dim = 64;
  config.num_k = 32;
  Rng rng(1);
  PrefillProblem p = make_prefill_problem(config, rng);
  Contract c;
  c.row_starts = false;
  EXPECT_EQ(c.refusal(p), "");
  p.ks[2] = 5;
  EXPECT_EQ(c.refusal(p), "row 2 starts at ks = 5 (takes ks = 0)");
  c.row_starts = true;
  EXPECT_EQ(c.refusal(p), "");
}

}  // namespace
}  // namespace dsa
