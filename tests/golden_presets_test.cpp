// Golden presets: reproducible bytes, the shapes and corners each preset
// promises, and expected outputs that the oracle's own rules accept.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "dsa/dataset/check.hpp"
#include "dsa/dataset/manifest.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "dsa/padding.hpp"
#include "golden_test_support.hpp"

namespace dsa::golden_test {
namespace {

using dataset::GoldenCase;
using dataset::GoldenOp;

std::vector<std::vector<uint8_t>> preset_bytes(const std::string& preset, const std::string& profile, uint64_t seed) {
  std::vector<std::vector<uint8_t>> files;
  for (const auto& planned : dataset::plan_preset({preset, seed, profile, "small"}))
    files.push_back(dataset::serialize_safetensors(dataset::to_safetensors(planned.build())));
  return files;
}

TEST(GoldenPresets, SameSeedSameBytesOtherSeedOtherBytes) {
  for (const char* preset : {"edge", "v41_c4a"}) {
    const auto a = preset_bytes(preset, "exact", 7), b = preset_bytes(preset, "exact", 7);
    const auto c = preset_bytes(preset, "exact", 8);
    EXPECT_EQ(a, b) << preset;
    ASSERT_EQ(a.size(), c.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NE(a[i], c[i]) << preset << " case " << i;
  }
}

TEST(GoldenPresets, BuildingOutOfOrderGivesTheSameCases) {
  const auto plan = dataset::plan_preset({"v41_c4a", 3, "exact", "small"});
  const auto in_order = preset_bytes("v41_c4a", "exact", 3);
  for (size_t i = plan.size(); i-- > 0;)  // consumers first: they build their source layer themselves
    EXPECT_EQ(dataset::serialize_safetensors(dataset::to_safetensors(plan[i].build())), in_order[i]) << i;
}

TEST(GoldenPresets, RequestsAreValidated) {
  expect_invalid([] { dataset::plan_preset({"v33_decode", 1, "", "small"}); }, "preset", "v32_decode");
  expect_invalid([] { dataset::plan_preset({"v32_decode", 1, "deepgemm_sm91", "small"}); }, "profile");
  expect_invalid([] { dataset::plan_preset({"gfx942", 1, "deepgemm_sm90", "small"}); }, "profile", "preset gfx942");
  expect_invalid([] { dataset::plan_preset({"mxfp4", 1, "aiter_gfx942_gluon", "small"}); }, "profile", "mxfp4");
  expect_invalid([] { dataset::plan_preset({"v32_decode", 1, "", "huge"}); }, "size");
  expect_invalid([] { dataset::plan_preset({"v32_decode", 1, "", "0x100"}); }, "size");
  expect_invalid([] { dataset::plan_preset({"v32_decode", 1, "", "4x"}); }, "size");
  EXPECT_EQ(dataset::parse_preset_size("3x5000").batch, 3);
  EXPECT_EQ(dataset::parse_preset_size("3x5000").context, 5000);
  EXPECT_EQ(dataset::parse_preset_size("131072").context, 131072);
  EXPECT_EQ(dataset::plan_preset({"v32_decode", 1, "", "medium"}).size(), 3u);
}

TEST(GoldenPresets, ExplicitSizeReachesTheLongestRequest) {
  const GoldenCase c = dataset::plan_preset({"v32_decode", 1, "exact", "1x3000"})[0].build();
  EXPECT_EQ(c.decode->batch, 1);
  EXPECT_EQ(c.decode->seq_lens, std::vector<int32_t>{3000});
}

TEST(GoldenPresets, V32DecodeShapes) {
  const auto plan = dataset::plan_preset({"v32_decode", 1, "", "small"});
  ASSERT_EQ(plan.size(), 3u);
  std::set<int32_t> next_ns;
  bool two_d = false, long_row = false, short_row = false;
  for (const auto& p : plan) {
    const GoldenCase c = p.build();
    EXPECT_EQ(c.settings.profile, "deepgemm_sm90");
    EXPECT_EQ(c.settings.topk, 2048);
    EXPECT_EQ(c.decode->heads, 64);
    EXPECT_EQ(c.decode->head_dim, 128);
    EXPECT_EQ(c.decode->cache.block_size, 64);
    next_ns.insert(c.decode->next_n);
    two_d |= c.decode->seq_lens_2d;
    for (int64_t len : visible_lens(*c.decode)) {
      long_row |= len > 2048;
      short_row |= len < 2048;
    }
  }
  EXPECT_EQ(next_ns, (std::set<int32_t>{1, 2}));
  EXPECT_TRUE(two_d);
  EXPECT_TRUE(long_row && short_row);
}

// The consumer layer reads the candidate blocks its source layer selected in
// the same step, over the same lengths and block table, with its own cache.
TEST(GoldenPresets, V41ConsumerFedByItsSourceLayer) {
  const auto plan = dataset::plan_preset({"v41_c4a", 1, "exact", "small"});
  ASSERT_EQ(plan.size(), 4u);
  const GoldenCase source = plan[0].build();
  EXPECT_EQ(source.settings.op, GoldenOp::candidate_select);
  EXPECT_EQ(source.decode->compress_ratio, 4);
  EXPECT_EQ(source.decode->cache.block_size, 64);
  EXPECT_EQ(source.settings.topk, 512);
  EXPECT_EQ(source.settings.candidate_block_size, 8);
  // Some row has more live blocks than slots: the selection selects.
  bool selective = false;
  for (int64_t end : candidate_row_ends(*source.decode))
    selective |= (end + 7) / 8 > source.settings.candidate_topk_blocks;
  EXPECT_TRUE(selective);
  for (size_t i = 1; i < plan.size(); ++i) {
    const GoldenCase consumer = plan[i].build();
    EXPECT_EQ(consumer.candidate_blocks->blocks, source.expected.candidate_blocks->blocks);
    EXPECT_EQ(consumer.decode->seq_lens, source.decode->seq_lens);
    EXPECT_EQ(consumer.decode->block_table, source.decode->block_table);
    EXPECT_NE(consumer.decode->cache.bytes, source.decode->cache.bytes);
    EXPECT_NE(consumer.decode->q, source.decode->q);
    EXPECT_EQ(consumer.settings.info.at("candidate_source"), plan[0].file);
  }
  EXPECT_EQ(plan[1].op, GoldenOp::consumer_step);
  EXPECT_EQ(plan[2].op, GoldenOp::candidate_mask);
  EXPECT_EQ(plan[3].op, GoldenOp::compact_candidate_logits);
}

TEST(GoldenPresets, Gfx942AndMxfp4Formats) {
  const GoldenCase gfx = dataset::plan_preset({"gfx942", 1, "", "small"})[0].build();
  EXPECT_EQ(gfx.settings.profile, "aiter_gfx942_gluon");
  EXPECT_EQ(gfx.decode->cache.layout, CacheLayout::preshuffle);
  EXPECT_EQ(gfx.decode->element, ElementFormat::e4m3fnuz);
  const auto plan = dataset::plan_preset({"mxfp4", 1, "", "small"});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[1].op, GoldenOp::sparse_sm100);
  const GoldenCase sparse = plan[1].build();
  EXPECT_EQ(sparse.settings.profile, "deepgemm_sm100_bf16");
  EXPECT_EQ(sparse.decode->cache.layout, CacheLayout::mxfp4);
  EXPECT_EQ(sparse.decode->heads, 32);
  EXPECT_EQ(sparse.decode->next_n, 1);
  for (float w : sparse.decode->weights) EXPECT_EQ(round_to_bf16(w), w);
  EXPECT_EQ(sparse.expected.sparse_blocks->sparse_block_kv, 8);
  // A profile with fp32 logits gets the dense consumer step instead.
  EXPECT_EQ(dataset::plan_preset({"mxfp4", 1, "exact", "small"})[1].op, GoldenOp::consumer_step);
}

TEST(GoldenPresets, EdgeHoldsItsCorners) {
  const auto plan = dataset::plan_preset({"edge", 1, "exact", "small"});
  bool empty_row = false, short_row = false, split_tie = false, neg_inf_heavy = false, nan_row = false,
       padded = false, no_block = false, minus_one_slot = false;
  for (const auto& p : plan) {
    const GoldenCase c = p.build();
    const auto ends = c.window_end();
    for (int64_t r = 0; r < c.rows(); ++r) {
      empty_row |= ends[size_t(r)] == 0;
      short_row |= ends[size_t(r)] > 0 && ends[size_t(r)] < c.settings.topk;
    }
    if (c.given_logits) {
      for (int64_t r = 0; r < c.rows(); ++r) {
        int64_t neg = 0;
        for (int64_t n = 0; n < ends[size_t(r)]; ++n) {
          neg += std::isinf(c.given_logits->at(r, n)) && c.given_logits->at(r, n) < 0;
          nan_row |= std::isnan(c.given_logits->at(r, n));
        }
        neg_inf_heavy |= ends[size_t(r)] > 0 && neg * 2 > ends[size_t(r)];
      }
    }
    if (c.settings.op == GoldenOp::decode_topk) {
      const Logits& values = c.given_logits ? *c.given_logits : *c.expected.logits;
      const auto v = oracle::check_topk(oracle::view(*c.expected.topk_indices), values, ends);
      split_tie |= v.rows_split_at_cut > 0;
    }
    padded |= c.decode && !c.decode->decode_lens.empty() && requires_padding(*c.decode);
    if (c.expected.candidate_blocks)
      for (int64_t r = 0; r < c.rows(); ++r) no_block |= c.expected.candidate_blocks->row(r)[0] == -1;
    if (c.candidate_blocks)
      for (int64_t r = 0; r < c.rows(); ++r)
        for (int32_t s = 0; s + 1 < c.candidate_blocks->slots; ++s)
          minus_one_slot |= c.candidate_blocks->row(r)[s] == -1 && c.candidate_blocks->row(r)[s + 1] >= 0;
  }
  EXPECT_TRUE(empty_row);
  EXPECT_TRUE(short_row);
  EXPECT_TRUE(split_tie);
  EXPECT_TRUE(neg_inf_heavy);
  EXPECT_TRUE(nan_row);
  EXPECT_TRUE(padded);
  EXPECT_TRUE(no_block);
  EXPECT_TRUE(minus_one_slot);
}

// The reference's outputs, handed to the checker as a kernel's, pass every
// rule, for each preset under its default profile: the ops' windows, bounds
// and column maps agree between the writer and the checker.
TEST(GoldenPresets, ExpectedOutputsPassTheOracle) {
  for (const auto& info : dataset::golden_presets()) {
    for (const auto& planned : dataset::plan_preset({info.name, 1, "", "small"})) {
      const GoldenCase c = planned.build();
      const auto report = dataset::check_case(c, c.expected, planned.file);
      EXPECT_TRUE(report.passed()) << report.to_text();
      EXPECT_GE(report.entries().size(), 2u) << planned.file;
    }
  }
}

TEST(GoldenPresets, WrittenSetHasAManifestOfHashes) {
  TempDir dir;
  std::vector<std::string> seen;
  const auto m = dataset::write_golden_set(dir / "set", {"edge", 1, "exact", "small"},
                                           [&](size_t, size_t, const std::string& file) { seen.push_back(file); });
  ASSERT_EQ(m.cases.size(), 7u);
  EXPECT_EQ(seen.size(), 8u);  // one call per case, then the end
  const auto back = dataset::read_manifest(dir / "set/manifest.json");
  EXPECT_EQ(dataset::to_json(back), dataset::to_json(m));
  for (const auto& c : back.cases) {
    EXPECT_EQ(dataset::sha256_file(dir / ("set/" + c.file)), c.sha256);
    EXPECT_EQ(c.profile, "exact");
    EXPECT_FALSE(c.shapes.empty());
  }
  // No temporary file is left behind.
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path() / "set")) {
    ++files;
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
  }
  EXPECT_EQ(files, 8u);
  // The same request again is fine; another one into the same folder is refused.
  EXPECT_NO_THROW(dataset::write_golden_set(dir / "set", {"edge", 1, "exact", "small"}));
  expect_invalid([&] { dataset::write_golden_set(dir / "set", {"edge", 2, "exact", "small"}); }, "out", "another golden set");
}

TEST(GoldenPresets, Sha256OfKnownInputs) {
  const std::string abc = "abc";
  EXPECT_EQ(dataset::sha256_hex(std::span(reinterpret_cast<const uint8_t*>(abc.data()), abc.size())),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(dataset::sha256_hex({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

}  // namespace
}  // namespace dsa::golden_test
