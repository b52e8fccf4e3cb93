// The golden case schema: round trips of every op and form, and the reader's
// validation (each error names the tensor or metadata key at fault).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/formats.hpp"
#include "golden_test_support.hpp"

namespace dsa::golden_test {
namespace {

using dataset::Dtype;
using dataset::GoldenCase;
using dataset::GoldenOp;

std::vector<uint8_t> bytes_of(const GoldenCase& c) { return dataset::serialize_safetensors(dataset::to_safetensors(c)); }

// file -> case -> file gives the same bytes, and the case read back holds what was written.
void expect_round_trip(const GoldenCase& c) {
  const auto bytes = bytes_of(c);
  const GoldenCase back = dataset::read_golden_case(dataset::parse_safetensors(bytes, "case"));
  EXPECT_EQ(back.settings.op, c.settings.op);
  EXPECT_EQ(back.settings.topk, c.settings.topk);
  EXPECT_EQ(back.expected.names(), c.expected.names());
  EXPECT_EQ(bytes_of(back), bytes);
  if (c.decode && !c.logits_given()) {
    EXPECT_EQ(back.decode->q, c.decode->q);
    EXPECT_EQ(back.decode->cache.bytes, c.decode->cache.bytes);
    EXPECT_EQ(back.decode->cache.layout, c.decode->cache.layout);
    EXPECT_EQ(back.decode->element, c.decode->element);
    EXPECT_EQ(back.decode->weights, c.decode->weights);
    EXPECT_EQ(back.decode->block_table, c.decode->block_table);
  }
  if (c.decode) {
    EXPECT_EQ(back.decode->seq_lens, c.decode->seq_lens);
    EXPECT_EQ(back.decode->seq_lens_2d, c.decode->seq_lens_2d);
    EXPECT_EQ(back.decode->decode_lens, c.decode->decode_lens);
    EXPECT_EQ(back.decode->compress_ratio, c.decode->compress_ratio);
    EXPECT_EQ(back.decode->logits_width, c.decode->logits_width);
    EXPECT_EQ(dsa::visible_lens(*back.decode), dsa::visible_lens(*c.decode));
  }
  if (c.prefill) {
    EXPECT_EQ(back.prefill->k, c.prefill->k);
    EXPECT_EQ(back.prefill->ks, c.prefill->ks);
    EXPECT_EQ(back.prefill->ke, c.prefill->ke);
  }
  if (c.candidate_blocks) {
    EXPECT_EQ(back.candidate_blocks->blocks, c.candidate_blocks->blocks);
  }
  // The outputs recomputed from the inputs read back are the stored ones.
  GoldenCase again = back;
  dataset::compute_expected(again, back.expected.names());
  EXPECT_EQ(bytes_of(again), bytes);
}

struct PresetCase {
  const char* preset;
  const char* profile;
  size_t index;
};

class GoldenRoundTrip : public ::testing::TestWithParam<PresetCase> {};

TEST_P(GoldenRoundTrip, FileCaseFileIsByteIdentical) {
  const auto p = GetParam();
  expect_round_trip(preset_case(p.preset, p.profile, p.index));
}

// Every op and form: decode and prefill, 1-D and 2-D lengths, padded steps,
// preshuffle e4m3fnuz, MXFP4, given logits, candidate inputs, bf16 logits.
INSTANTIATE_TEST_SUITE_P(Presets, GoldenRoundTrip,
                         ::testing::Values(PresetCase{"v32_decode", "exact", 0}, PresetCase{"v32_decode", "exact", 2},
                                           PresetCase{"prefill", "exact", 0}, PresetCase{"gfx942", "aiter_gfx942_gluon", 1},
                                           PresetCase{"v41_c4a", "exact", 0}, PresetCase{"v41_c4a", "exact", 1},
                                           PresetCase{"v41_c4a", "exact", 2}, PresetCase{"v41_c4a", "exact", 3},
                                           PresetCase{"mxfp4", "deepgemm_sm100_bf16", 0},
                                           PresetCase{"mxfp4", "deepgemm_sm100_bf16", 1}, PresetCase{"mxfp4", "exact", 1},
                                           PresetCase{"edge", "exact", 2}, PresetCase{"edge", "exact", 3},
                                           PresetCase{"edge", "deepgemm_sm100_bf16", 4}, PresetCase{"edge", "exact", 5},
                                           PresetCase{"edge", "exact", 6}));

TEST(GoldenCase, LogitsOnlyOpsHoldTheReferenceLogits) {
  GoldenCase c = preset_case("edge", "exact", 3);  // padded decode step
  c.settings.op = GoldenOp::decode_logits;
  c.settings.topk = 0;
  dataset::compute_expected(c);
  ASSERT_EQ(c.expected.names(), std::vector<std::string>{"logits"});
  EXPECT_EQ(c.expected.logits->values, decode_logits(*c.decode, find_profile("exact")).logits.values);
  expect_round_trip(c);

  GoldenCase p = preset_case("prefill", "exact", 0);
  p.settings.op = GoldenOp::prefill_logits;
  p.settings.topk = 0;
  dataset::compute_expected(p);
  EXPECT_EQ(p.expected.logits->values, prefill_logits(*p.prefill, find_profile("exact")).logits.values);
  expect_round_trip(p);
}

TEST(GoldenCase, StoresTheFormatsTheSchemaNames) {
  const auto v32 = dataset::to_safetensors(preset_case("v32_decode", "exact", 1));
  EXPECT_EQ(v32.at("q").dtype, Dtype::F8_E4M3);
  EXPECT_EQ(v32.at("kv_cache").dtype, Dtype::U8);
  EXPECT_EQ(v32.at("kv_cache").shape, (dataset::Shape{v32.at("kv_cache").shape[0], 64, 1, 132}));
  EXPECT_EQ(v32.at("logits").dtype, Dtype::F32);
  EXPECT_EQ(v32.meta("fp8"), "e4m3fn");
  EXPECT_EQ(v32.meta("outputs"), "logits,topk_indices");
  const auto fnuz = dataset::to_safetensors(preset_case("gfx942", "aiter_gfx942_gluon", 0));
  EXPECT_EQ(fnuz.at("q").dtype, Dtype::U8);
  EXPECT_EQ(fnuz.meta("fp8"), "e4m3fnuz");
  EXPECT_EQ(fnuz.meta("layout"), "preshuffle");
  const auto sparse = dataset::to_safetensors(preset_case("mxfp4", "deepgemm_sm100_bf16", 1));
  EXPECT_EQ(sparse.at("q").shape, (dataset::Shape{2, 1, 32, 64}));
  EXPECT_EQ(sparse.at("q_scales").shape, (dataset::Shape{2, 1, 32, 4}));
  EXPECT_EQ(sparse.at("weights").dtype, Dtype::BF16);
  EXPECT_EQ(sparse.at("sparse_logits").dtype, Dtype::BF16);
  EXPECT_FALSE(sparse.metadata.count("fp8"));
  EXPECT_EQ(sparse.meta("layout"), "mxfp4");
}

// The inputs of a user's own file (no outputs listed), parameters from flags.
TEST(GoldenCase, InputsOnlyFileWithFlags) {
  const GoldenCase golden = preset_case("v41_c4a", "exact", 1);
  Safetensors in;
  dataset::put_inputs(in, golden);
  in.metadata = dataset::case_metadata(golden);
  in.metadata.erase("outputs");
  in.metadata.erase("topk");
  in.metadata.erase("schema");
  expect_invalid([&] { dataset::read_case_inputs(in); }, "topk", "missing");
  GoldenCase c = dataset::read_case_inputs(in, {{"topk", "512"}});
  EXPECT_TRUE(c.expected.names().empty());
  dataset::compute_expected(c);
  EXPECT_EQ(c.expected.topk_indices->indices, golden.expected.topk_indices->indices);
  EXPECT_EQ(c.expected.logits->values, golden.expected.logits->values);
  // A flag that agrees with the file is fine, one that contradicts it is not.
  EXPECT_NO_THROW(dataset::read_case_inputs(in, {{"topk", "512"}, {"next_n", "2"}, {"compress_ratio", "4"}}));
  expect_invalid([&] { dataset::read_case_inputs(in, {{"topk", "512"}, {"compress_ratio", "1"}}); }, "compress_ratio",
                 "the flag says '1'");
  expect_invalid([&] { dataset::read_case_inputs(in, {{"topk", "512"}, {"next_n", "1"}}); }, "next_n");
}

// ---- Validation: one broken thing at a time, each named.

Safetensors golden_file(const char* preset, const char* profile, size_t index) {
  return dataset::to_safetensors(preset_case(preset, profile, index));
}

TEST(GoldenCaseValidation, MissingAndUnknownTensors) {
  const Safetensors f = golden_file("v41_c4a", "exact", 1);
  for (const char* name : {"q", "kv_cache", "weights", "seq_lens", "block_table", "candidate_blocks"})
    expect_invalid([&] { dataset::read_golden_case(without(f, name)); }, name, "missing tensor");
  expect_invalid([&] { dataset::read_golden_case(without(f, "topk_indices")); }, "topk_indices", "listed in the `outputs`");
  Safetensors extra = f;
  extra.put_i32("seqlens", {2}, std::vector<int32_t>{1, 2});
  expect_invalid([&] { dataset::read_golden_case(extra); }, "seqlens", "not an input");
  Safetensors prefill_tensor = f;
  prefill_tensor.put_f32("k_scales", {1}, std::vector<float>{1});
  expect_invalid([&] { dataset::read_golden_case(prefill_tensor); }, "k_scales", "not an input");
  // An op that computes its logits does not take them.
  Safetensors compact = golden_file("v41_c4a", "exact", 3);
  compact.put_f32("logits", {1, 1}, std::vector<float>{0});
  expect_invalid([&] { dataset::read_golden_case(compact); }, "logits", "not an input");
}

TEST(GoldenCaseValidation, WrongDtypesAndShapes) {
  const Safetensors f = golden_file("v32_decode", "exact", 1);  // B 2, next_n 2
  const auto& w = f.at("weights");
  expect_invalid([&] { dataset::read_golden_case(replaced(f, "weights", Dtype::I32, w.shape, w.bytes)); }, "weights", "I32");
  expect_invalid([&] { dataset::read_golden_case(replaced(f, "seq_lens", Dtype::I32, {3}, std::vector<uint8_t>(12))); },
                 "seq_lens", "[3]");
  expect_invalid([&] { dataset::read_golden_case(replaced(f, "seq_lens", Dtype::F32, {2}, std::vector<uint8_t>(8))); },
                 "seq_lens", "F32");
  const auto& q = f.at("q");
  expect_invalid([&] { dataset::read_golden_case(replaced(f, "q", Dtype::F32, {2, 2, 64, 32}, q.bytes)); }, "q");
  expect_invalid([&] { dataset::read_golden_case(replaced(f, "q", Dtype::U8, {2, 2, 64, 128, 1}, q.bytes)); }, "q", "shape");
  const auto& kv = f.at("kv_cache");
  expect_invalid(
      [&] { dataset::read_golden_case(replaced(f, "kv_cache", Dtype::U8, {kv.shape[0], 32, 2, 132}, kv.bytes)); },
      "kv_cache", "shape");
  const auto& bt = f.at("block_table");
  expect_invalid([&] { dataset::read_golden_case(replaced(f, "block_table", Dtype::I32, {1, bt.shape[1] * 2}, bt.bytes)); },
                 "block_table");
  const auto& logits = f.at("logits");
  expect_invalid([&] { dataset::read_golden_case(replaced(f, "logits", Dtype::F32, {2, logits.shape[1] * 2}, logits.bytes)); },
                 "logits");
  // e4m3fnuz codes never travel as F8_E4M3 (that dtype means e4m3fn).
  const Safetensors fnuz = golden_file("gfx942", "aiter_gfx942_gluon", 0);
  const auto& fq = fnuz.at("q");
  expect_invalid([&] { dataset::read_golden_case(replaced(fnuz, "q", Dtype::F8_E4M3, fq.shape, fq.bytes)); }, "q", "U8");
  // e4m3fn bytes may come as U8.
  EXPECT_NO_THROW(dataset::read_golden_case(replaced(f, "q", Dtype::U8, q.shape, q.bytes)));
}

TEST(GoldenCaseValidation, BadMetadataValues) {
  const Safetensors f = golden_file("v32_decode", "exact", 0);
  auto with = [&](const std::string& key, const std::string& value) {
    Safetensors copy = f;
    copy.metadata[key] = value;
    return copy;
  };
  auto dropped = [&](const std::string& key) {
    Safetensors copy = f;
    copy.metadata.erase(key);
    return copy;
  };
  expect_invalid([&] { dataset::read_golden_case(with("op", "decode")); }, "op", "unknown op 'decode'");
  expect_invalid([&] { dataset::read_golden_case(with("profile", "sm90")); }, "profile");
  expect_invalid([&] { dataset::read_golden_case(with("topk", "2k")); }, "topk", "not a decimal integer");
  expect_invalid([&] { dataset::read_golden_case(with("topk", "0")); }, "topk", "outside");
  expect_invalid([&] { dataset::read_golden_case(with("layout", "tiled")); }, "layout");
  expect_invalid([&] { dataset::read_golden_case(with("fp8", "e5m2")); }, "fp8", "e5m2");
  expect_invalid([&] { dataset::read_golden_case(with("heads", "32")); }, "heads", "q's shape");
  expect_invalid([&] { dataset::read_golden_case(with("page_size", "16")); }, "page_size", "kv_cache");
  expect_invalid([&] { dataset::read_golden_case(with("schema", "dsa-oracle/golden/9")); }, "schema");
  expect_invalid([&] { dataset::read_golden_case(with("outputs", "logits,topk")); }, "outputs", "'topk'");
  expect_invalid([&] { dataset::read_golden_case(with("candidate_block_size", "8")); }, "candidate_block_size");
  expect_invalid([&] { dataset::read_golden_case(with("max_model_len", "64")); }, "seq_lens");
  for (const char* key : {"op", "profile", "layout", "fp8", "compress_ratio", "max_model_len", "topk", "outputs"})
    expect_invalid([&] { dataset::read_golden_case(dropped(key)); }, key, "missing");
  // A profile that no kernel pairs with the format.
  Safetensors fnuz = golden_file("gfx942", "exact", 0);
  fnuz.metadata["profile"] = "deepgemm_sm90";
  expect_invalid([&] { dataset::read_golden_case(fnuz); }, "profile", "e4m3fnuz");
}

TEST(GoldenCaseValidation, BadValuesInsideTensors) {
  const Safetensors f = golden_file("v32_decode", "exact", 1);
  auto set_i32 = [](size_t index, int32_t value) {
    return [=](std::vector<uint8_t>& b) { std::memcpy(b.data() + 4 * index, &value, 4); };
  };
  auto set_f32 = [](size_t index, float value) {
    return [=](std::vector<uint8_t>& b) { std::memcpy(b.data() + 4 * index, &value, 4); };
  };
  const int32_t pages = int32_t(f.at("kv_cache").shape[0]);
  expect_invalid([&] { dataset::read_golden_case(edited(f, "block_table", set_i32(0, pages))); }, "block_table",
                 "outside the cache");
  expect_invalid([&] { dataset::read_golden_case(edited(f, "block_table", set_i32(0, -1))); }, "block_table");
  expect_invalid([&] { dataset::read_golden_case(edited(f, "seq_lens", set_i32(0, -5))); }, "seq_lens", "negative");
  expect_invalid([&] { dataset::read_golden_case(edited(f, "seq_lens", set_i32(0, 1 << 20))); }, "seq_lens");
  expect_invalid([&] { dataset::read_golden_case(edited(f, "weights", set_f32(3, std::nanf("")))); }, "weights", "nan");
  expect_invalid([&] { dataset::read_golden_case(edited(f, "q", [](auto& b) { b[5] = 0x7f; })); }, "q", "NaN");
  // A NaN K scale of a page the first request reads (block-flat: scales after the values).
  const int32_t first_page = [&] {
    int32_t p;
    std::memcpy(&p, f.at("block_table").bytes.data(), 4);
    return p;
  }();
  const size_t scale_at = size_t(first_page) * 64 * 132 + 64 * 128;
  expect_invalid([&] { dataset::read_golden_case(edited(f, "kv_cache", [&](auto& b) {
                   const float nan = std::nanf("");
                   std::memcpy(b.data() + scale_at, &nan, 4);
                 })); },
                 "kv_cache", "nan");
  // Padded rows may hold NaN q bytes (vLLM pads with -inf cast to fp8).
  const Safetensors padded = golden_file("edge", "exact", 3);
  EXPECT_NO_THROW(dataset::read_golden_case(padded));
  expect_invalid([&] { dataset::read_golden_case(edited(padded, "decode_lens", set_i32(0, 4))); }, "decode_lens");
  // Errors name the schema's tensors and keys: a NaN MXFP4 scale, a preshuffle page of 8 entries.
  const Safetensors mxfp4 = golden_file("mxfp4", "exact", 0);
  expect_invalid([&] { dataset::read_golden_case(edited(mxfp4, "q_scales", [](auto& b) { b[1] = 0xff; })); }, "q_scales",
                 "NaN");
  Safetensors gfx = golden_file("gfx942", "exact", 0);
  gfx.metadata.erase("page_size");
  const auto& kv = gfx.at("kv_cache");
  expect_invalid([&] { dataset::read_golden_case(replaced(gfx, "kv_cache", Dtype::U8, {kv.shape[0] * 8, 8, 1, 132}, kv.bytes)); },
                 "page_size", "multiple of 16");
  // Candidate blocks: a block twice in a row, a block beyond the width.
  const Safetensors consumer = golden_file("v41_c4a", "exact", 1);
  expect_invalid([&] { dataset::read_golden_case(edited(consumer, "candidate_blocks", [](auto& b) {
                   std::memcpy(b.data() + 4, b.data(), 4);
                 })); },
                 "candidate_blocks", "twice");
  expect_invalid([&] { dataset::read_golden_case(edited(consumer, "candidate_blocks", set_i32(0, 1 << 20))); },
                 "candidate_blocks", "beyond");
}

TEST(GoldenCaseValidation, KernelOutputs) {
  const GoldenCase golden = preset_case("mxfp4", "deepgemm_sm100_bf16", 0);  // bf16 logits
  Safetensors out;
  dataset::put_outputs(out, golden, golden.expected);
  EXPECT_EQ(dataset::read_outputs(out, golden).names(), golden.expected.names());
  expect_invalid([&] { dataset::read_outputs(without(out, "candidate_blocks"), golden); }, "candidate_blocks", "must hold");
  EXPECT_NO_THROW(dataset::read_outputs(without(out, "logits"), golden));
  const auto& l = out.at("logits");
  std::vector<uint8_t> wide(l.bytes.size() * 2);
  expect_invalid([&] { dataset::read_outputs(replaced(out, "logits", Dtype::F32, l.shape, wide), golden); }, "logits",
                 "BF16");
  const auto& t = out.at("topk_indices");
  expect_invalid([&] { dataset::read_outputs(replaced(out, "topk_indices", Dtype::I32, {t.shape[0], t.shape[1] - 1},
                                                      std::vector<uint8_t>(t.bytes.size() - 4 * t.shape[0])),
                                             golden); },
                 "topk_indices", "shape");
}

}  // namespace
}  // namespace dsa::golden_test
