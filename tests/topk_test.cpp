#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "dsa/error.hpp"
#include "dsa/rng.hpp"
#include "dsa/topk.hpp"
#include "test_values.hpp"

namespace dsa {
namespace {

using test::kInf;
using test::kNaN;

std::vector<int32_t> topk_of(const std::vector<float>& v, int k) {
  std::vector<int32_t> out(size_t(k), 12345);
  topk_row(v.data(), int64_t(v.size()), k, out.data());
  return out;
}

TEST(TopkOrderKey, FollowsTheSpecOrder) {
  const std::vector<float> ascending = {-kInf, -3.5f, -1e-40f, 0.0f, 1e-40f, 2.0f, kInf};
  for (size_t i = 0; i + 1 < ascending.size(); ++i)
    EXPECT_LT(topk_order_key(ascending[i]), topk_order_key(ascending[i + 1])) << ascending[i];
  EXPECT_EQ(topk_order_key(-0.0f), topk_order_key(0.0f));
  EXPECT_GT(topk_order_key(kNaN), topk_order_key(kInf));
  EXPECT_EQ(topk_order_key(kNaN), topk_order_key(-kNaN));
  uint32_t payload = 0x7fc0dead;
  float other_nan;
  std::memcpy(&other_nan, &payload, 4);
  EXPECT_EQ(topk_order_key(other_nan), topk_order_key(kNaN));
}

TEST(TopkRow, ShortRowsAreAscendingThenMinusOne) {
  EXPECT_EQ(topk_of({}, 3), (std::vector<int32_t>{-1, -1, -1}));
  EXPECT_EQ(topk_of({5.0f}, 3), (std::vector<int32_t>{0, -1, -1}));
  EXPECT_EQ(topk_of({1.0f, 9.0f}, 3), (std::vector<int32_t>{0, 1, -1}));       // L = k - 1
  EXPECT_EQ(topk_of({1.0f, 9.0f, 4.0f}, 3), (std::vector<int32_t>{0, 1, 2}));  // L = k: ascending, not by value
}

TEST(TopkRow, LongRowsTakeLargestWithLowestIndexOnTies) {
  EXPECT_EQ(topk_of({1.0f, 9.0f, 4.0f, 7.0f}, 3), (std::vector<int32_t>{1, 3, 2}));  // L = k + 1
  EXPECT_EQ(topk_of({2.0f, 2.0f, 2.0f, 2.0f, 2.0f}, 2), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(topk_of({0.0f, -0.0f, 0.0f, -1.0f}, 2), (std::vector<int32_t>{0, 1}));  // -0 ties +0
  EXPECT_EQ(topk_of({-kInf, -kInf, -kInf, 1.0f}, 2), (std::vector<int32_t>{3, 0}));
}

TEST(TopkRow, NanRanksAboveInfinity) {
  EXPECT_EQ(topk_of({kInf, 1.0f, kNaN, kNaN, 3.0f}, 3), (std::vector<int32_t>{2, 3, 0}));
}

TEST(TopkRow, RejectsNonPositiveK) {
  std::vector<int32_t> out(1);
  const float v = 1.0f;
  EXPECT_THROW(topk_row(&v, 1, 0, out.data()), InvalidInput);
  EXPECT_THROW(topk_row(&v, 1, -2, out.data()), InvalidInput);
}

// Against a full stable sort on rows with heavy ties, NaN and -inf.
TEST(TopkRow, AgreesWithAFullSortOnTieHeavyRows) {
  Rng rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t len = rng.uniform_int(0, 300);
    const int k = int(rng.uniform_int(1, 64));
    std::vector<float> v(static_cast<size_t>(len));
    for (auto& x : v) {
      const int64_t kind = rng.uniform_int(0, 9);
      x = kind == 0 ? -kInf : kind == 1 ? kNaN : kind == 2 ? -0.0f : float(rng.uniform_int(-3, 3));
    }
    std::vector<int32_t> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return topk_order_key(v[size_t(a)]) > topk_order_key(v[size_t(b)]);
    });
    std::vector<int32_t> expect(size_t(k), -1);
    if (len <= k)
      std::iota(expect.begin(), expect.begin() + len, 0);
    else
      std::copy_n(order.begin(), k, expect.begin());
    EXPECT_EQ(topk_of(v, k), expect) << "trial " << trial;
  }
}

TEST(TopkRows, DecodeUsesEachRowsLengthAndPrefillIsRelativeToKs) {
  Logits logits{2, 5, {5, 4, 3, 2, 1, 1, 2, 3, 4, 5}};
  const std::vector<int64_t> lens = {5, 2};
  const TopkIndices t = topk_rows(logits, lens, 2);
  EXPECT_EQ(std::vector<int32_t>(t.row(0), t.row(0) + 2), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(std::vector<int32_t>(t.row(1), t.row(1) + 2), (std::vector<int32_t>{0, 1}));
  EXPECT_THROW(topk_rows(logits, std::vector<int64_t>{6, 1}, 2), InvalidInput);

  PrefillProblem p;
  p.rows = 2;
  p.num_k = 5;
  p.ks = {1, 3};
  p.ke = {5, 5};
  const TopkIndices pt = prefill_topk(p, logits, 1);
  EXPECT_EQ(pt.row(0)[0], 0);  // column 1 (value 4) is the largest of [1, 5): index 0 relative to ks
  EXPECT_EQ(pt.row(1)[0], 1);  // column 4 (value 5) of [3, 5): index 1
}

}  // namespace
}  // namespace dsa
