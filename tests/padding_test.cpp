// Padding of decode rows (SPEC 5): pack / unpack, the pad bytes, the lengths
// of padded requests (causal and vLLM's), and skip_decode_fill.
#include <gtest/gtest.h>

#include <algorithm>

#include "candidate_test_support.hpp"
#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/logits.hpp"
#include "dsa/padding.hpp"
#include "dsa/topk.hpp"

namespace dsa {
namespace {

using testing::bits_of;
using testing::kInf;

TEST(PackRows, RealRowsFirstPaddingAtTheEnd) {
  const std::vector<uint8_t> rows = {1, 2, 3, 4, 5, 6, 7, 8};  // request 0: 1 row, request 1: 3 rows of 2
  const std::vector<int32_t> lens = {1, 3};
  const auto packed = pack_rows<uint8_t>(rows, lens, 3, 2, 0xee);
  EXPECT_EQ(packed, (std::vector<uint8_t>{1, 2, 0xee, 0xee, 0xee, 0xee, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(unpack_rows<uint8_t>(packed, lens, 3, 2), rows);
  EXPECT_THROW(pack_rows<uint8_t>(rows, lens, 2, 2, 0), InvalidInput);           // d_b > next_n
  EXPECT_THROW(pack_rows<uint8_t>(rows, std::vector<int32_t>{1, 2}, 3, 2, 0), InvalidInput);  // 6 values expected
  EXPECT_THROW(unpack_rows<uint8_t>(rows, lens, 3, 2), InvalidInput);            // 12 values expected
  EXPECT_THROW(pack_rows<uint8_t>(rows, std::vector<int32_t>{0, 4}, 4, 2, 0), InvalidInput);
  EXPECT_THROW(max_decode_len({}), InvalidInput);
  EXPECT_EQ(max_decode_len(lens), 3);
}

TEST(PackRows, QPadIsANaNByteForFp8AndZeroForMxfp4) {
  EXPECT_EQ(q_pad_byte(ElementFormat::e4m3fn), fp8_pad_code(Fp8Format::e4m3fn));
  EXPECT_TRUE(fp8_is_nan(Fp8Format::e4m3fn, q_pad_byte(ElementFormat::e4m3fn)));
  EXPECT_EQ(q_pad_byte(ElementFormat::e4m3fnuz), 0x80);
  EXPECT_EQ(q_pad_byte(ElementFormat::mxfp4), 0);
}

TEST(PackRows, UnpackOfPackIsTheIdentity) {
  testing::check_property(200, [] {
    const auto lens = *rc::gen::nonEmpty(rc::gen::container<std::vector<int32_t>>(rc::gen::inRange(1, 6)));
    const int32_t next_n = *rc::gen::inRange(*std::max_element(lens.begin(), lens.end()), 7);
    const size_t row_size = *rc::gen::inRange<size_t>(1, 9);
    int64_t total = 0;
    for (int32_t d : lens) total += d;
    const auto n = size_t(total) * row_size;
    const auto bytes = *rc::gen::container<std::vector<uint8_t>>(n, rc::gen::arbitrary<uint8_t>());
    const auto ints = *rc::gen::container<std::vector<int32_t>>(n, rc::gen::arbitrary<int32_t>());
    const auto raw = *rc::gen::container<std::vector<uint32_t>>(n, rc::gen::arbitrary<uint32_t>());
    std::vector<float> floats(n);  // every bit pattern, NaNs included: compared by bits
    for (size_t i = 0; i < n; ++i) std::memcpy(&floats[i], &raw[i], 4);

    const auto pb = pack_rows<uint8_t>(bytes, lens, next_n, row_size, 0x7f);
    RC_ASSERT(pb.size() == lens.size() * size_t(next_n) * row_size);
    RC_ASSERT(unpack_rows<uint8_t>(pb, lens, next_n, row_size) == bytes);
    RC_ASSERT(unpack_rows<int32_t>(pack_rows<int32_t>(ints, lens, next_n, row_size, -1), lens, next_n, row_size) == ints);
    const auto back = unpack_rows<float>(pack_rows<float>(floats, lens, next_n, row_size, -kInf), lens, next_n, row_size);
    RC_ASSERT(back.size() == n);
    for (size_t i = 0; i < n; ++i) RC_ASSERT(bits_of(back[i]) == raw[i]);
    // Every slot j >= d_b holds the pad.
    for (size_t b = 0; b < lens.size(); ++b)
      for (int32_t j = lens[b]; j < next_n; ++j)
        for (size_t e = 0; e < row_size; ++e) RC_ASSERT(pb[(b * size_t(next_n) + size_t(j)) * row_size + e] == 0x7f);
  });
}

// Two requests of a step: request 0 has 1 real row of 4, request 1 all 4.
struct PaddedStep {
  DecodeProblem base;    // next_n = 4 for both requests, as drawn
  RaggedDecodeRows ragged;
  DecodeProblem padded;  // base with the ragged rows packed in
};

PaddedStep padded_step(ElementFormat element) {
  PaddedStep s;
  s.base = testing::small_decode_problem(element, 8, 64, {40, 33}, 4, 12);
  const size_t q_row = size_t(8) * (element == ElementFormat::mxfp4 ? 32 : 64), scale_row = 8 * 2, w_row = 8;
  s.ragged.decode_lens = {1, 4};
  for (const int64_t row : {0, 4, 5, 6, 7}) {
    auto take = [&](auto& dst, const auto& src, size_t size) {
      dst.insert(dst.end(), src.begin() + ptrdiff_t(size_t(row) * size), src.begin() + ptrdiff_t(size_t(row + 1) * size));
    };
    take(s.ragged.q, s.base.q, q_row);
    take(s.ragged.weights, s.base.weights, w_row);
    if (element == ElementFormat::mxfp4) take(s.ragged.q_block_scales, s.base.q_block_scales, scale_row);
  }
  s.padded = s.base;
  pack_decode_rows(s.padded, s.ragged);
  return s;
}

TEST(PackDecodeRows, OneOfFourRowsReal) {
  for (const ElementFormat e : {ElementFormat::e4m3fn, ElementFormat::e4m3fnuz, ElementFormat::mxfp4}) {
    const PaddedStep s = padded_step(e);
    const DecodeProblem& p = s.padded;
    EXPECT_EQ(p.next_n, 4);
    EXPECT_EQ(p.decode_lens, (std::vector<int32_t>{1, 4}));
    EXPECT_NO_THROW(p.validate());
    const size_t q_row = p.q.size() / 8;
    for (int64_t row = 0; row < 8; ++row) {
      const bool padded = row >= 1 && row <= 3;
      EXPECT_EQ(p.is_padded_row(row), padded);
      for (size_t i = 0; i < q_row; ++i)
        ASSERT_EQ(p.q[size_t(row) * q_row + i], padded ? q_pad_byte(e) : s.base.q[size_t(row) * q_row + i])
            << to_string(e) << " row " << row;
      for (int h = 0; h < 8; ++h)
        EXPECT_EQ(p.weights[size_t(row) * 8 + size_t(h)], padded ? 0.0f : s.base.weights[size_t(row) * 8 + size_t(h)]);
    }
    if (e == ElementFormat::mxfp4) {
      for (size_t i = 16; i < 4 * 16; ++i) EXPECT_EQ(p.q_block_scales[i], 0) << i;
    }
    const RaggedDecodeRows back = unpack_decode_rows(p);
    EXPECT_EQ(back.decode_lens, s.ragged.decode_lens);
    EXPECT_EQ(back.q, s.ragged.q);
    EXPECT_EQ(back.q_block_scales, s.ragged.q_block_scales);
    EXPECT_EQ(back.weights, s.ragged.weights);
  }
}

TEST(PackDecodeRows, LengthsOfAPaddedRequestCausalAndVllm) {
  PaddedStep s = padded_step(ElementFormat::e4m3fn);
  // Causal: real row j of request b sees L_b - d_b + j + 1; padded rows see nothing.
  EXPECT_EQ(visible_lens(s.padded), (std::vector<int64_t>{40, 0, 0, 0, 30, 31, 32, 33}));
  EXPECT_EQ(candidate_row_ends(s.padded), (std::vector<int64_t>{40, 0, 0, 0, 33, 33, 33, 33}));
  // vLLM's metadata: every row max(0, L_b - Lmax + 1 + j), Lmax - d_b = 3 short for request 0.
  s.padded.padded_lengths = PaddedLengths::vllm_padded;
  EXPECT_EQ(visible_lens(s.padded), (std::vector<int64_t>{37, 0, 0, 0, 30, 31, 32, 33}));
}

TEST(PackDecodeRows, RealRowsMatchTheSameRowsUnpadded) {
  const PaddedStep s = padded_step(ElementFormat::e4m3fn);
  // The same five rows as a step of single-row requests (vLLM's varlen layout).
  DecodeProblem flat = s.base;
  flat.batch = 5;
  flat.next_n = 1;
  flat.seq_lens = {40, 30, 31, 32, 33};
  flat.q = s.ragged.q;
  flat.weights = s.ragged.weights;
  flat.block_table.clear();
  for (const int32_t b : {0, 1, 1, 1, 1})
    flat.block_table.insert(flat.block_table.end(), s.base.block_table.begin() + b * s.base.max_pages,
                            s.base.block_table.begin() + (b + 1) * s.base.max_pages);
  const Profile& profile = find_profile("deepgemm_sm90");
  const Logits padded_logits = decode_logits(s.padded, profile).logits;
  const Logits flat_logits = decode_logits(flat, profile).logits;
  for (int64_t row = 1; row <= 3; ++row)
    for (int64_t n = 0; n < padded_logits.width; ++n) ASSERT_EQ(padded_logits.at(row, n), -kInf);
  const Logits unpacked = unpack_logits(padded_logits, s.ragged.decode_lens, 4);
  ASSERT_EQ(unpacked.rows, 5);
  for (size_t i = 0; i < unpacked.values.size(); ++i)
    ASSERT_EQ(bits_of(unpacked.values[i]), bits_of(flat_logits.values[i])) << i;
  for (const int k : {8, 33, 40, 64}) {
    const TopkIndices padded_topk = decode_topk(s.padded, padded_logits, k);
    EXPECT_EQ(std::count(padded_topk.row(2), padded_topk.row(2) + k, -1), k);
    EXPECT_EQ(unpack_topk(padded_topk, s.ragged.decode_lens, 4).indices, decode_topk(flat, flat_logits, k).indices);
  }
}

TEST(SkipDecodeFill, OnlyWhenEveryEntryIsWrittenByTheDecodeTopk) {
  EXPECT_TRUE(skip_decode_fill(false, 8, 8, false));
  EXPECT_FALSE(skip_decode_fill(true, 8, 8, false));   // prefill rows in the step
  EXPECT_FALSE(skip_decode_fill(false, 6, 8, false));  // rows beyond the decode rows
  EXPECT_FALSE(skip_decode_fill(false, 8, 8, true));   // a padded row
  EXPECT_TRUE(skip_decode_fill(false, 0, 0, false));
  EXPECT_THROW(skip_decode_fill(false, 9, 8, false), InvalidInput);
  EXPECT_THROW(skip_decode_fill(false, -1, 8, false), InvalidInput);

  const PaddedStep s = padded_step(ElementFormat::e4m3fn);
  EXPECT_TRUE(requires_padding(s.padded));
  EXPECT_FALSE(skip_decode_fill(false, 5, 5, requires_padding(s.padded)));
  EXPECT_FALSE(requires_padding(std::vector<int32_t>{4, 4}, 4));
  EXPECT_TRUE(requires_padding(std::vector<int32_t>{4, 3}, 4));
  EXPECT_THROW(requires_padding(std::vector<int32_t>{5}, 4), InvalidInput);
}

}  // namespace
}  // namespace dsa
