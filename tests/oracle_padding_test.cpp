// The oracle's padding rules: where pack_seq_triton and unpack_seq_triton put
// each row (hand-worked layouts, then against the reference's), what a wrong
// move is reported as, and the skip_decode_fill rule.
#include <gtest/gtest.h>

#include <numeric>

#include "dsa/error.hpp"
#include "dsa/oracle/padding_check.hpp"
#include "dsa/padding.hpp"
#include "dsa/rng.hpp"

namespace dsa::oracle {
namespace {

// decode_lens {2, 1, 3} with next_n 3: ragged rows 0..5 of 2 bytes; packed rows 0, 1 | 3 | 6, 7, 8 real.
const std::vector<int32_t> kLens{2, 1, 3};
std::vector<uint8_t> ragged() {
  std::vector<uint8_t> r(12);
  std::iota(r.begin(), r.end(), uint8_t(1));
  return r;
}

TEST(OraclePadding, PackedRowsByHand) {
  const std::vector<uint8_t> packed{1, 2, 3, 4,  9,  9,    // request 0
                                    5, 6, 9, 9,  9,  9,    // request 1
                                    7, 8, 9, 10, 11, 12};  // request 2
  EXPECT_TRUE(check_packed_rows(ragged(), 2, kLens, 3, 9, packed).passed);
  // The same as the reference's pack_rows.
  const auto ref = pack_rows<uint8_t>(ragged(), kLens, 3, 2, 9);
  EXPECT_EQ(ref, packed);

  std::vector<uint8_t> wrong = packed;
  wrong[5] = 0;   // a pad byte of request 0's slot 2
  wrong[12] = 5;  // request 2's first row starts one byte early
  const auto v = check_packed_rows(ragged(), 2, kLens, 3, 9, wrong);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.rows_wrong, 2);
  ASSERT_EQ(v.first_rows.size(), 2u);
  EXPECT_EQ(v.first_rows[0].row, 2);
  EXPECT_EQ(v.first_rows[0].source, -1);
  EXPECT_EQ(v.first_rows[0].first_col, 1);
  EXPECT_EQ(v.first_rows[1].row, 6);
  EXPECT_EQ(v.first_rows[1].source, 3);
  EXPECT_EQ(v.first_rows[1].actual, 5);
  EXPECT_EQ(v.first_rows[1].expected, 7);
  EXPECT_NE(format_table(v).find("pad"), std::string::npos);
}

TEST(OraclePadding, UnpackedTopkAgainstTheReference) {
  Rng rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const int32_t next_n = int32_t(rng.uniform_int(1, 4));
    std::vector<int32_t> lens;
    for (int b = 0; b < int(rng.uniform_int(1, 5)); ++b) lens.push_back(int32_t(rng.uniform_int(1, next_n)));
    const int32_t k = int32_t(rng.uniform_int(1, 6));
    TopkIndices padded{int64_t(lens.size()) * next_n, k, {}};
    for (int64_t i = 0; i < padded.rows * k; ++i) padded.indices.push_back(int32_t(rng.uniform_int(-1, 50)));
    const TopkIndices ref = unpack_topk(padded, lens, next_n);
    EXPECT_TRUE(check_unpacked_topk(padded, lens, ref).passed);
    if (ref.rows == 0) continue;
    TopkIndices shifted = ref;  // every real row taken from the padded row before it
    for (int64_t r = 0; r + 1 < ref.rows; ++r) std::copy_n(ref.row(r + 1), k, shifted.indices.begin() + r * k);
    if (shifted.indices != ref.indices) {
      EXPECT_FALSE(check_unpacked_topk(padded, lens, shifted).passed);
    }
  }
}

TEST(OraclePadding, PadSlotsHoldOnlyMinusOne) {
  // kLens {2, 1, 3}, next_n 3, k 2: pad slots are rows 2, 4 and 5; real rows may hold anything.
  TopkIndices step{9, 2, std::vector<int32_t>(18, 7)};
  for (const int64_t r : {2, 4, 5}) step.row(r)[0] = step.row(r)[1] = -1;
  EXPECT_TRUE(check_pad_slots(step, kLens).passed);

  step.row(4)[1] = 3;  // request 1's pad slot 1: an index from its garbage logits
  step.row(5)[0] = 0;
  step.row(5)[1] = 1;
  const auto v = check_pad_slots(step, kLens);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.rows_wrong, 2);
  EXPECT_EQ(v.entries_wrong, 3);
  ASSERT_EQ(v.first_rows.size(), 2u);
  EXPECT_EQ(v.first_rows[0].row, 4);
  EXPECT_EQ(v.first_rows[0].source, -1);
  EXPECT_EQ(v.first_rows[0].first_col, 1);
  EXPECT_EQ(v.first_rows[0].actual, 3);
  EXPECT_EQ(v.first_rows[0].expected, -1);
  EXPECT_EQ(v.first_rows[1].row, 5);
  EXPECT_EQ(v.first_rows[1].first_col, 0);
  EXPECT_NE(format_table(v).find("pad"), std::string::npos);

  // The reference's pack_rows with pad -1 gives what the rule asks of pad slots.
  const TopkIndices ragged{6, 2, std::vector<int32_t>(12, 5)};
  const TopkIndices packed{9, 2, pack_rows<int32_t>(ragged.indices, kLens, 3, 2, -1)};
  EXPECT_TRUE(check_pad_slots(packed, kLens).passed);
}

TEST(OraclePadding, BadLengthsAndSizesNameTheArgument) {
  auto argument = [](auto&& f) {
    try {
      f();
    } catch (const InvalidInput& e) {
      return e.argument();
    }
    return std::string("(none)");
  };
  const std::vector<uint8_t> packed(18, 9);
  EXPECT_EQ(argument([&] { check_packed_rows(ragged(), 2, std::vector<int32_t>{2, 0, 3}, 3, 9, packed); }),
            "decode_lens");
  EXPECT_EQ(argument([&] { check_packed_rows(ragged(), 2, std::vector<int32_t>{2, 1, 4}, 3, 9, packed); }),
            "decode_lens");
  EXPECT_EQ(argument([&] { check_packed_rows(ragged(), 3, kLens, 3, 9, packed); }), "ragged");
  EXPECT_EQ(argument([&] { check_packed_rows(ragged(), 2, kLens, 3, 9, std::vector<uint8_t>(16)); }), "packed");
  const TopkIndices padded{9, 2, std::vector<int32_t>(18)};
  EXPECT_EQ(argument([&] { check_unpacked_topk(padded, kLens, TopkIndices{5, 2, std::vector<int32_t>(10)}); }),
            "topk_indices");
  EXPECT_EQ(argument([&] { check_unpacked_topk(padded, std::vector<int32_t>{2, 2}, padded); }), "decode_lens");
  EXPECT_EQ(argument([&] { check_pad_slots(padded, std::vector<int32_t>{2, 2}); }), "decode_lens");
  EXPECT_EQ(argument([&] { check_pad_slots(padded, std::vector<int32_t>{2, 4, 1}); }), "decode_lens");
  EXPECT_EQ(argument([&] { check_pad_slots(TopkIndices{9, 2, std::vector<int32_t>(17)}, kLens); }), "padded");
}

TEST(OraclePadding, SkipDecodeFillOnlyWhenEveryEntryIsWritten) {
  EXPECT_TRUE(may_skip_decode_fill(false, 8, 8, false));
  EXPECT_FALSE(may_skip_decode_fill(true, 8, 8, false));   // prefill rows share the buffer
  EXPECT_FALSE(may_skip_decode_fill(false, 7, 8, false));  // not every token a decode token
  EXPECT_FALSE(may_skip_decode_fill(false, 8, 8, true));   // padded requests leave rows to -1
  for (const bool prefill : {false, true})
    for (const bool padding : {false, true})
      for (const int64_t decode : {0, 3, 8})
        EXPECT_EQ(may_skip_decode_fill(prefill, decode, 8, padding), skip_decode_fill(prefill, decode, 8, padding));
}

}  // namespace
}  // namespace dsa::oracle
