// GroupTopK (optimized/common/select/group_topk.hpp) on the host emulator,
// at warp 32 and wave 64, in groups of one to four blocks whose parts are
// one tile (registers), two (the cache) or more (read again per pass): the
// reference's set, exactly the tree's output (both in position order), every
// entry written, the same on a second run (one group walking every row).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "dsa/oracle/poison.hpp"
#include "dsa/rng.hpp"
#include "dsa/topk.hpp"
#include "select_emulation_support.hpp"
#include "twins_test_support.hpp"

namespace dsa::select_testing {
namespace {

using twins_testing::RowKind;

using GroupWarp32 = Shape<32, 64, 8>;   // a tile of 512, a cache of 1024
using GroupWave64 = Shape<64, 128, 4>;  // a tile of 512

template <class S>
void check_group(const std::vector<int64_t>& lens, int64_t width, RowKind kind, int k, int group, uint64_t seed,
                 int64_t start = 0) {
  Rng rng(seed);
  const auto c = twins_testing::make_case(lens, width + start, kind, rng, start);
  common::select::DenseRows src{c.logits.values.data(), c.logits.width, bounds_span(c)};
  std::vector<int32_t> out(size_t(c.logits.rows) * size_t(k));
  oracle::fill_poison(std::span<int32_t>(out));
  run_group<S>(src, k, group, out);
  std::vector<int32_t> want(out.size());
  for (int64_t r = 0; r < c.logits.rows; ++r)
    topk_row(c.logits.row(r) + c.bounds.start[size_t(r)], lens[size_t(r)], k, want.data() + r * k);
  // The reference's set, in position order (-1 last), as the tree writes it.
  for (int64_t r = 0; r < c.logits.rows; ++r) {
    auto w = want.begin() + r * k;
    std::sort(w, w + k, [](int32_t x, int32_t y) { return (x < 0) != (y < 0) ? y < 0 : x < y; });
  }
  EXPECT_EQ(out, want) << twins_testing::to_string(kind) << " k " << k << " group " << group;
  if (kind != RowKind::quantized) return;
  // Ties at the cut: the same choice on a second run, by one group walking every row.
  std::vector<int32_t> again(out.size());
  oracle::fill_poison(std::span<int32_t>(again));
  run_group<S>(src, k, group, again, 1);
  EXPECT_EQ(again, out);
}

TEST(SelectGroup, EveryRowKindInGroupsOfOneToFourAtWarp32) {
  // Parts of 0 to 4 tiles: registers, the cache, and past it.
  const std::vector<int64_t> lens = {0, 1, 65, 511, 513, 1500, 2600};
  uint64_t seed = 1;
  for (const RowKind kind : twins_testing::kAllRowKinds) {
    check_group<GroupWarp32>(lens, 2600, kind, 64, 1 + int(seed % 4), seed);
    ++seed;
  }
  check_group<GroupWarp32>(lens, 2600, RowKind::quantized, 700, 3, seed++);
  check_group<GroupWarp32>(lens, 2600, RowKind::normal, 1, 2, seed++);
}

TEST(SelectGroup, EveryRowKindAtWave64) {
  const std::vector<int64_t> lens = {0, 7, 1025, 2100};
  uint64_t seed = 100;
  for (const RowKind kind : twins_testing::kAllRowKinds) {
    check_group<GroupWave64>(lens, 2100, kind, 100, 1 + int(seed % 3), seed);
    ++seed;
  }
  check_group<GroupWave64>(lens, 2100, RowKind::minus_inf_heavy, 500, 2, seed++);
}

TEST(SelectGroup, RowsStartingAtAnOffset) { check_group<GroupWarp32>({5, 700, 1200}, 1300, RowKind::normal, 50, 2, 7, 37); }

TEST(SelectGroup, GroupSizeFillsIdleBlocksAndTheCache) {
  using common::select::choose_group;
  EXPECT_EQ(choose_group(8, 131072, 8192, 32768, 132, 8), 8);   // few rows: as many blocks as useful
  EXPECT_EQ(choose_group(64, 131072, 8192, 32768, 132, 8), 4);  // the cache decides
  EXPECT_EQ(choose_group(64, 32768, 8192, 32768, 132, 8), 2);
  EXPECT_EQ(choose_group(256, 131072, 8192, 32768, 132, 8), 4);
  EXPECT_EQ(choose_group(4, 1000, 8192, 32768, 132, 8), 1);       // less than half a tile: one block
  EXPECT_EQ(choose_group(1, 1 << 22, 8192, 32768, 132, 8), 8);   // past the cache: re-read per pass
  EXPECT_EQ(choose_group(0, 0, 8192, 32768, 132, 8), 1);
}

}  // namespace
}  // namespace dsa::select_testing
