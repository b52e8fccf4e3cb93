// Every kind of bad input is a clear InvalidInput naming the argument, never a
// crash or a silent wrong answer.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "dsa/error.hpp"
#include "dsa/logits.hpp"
#include "dsa/topk.hpp"
#include "test_support.hpp"

namespace dsa {
namespace {

using test::small_decode;

void expect_invalid(const DecodeProblem& p, const std::string& argument, const std::string& fragment) {
  try {
    decode_logits(p, find_profile("exact"));
    FAIL() << "accepted a problem with bad " << argument;
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), argument) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

void set_scale(DecodeProblem& p, int32_t page, int32_t slot, float v) {
  std::memcpy(p.cache.bytes.data() + size_t(page) * p.cache.page_bytes() + p.cache.scale_offset(slot), &v, 4);
}

TEST(DecodeValidation, AcceptsAGoodProblem) { EXPECT_NO_THROW(small_decode({20, 5}).validate()); }

TEST(DecodeValidation, ShapesThatDisagree) {
  DecodeProblem p = small_decode({20});
  p.q.pop_back();
  expect_invalid(p, "q", "expected");
  p = small_decode({20});
  p.weights.push_back(1.0f);
  expect_invalid(p, "weights", "expected");
  p = small_decode({20, 3});
  p.seq_lens.pop_back();
  expect_invalid(p, "seq_lens", "1-D");
  p = small_decode({20});
  p.block_table.push_back(0);
  expect_invalid(p, "block_table", "expected");
  p = small_decode({20});
  p.head_dim = 96;
  expect_invalid(p, "kv_cache", "head_dim");
}

TEST(DecodeValidation, PageIdOutsideTheCache) {
  DecodeProblem p = small_decode({20});
  p.block_table[1] = p.cache.num_pages;
  expect_invalid(p, "block_table", std::to_string(p.cache.num_pages));
  p.block_table[1] = -1;
  expect_invalid(p, "block_table", "-1");
}

TEST(DecodeValidation, LengthBeyondThePageTable) {
  DecodeProblem p = small_decode({20});  // 2 pages of 16
  p.seq_lens[0] = 40;
  p.logits_width = 64;
  expect_invalid(p, "seq_lens", "block table");
}

TEST(DecodeValidation, LengthBeyondTheLogitsWidth) {
  DecodeProblem p = small_decode({20});
  p.logits_width = 19;
  expect_invalid(p, "seq_lens", "logits width");
}

TEST(DecodeValidation, NegativeLengths) {
  DecodeProblem p = small_decode({20});
  p.seq_lens[0] = -3;
  expect_invalid(p, "seq_lens", "negative");
}

TEST(DecodeValidation, NanInWeightsAndScales) {
  DecodeProblem p = small_decode({20});
  p.weights[5] = std::nanf("");
  expect_invalid(p, "weights", "nan");
  p = small_decode({20});
  p.weights[0] = std::numeric_limits<float>::infinity();
  expect_invalid(p, "weights", "inf");
  p = small_decode({20});
  set_scale(p, p.block_table[1], 3, std::nanf(""));
  expect_invalid(p, "kv_cache", "nan");
  p = small_decode({20});
  set_scale(p, p.block_table[0], 0, -1.0f);
  expect_invalid(p, "kv_cache", "-1");
}

TEST(DecodeValidation, NanQueryOnlyInPaddedRows) {
  DecodeProblem p = small_decode({20});
  p.q[70] = 0x7f;
  expect_invalid(p, "q", "0x7f");
  // The same NaN byte in a row declared as padding is what vLLM's pack writes: accepted.
  DecodeProblem padded = small_decode({20}, 2);
  padded.decode_lens = {1};
  std::fill(padded.q.begin() + padded.heads * padded.head_dim, padded.q.end(), uint8_t(0x7f));
  EXPECT_NO_THROW(decode_logits(padded, find_profile("exact")));
  padded.decode_lens = {3};
  expect_invalid(padded, "decode_lens", "outside");
}

TEST(DecodeValidation, FormatThatDisagreesWithTheCache) {
  DecodeProblem p = small_decode({20});
  p.element = ElementFormat::e4m3fnuz;
  expect_invalid(p, "kv_cache", "e4m3fn");
}

TEST(DecodeValidation, ZeroOrNegativeTopK) {
  const DecodeProblem p = small_decode({20});
  const auto logits = decode_logits(p, find_profile("exact")).logits;
  EXPECT_THROW(decode_topk(p, logits, 0), InvalidInput);
  EXPECT_THROW(decode_topk(p, logits, -1), InvalidInput);
}

TEST(DecodeValidation, UnknownProfile) { EXPECT_THROW(find_profile("deepgemm_sm42"), InvalidInput); }

TEST(PrefillValidation, RangesAndValues) {
  SyntheticPrefillConfig c;
  c.rows = 3;
  c.heads = 8;
  c.head_dim = 64;
  c.num_k = 50;
  Rng rng(3);
  PrefillProblem p = make_prefill_problem(c, rng);
  EXPECT_NO_THROW(p.validate());
  PrefillProblem bad = p;
  bad.ke[1] = 51;
  EXPECT_THROW(bad.validate(), InvalidInput);
  bad = p;
  bad.ks[0] = 10, bad.ke[0] = 5;
  EXPECT_THROW(bad.validate(), InvalidInput);
  bad = p;
  bad.k_scales[7] = std::nanf("");
  EXPECT_THROW(bad.validate(), InvalidInput);
  bad = p;
  bad.q[3] = 0xff;
  EXPECT_THROW(bad.validate(), InvalidInput);
}

}  // namespace
}  // namespace dsa
