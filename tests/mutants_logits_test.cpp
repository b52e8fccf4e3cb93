// The logits mutants, each on a hand-made step that triggers its bug (shown
// wrong by the comparator of the property it names) and on a benign step
// where it does not fire.
#include <gtest/gtest.h>

#include "dsa/error.hpp"
#include "dsa/padding.hpp"
#include "mutants_test_support.hpp"

namespace dsa {
namespace {

using namespace mutants_testing;

const Profile& exact() { return find_profile("exact"); }

TEST(MutantLogits, VisibleLengthOffByOne) {
  auto m = make("visible_len_off_by_one");
  const DecodeProblem p = step(ElementFormat::e4m3fn, 8, {37, 20}, 3, 1);
  const auto bad = logits_verdict(*m, p, exact());
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.rows_with_mismatch, p.rows());  // each row's newest entry
  EXPECT_EQ(bad.mismatches, p.rows());
  DecodeProblem two_d = p;  // 2-D lengths are taken as given
  two_d.seq_lens_2d = true;
  two_d.seq_lens = {35, 36, 37, 18, 19, 20};
  EXPECT_TRUE(logits_verdict(*m, two_d, exact()).passed);
}

TEST(MutantLogits, FnuzDecodedWithBias7) {
  auto m = make("fnuz_decoded_with_bias_7");
  const Profile& aiter = find_profile("aiter_gfx942_gluon");
  const DecodeProblem fnuz = testing::small_decode_problem(ElementFormat::e4m3fnuz, 32, 128, {40}, 1, 2);
  const auto bad = logits_verdict(*m, fnuz, aiter);
  EXPECT_FALSE(bad.passed);
  // Every nonzero logit is exactly 4 times the reference's.
  const Logits got = run_decode(*m, fnuz, aiter), want = decode_logits(fnuz, aiter).logits;
  int64_t nonzero = 0;
  for (int64_t c = 0; c < 40; ++c)
    if (want.at(0, c) != 0.0f) {
      ++nonzero;
      EXPECT_EQ(got.at(0, c), 4.0f * want.at(0, c)) << c;
    }
  EXPECT_GT(nonzero, 0);
  EXPECT_TRUE(logits_verdict(*m, step(ElementFormat::e4m3fn, 8, {40}, 1, 2), exact()).passed);
}

TEST(MutantLogits, PreshuffleIndicesSwapped) {
  auto m = make("preshuffle_t_d_swapped");
  DecodeProblem flat = testing::small_decode_problem(ElementFormat::e4m3fnuz, 32, 128, {50}, 1, 3);
  DecodeProblem shuffled = flat;
  shuffled.cache = relayout(flat.cache, CacheLayout::preshuffle);
  const Profile& aiter = find_profile("aiter_gfx942_gluon");
  const auto bad = logits_verdict(*m, shuffled, aiter);
  EXPECT_FALSE(bad.passed);
  EXPECT_GT(bad.mismatches, 40);
  EXPECT_TRUE(logits_verdict(*m, flat, aiter).passed);
}

TEST(MutantLogits, ScaleOnTheWrongPartial) {
  auto m = make("sm90_scale_on_parity_partials");
  const Profile& sm90 = find_profile("deepgemm_sm90");
  // Quantizer scales (not powers of two), 64 heads: roundings differ somewhere.
  const DecodeProblem p = testing::small_decode_problem(ElementFormat::e4m3fn, 64, 128, {300}, 1, 4);
  EXPECT_FALSE(logits_verdict(*m, p, sm90).passed);
  // ue8m0 scales: multiplying by a power of two commutes with the roundings.
  SyntheticDecodeConfig c;
  c.batch = 1;
  c.heads = 64;
  c.head_dim = 128;
  c.block_size = 16;
  c.seq_lens = {300};
  c.ue8m0_scale = true;
  Rng rng(4);
  EXPECT_TRUE(logits_verdict(*m, make_decode_problem(c, rng), sm90).passed);
  EXPECT_TRUE(logits_verdict(*m, p, exact()).passed);  // other kernels' profiles are untouched
}

TEST(MutantLogits, VllmPaddedRowLengths) {
  auto m = make("vllm_padded_row_lengths");
  // Request 0 has 1 real row of Lmax = 3: vLLM's rows see 2 entries fewer.
  DecodeProblem p = step(ElementFormat::e4m3fn, 8, {30, 25}, 3, 6);
  p.decode_lens = {1, 3};
  const Logits padded = run_decode(*m, p, exact());
  // padded_equals_unpadded: request 0 run alone (next_n = 1) against its real row.
  DecodeProblem alone = step(ElementFormat::e4m3fn, 8, {30}, 1, 6);
  alone.q.assign(p.q.begin(), p.q.begin() + int64_t(p.q.size() / size_t(p.rows())));
  alone.weights.assign(p.weights.begin(), p.weights.begin() + p.heads);
  alone.cache = p.cache;
  alone.block_table.assign(p.block_table.begin(), p.block_table.begin() + p.max_pages);
  alone.max_pages = p.max_pages;
  alone.logits_width = p.logits_width;
  const Logits own = run_decode(*m, alone, exact());
  const Logits real = unpack_logits(padded, p.decode_lens, p.next_n);
  Logits first_real{1, real.width, {real.row(0), real.row(0) + real.width}};
  const std::vector<int64_t> lens = {visible_len(alone, 0)};
  EXPECT_EQ(lens[0], 30);
  EXPECT_FALSE(oracle::check_logits(first_real, own, lens, bitwise()).passed);
  // Request 1 fills its 3 rows: its rows agree; an unpadded step is right.
  Logits second{3, real.width, {real.row(1), real.row(1) + 3 * real.width}};
  const Logits want = unpack_logits(decode_logits(p, exact()).logits, p.decode_lens, p.next_n);
  Logits want_second{3, want.width, {want.row(1), want.row(1) + 3 * want.width}};
  EXPECT_TRUE(oracle::check_logits(second, want_second, std::vector<int64_t>{23, 24, 25}, bitwise()).passed);
  EXPECT_TRUE(logits_verdict(*m, step(ElementFormat::e4m3fn, 8, {30, 25}, 3, 6), exact()).passed);
}

TEST(MutantLogits, AiterTailPastTheRowLeftFinite) {
  auto m = make("aiter_tail_past_row_finite");
  const DecodeProblem p = step(ElementFormat::e4m3fn, 8, {40, 33}, 3, 7);
  // Windowed, the logits agree; clean mode sees rows j < 2 finite past L_r.
  EXPECT_TRUE(logits_verdict(*m, p, exact(), false).passed);
  const auto bad = logits_verdict(*m, p, exact(), true);
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.mismatches, 2 * (2 + 1));  // per request: 2 entries in row 0, 1 in row 1
  EXPECT_TRUE(logits_verdict(*m, step(ElementFormat::e4m3fn, 8, {40, 33}, 1, 7), exact(), true).passed);
}

TEST(MutantLogits, ScheduleOutOfBoundsWhenEveryLengthIsZero) {
  auto m = make("deepgemm_schedule_oob_all_empty");
  // Warm-up at compress ratio 4: 3 tokens are 0 entries for every row.
  SyntheticDecodeConfig c;
  c.batch = 2;
  c.next_n = 2;
  c.heads = 8;
  c.head_dim = 64;
  c.block_size = 16;
  c.compress_ratio = 4;
  c.seq_lens = {3, 2};
  c.logits_width = 16;
  Rng rng(8);
  const DecodeProblem empty = make_decode_problem(c, rng);
  Logits out = poisoned_logits(empty.rows(), empty.logits_width);
  // logits_agree runs the launch, which dies; the reference takes the step.
  EXPECT_THROW(m->decode_logits(empty, exact(), out), std::runtime_error);
  EXPECT_NO_THROW(decode_logits(empty, exact()));
  // One request with work: the schedule is fine.
  EXPECT_TRUE(logits_verdict(*m, step(ElementFormat::e4m3fn, 8, {0, 9}, 2, 8), exact()).passed);
}

}  // namespace
}  // namespace dsa
