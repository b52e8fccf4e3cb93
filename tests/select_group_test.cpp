// GroupTopK (optimized/common/select/group_topk.hpp) on the host emulator,
// at warp 32 and wave 64, in groups of one to four blocks whose parts are
// one tile (registers), two (the cache) or more (read again per pass): the
// reference's set, exactly the tree's output (both in position order), every
// entry written, the same on a second run (one group walking every row).
// RowTopK (row_topk.hpp) the same, with rows staged in shared memory and past
// the stage, and threshold bins that fit its list or overflow it; and
// ShortRowTopK (short_row_topk.hpp) on every way a row can go.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "dsa/oracle/poison.hpp"
#include "dsa/rng.hpp"
#include "dsa/common/select/row_topk.hpp"
#include "dsa/common/select/short_row_topk.hpp"
#include "dsa/topk.hpp"
#include "select_emulation_support.hpp"
#include "twins_test_support.hpp"

namespace dsa::select_testing {
namespace {

using twins_testing::RowKind;

using GroupWarp32 = Shape<32, 64, 8>;   // a tile of 512, a cache of 1024
using GroupWave64 = Shape<64, 128, 4>;  // a tile of 512

// RowTopK on the emulator: a stage of two tiles, rows of at most eight.
template <class S>
using EmulatedRow = common::select::RowTopK<common::arch::HostSimt<S::kLanes>, S::kThreads, S::kItems,
                                            2 * S::kThreads * S::kItems, 8 * S::kThreads * S::kItems>;

// Runs a block-per-row launch (RowTopK, ShortRowTopK) over `src` on `grid` persistent blocks (0: one per row).
template <class S, class Launch, class Source>
void run_persistent(const Source& src, int32_t k, std::vector<int32_t>& out, int grid) {
  using Arch = common::arch::HostSimt<S::kLanes>;
  if (src.rows() == 0) return;
  common::arch::host_launch<S::kLanes, typename Launch::Shared>(
      grid > 0 ? grid : int(src.rows()), S::kThreads,
      [&](const Arch& a, typename Launch::Shared& sh) { Launch::run(a, sh, src, k, out.data()); });
}

template <class S, class Source>
void run_row(const Source& src, int32_t k, std::vector<int32_t>& out, int grid = 0) {
  run_persistent<S, EmulatedRow<S>>(src, k, out, grid);
}

// Runs a launch (run(src, k, out, persistent)) on a case and compares it with the reference.
template <class Run>
void check_launch(const std::vector<int64_t>& lens, int64_t width, RowKind kind, int k, uint64_t seed, int64_t start,
                  const std::string& what, Run&& run) {
  Rng rng(seed);
  const auto c = twins_testing::make_case(lens, width + start, kind, rng, start);
  common::select::DenseRows src{c.logits.values.data(), c.logits.width, bounds_span(c)};
  std::vector<int32_t> out(size_t(c.logits.rows) * size_t(k));
  oracle::fill_poison(std::span<int32_t>(out));
  run(src, k, out, false);
  std::vector<int32_t> want(out.size());
  for (int64_t r = 0; r < c.logits.rows; ++r)
    topk_row(c.logits.row(r) + c.bounds.start[size_t(r)], lens[size_t(r)], k, want.data() + r * k);
  // The reference's set, in position order (-1 last), as the tree writes it.
  for (int64_t r = 0; r < c.logits.rows; ++r) {
    auto w = want.begin() + r * k;
    std::sort(w, w + k, [](int32_t x, int32_t y) { return (x < 0) != (y < 0) ? y < 0 : x < y; });
  }
  EXPECT_EQ(out, want) << twins_testing::to_string(kind) << " k " << k << " " << what;
  if (kind != RowKind::quantized) return;
  // Ties at the cut: the same choice on a second run, by one group walking every row.
  std::vector<int32_t> again(out.size());
  oracle::fill_poison(std::span<int32_t>(again));
  run(src, k, again, true);
  EXPECT_EQ(again, out);
}

template <class S>
void check_group(const std::vector<int64_t>& lens, int64_t width, RowKind kind, int k, int group, uint64_t seed,
                 int64_t start = 0) {
  check_launch(lens, width, kind, k, seed, start, "group " + std::to_string(group),
               [&](const auto& src, int32_t kk, std::vector<int32_t>& out, bool persistent) {
                 run_group<S>(src, kk, group, out, persistent ? 1 : 0);
               });
}

// ShortRowTopK on the emulator: rows of at most one tile.
template <class S>
using EmulatedShort = common::select::ShortRowTopK<common::arch::HostSimt<S::kLanes>, S::kThreads, S::kItems>;
using ShortWarp32 = Shape<32, 128, 16>;  // a tile of 2048: threshold bins within the list (512) and past it
using ShortWave64 = Shape<64, 256, 8>;

// Runs ShortRowTopK over `src` on `grid` persistent blocks (0: one per row); `ways` gets each row's way.
template <class S, class Source>
void run_short(const Source& src, int32_t k, std::vector<int32_t>& out, int grid = 0,
               std::vector<typename EmulatedShort<S>::Way>* ways = nullptr) {
  using Arch = common::arch::HostSimt<S::kLanes>;
  using Short = EmulatedShort<S>;
  if (!ways) return run_persistent<S, Short>(src, k, out, grid);
  if (src.rows() == 0) return;
  // A block per row, each row's way read from its block's shared memory.
  ways->assign(size_t(src.rows()), Short::Way::every_entry);
  common::arch::host_launch<S::kLanes, typename Short::Shared>(
      int(src.rows()), S::kThreads, [&](const Arch& a, typename Short::Shared& sh) {
        Short::prepare(a, sh);
        int ring = 0;
        Short::select_row(a, sh, src, a.block(), k, out.data() + a.block() * int64_t(k), ring);
        if (a.thread() == 0) (*ways)[size_t(a.block())] = sh.way;
      });
}

template <class S>
void check_short(const std::vector<int64_t>& lens, int64_t width, RowKind kind, int k, uint64_t seed,
                 int64_t start = 0) {
  check_launch(lens, width, kind, k, seed, start, "short-row kernel",
               [&](const auto& src, int32_t kk, std::vector<int32_t>& out, bool persistent) {
                 run_short<S>(src, kk, out, persistent ? 1 : 0);
               });
}

template <class S>
void check_row(const std::vector<int64_t>& lens, int64_t width, RowKind kind, int k, uint64_t seed, int64_t start = 0) {
  check_launch(lens, width, kind, k, seed, start, "row kernel",
               [&](const auto& src, int32_t kk, std::vector<int32_t>& out, bool persistent) {
                 run_row<S>(src, kk, out, persistent ? 1 : 0);
               });
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

// Rows of 0 to 8 tiles: staged (up to 2 tiles) and read again (past them), bins in the list and past it.
TEST(SelectRow, EveryRowKindStagedAndStreamedAtWarp32) {
  const std::vector<int64_t> lens = {0, 1, 65, 511, 1024, 1025, 2600, 4096};
  uint64_t seed = 200;
  for (const RowKind kind : twins_testing::kAllRowKinds) {
    check_row<GroupWarp32>(lens, 4096, kind, 64, seed);
    ++seed;
  }
  check_row<GroupWarp32>(lens, 4096, RowKind::quantized, 700, seed++);
  check_row<GroupWarp32>(lens, 4096, RowKind::minus_inf_heavy, 700, seed++);
  check_row<GroupWarp32>(lens, 4096, RowKind::normal, 1, seed++);
  check_row<GroupWarp32>({5, 700, 3000}, 3100, RowKind::normal, 50, seed++, 37);  // rows at an offset
}

// A tile of 8192 (256 threads of 32), as the kernels' 1024 x 8: the sample is 4096 entries, 16 a thread, not one
// a key of the tile; rows past the stage (16384) of every kind, k up to half the list.
TEST(SelectRow, TilesPastTheSampleDrawTheirSampleOf4096) {
  using Wide = Shape<32, 256, 32>;
  static_assert(common::select::RowSample<EmulatedRow<Wide>>::kSampleItems == 16);
  const std::vector<int64_t> lens = {16385, 23000, 40000};
  uint64_t seed = 250;
  for (const RowKind kind : twins_testing::kAllRowKinds) check_row<Wide>(lens, 40000, kind, 512, seed++);
  check_row<Wide>(lens, 40000, RowKind::normal, 4096, seed++);
}

// The coarse digit: the key's sign, then exponents 112..143 and 5 mantissa
// bits, clamped (written out here as the definition), monotone in the key.
TEST(SelectRow, CoarseDigitIsTheClampedFp16DigitAndMonotone) {
  using Row = EmulatedRow<GroupWarp32>;
  auto definition = [](uint32_t key) {
    const uint32_t bits = key & 0x7fffffffu, exponent = bits >> 23;
    const uint32_t inner = ((exponent - 112u) << 5) | ((bits >> 18) & 31u);
    return ((key >> 31) << 10) | (exponent < 112u ? 0u : exponent > 143u ? 1023u : inner);
  };
  uint32_t previous = 0;
  for (uint64_t key = 0; key <= 0xffffffffull; key += 65521u) {
    const uint32_t d = Row::coarse_digit(uint32_t(key));
    ASSERT_EQ(d, definition(uint32_t(key))) << key;
    ASSERT_GE(d, previous) << key;
    previous = d;
  }
  for (const uint32_t key : {0u, 0x007fffffu, 0x7fffffffu, 0x80000000u, 0xff800000u, 0xffffffffu, 0xb8000000u,
                             0xb7ffffffu, 0xc7fc0000u, 0xc7fbffffu, 0x38000000u, 0x47fc0000u})
    EXPECT_EQ(Row::coarse_digit(key), definition(key)) << key;
}

// The split's bounds: coarse_digit_floor(d) is the last key of digit d or below, for every digit.
TEST(SelectRow, DigitFloorIsTheLastKeyAtOrBelowEachDigit) {
  EXPECT_EQ(common::coarse_digit_floor(-1), 0u);
  EXPECT_EQ(common::coarse_digit_floor(common::kCoarseBins - 1), 0xffffffffu);
  for (int d = 0; d < common::kCoarseBins - 1; ++d) {
    const uint32_t last = common::coarse_digit_floor(d);
    ASSERT_LE(int(common::coarse_digit(last)), d) << "digit " << d;
    ASSERT_GT(int(common::coarse_digit(last + 1u)), d) << "digit " << d;
  }
}

// The reference's top k positions of a row's first `len` values, in position order (the row kernel's output order).
std::vector<int32_t> reference_positions(const float* row, int64_t len, int32_t k) {
  std::vector<int32_t> want(static_cast<size_t>(k));
  topk_row(row, len, k, want.data());
  std::sort(want.begin(), want.end());
  return want;
}

// Runs RowTopK over every row of a dense case (a block a row), the way each row went into `ways`.
template <class S>
std::vector<int32_t> row_outcomes(const std::vector<float>& values, int64_t rows, int64_t width, int32_t k,
                                  std::vector<int32_t>& out) {
  using Arch = common::arch::HostSimt<S::kLanes>;
  using Row = EmulatedRow<S>;
  std::vector<int64_t> start(size_t(rows), 0), end(size_t(rows), width);
  const common::select::DenseRows src{values.data(), width,
                                      common::RowSpan::of_bounds(rows, width, start.data(), end.data())};
  std::vector<int32_t> ways(size_t(rows), -1);
  out.assign(size_t(rows * k), 0);
  oracle::fill_poison(std::span<int32_t>(out));
  common::arch::host_launch<S::kLanes, typename Row::Shared>(
      int(rows), S::kThreads, [&](const Arch& a, typename Row::Shared& sh) {
        Row::select_row(a, sh, src, k, a.block(), out.data());
        if (a.thread() == 0) ways[size_t(a.block())] = int32_t(sh.outcome);
      });
  return ways;
}

// The sample's key (rows past the stage, k up to half the list): every way a
// row can go, each held to the reference. A row whose sample lies low lists
// more than the list holds; one whose sample lies high has fewer than k above
// the key; both are then read again by the histogram's way.
TEST(SelectRow, EverySampleOutcomeMatchesTheReference) {
  using Row = EmulatedRow<GroupWarp32>;
  using Sample = common::select::RowSample<Row>;
  using Outcome = Row::Outcome;
  const int64_t width = 4096;
  const int32_t k = 64;
  ASSERT_TRUE(Sample::samples(false, k));
  ASSERT_FALSE(Sample::samples(false, Row::kPairCap / 2 + 1));
  const Outcome expected[] = {Outcome::sampled_above, Outcome::sampled_at_key, Outcome::missed_overflow,
                              Outcome::missed_short, Outcome::histogram};
  const int64_t rows = 5;
  std::vector<float> values(size_t(rows * width));
  Rng rng(77);
  for (auto& v : values) v = float(rng.normal());
  float* row = values.data();
  // 1: one value (every entry at the key); 2: the sample's entries lowest; 3: highest.
  std::fill(row + width, row + 2 * width, 0.25f);
  for (int j = 0; j < Sample::kSampleSize; ++j) {
    row[2 * width + Sample::sample_position(j, int(width))] = -8.0f - float(j) / 1024.0f;
    row[3 * width + Sample::sample_position(j, int(width))] = 8.0f + float(j) / 1024.0f;
  }
  std::vector<int32_t> out;
  std::vector<int32_t> ways = row_outcomes<GroupWarp32>(values, rows - 1, width, k, out);
  std::vector<int32_t> wide;  // k past half the list: no sample
  const int32_t big_k = Row::kPairCap / 2 + 1;
  std::vector<float> last(row + 4 * width, row + 5 * width);
  ways.push_back(row_outcomes<GroupWarp32>(last, 1, width, big_k, wide)[0]);
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_EQ(ways[size_t(r)], int32_t(expected[r])) << "row " << r;
    const int32_t kr = r + 1 < rows ? k : big_k;
    const std::vector<int32_t> want = reference_positions(row + r * width, width, kr);
    const int32_t* got = r + 1 < rows ? out.data() + r * k : wide.data();
    EXPECT_EQ(std::vector<int32_t>(got, got + kr), want) << "row " << r;
  }
}

// Rows whose every value is a coarse bin's bound (its largest key), so that the sample's key, a bin's bound, is
// also the value of many entries: the scan marks them at the key, and the row is the reference's whether the
// cut lies among the listed entries or the list overflows (read again).
TEST(SelectRow, RowsOfBinBoundsMatchTheReference) {
  using Row = EmulatedRow<GroupWarp32>;
  using Outcome = Row::Outcome;
  const int64_t width = 4096, rows = 6;
  const int32_t k = 64;
  std::vector<float> values(size_t(rows * width));
  Rng rng(78);
  for (int64_t r = 0; r < rows; ++r) {
    const int bins = r < 3 ? 400 : 24;  // about 10 entries a value, or about 170
    const int first = int(common::coarse_digit(common::order_key(1.0f)));
    for (int64_t c = 0; c < width; ++c) {
      const int bin = first + int(rng.uniform_int(0, bins - 1));
      values[size_t(r * width + c)] = Row::Block::value_of(common::coarse_digit_floor(bin));
    }
  }
  std::vector<int32_t> out;
  const std::vector<int32_t> ways = row_outcomes<GroupWarp32>(values, rows, width, k, out);
  std::set<int32_t> seen(ways.begin(), ways.end());
  EXPECT_TRUE(seen.count(int32_t(Outcome::sampled_above))) << "no row took the cut among the list";
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<int32_t> want = reference_positions(values.data() + r * width, width, k);
    EXPECT_EQ(std::vector<int32_t>(out.begin() + r * k, out.begin() + (r + 1) * k), want) << "row " << r;
  }
}

// Rows of negative values (the sample's key below zero) that end inside a tile, with large values past their
// ends: the scan reads -inf past a row's end, neither above the key nor at it, and nothing past the end.
TEST(SelectRow, PositionsPastTheRowAreNeitherListedNorMarked) {
  const int64_t width = 4096;
  const std::vector<int64_t> ends = {width - 1, width - 37, 3005, 2049};
  const int64_t rows = int64_t(ends.size());
  const int32_t k = 64;
  std::vector<float> values(size_t(rows * width), 1e30f);
  Rng rng(79);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < ends[size_t(r)]; ++c) values[size_t(r * width + c)] = -1.0f - float(std::abs(rng.normal()));
  const std::vector<int64_t> start(size_t(rows), 0);
  const common::select::DenseRows src{values.data(), width,
                                      common::RowSpan::of_bounds(rows, width, start.data(), ends.data())};
  std::vector<int32_t> out(size_t(rows * k));
  oracle::fill_poison(std::span<int32_t>(out));
  run_row<GroupWarp32>(src, k, out);
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<int32_t> want = reference_positions(values.data() + r * width, ends[size_t(r)], k);
    EXPECT_EQ(std::vector<int32_t>(out.begin() + r * k, out.begin() + (r + 1) * k), want) << "row " << r;
  }
}

// Rows whose listed entries span a wide range (a few huge values, NaN, +inf) around a narrow one (values within a
// thousandth of 1, or a few distinct values repeated): the list's cut takes its digit passes over a narrowing
// range (list_cut), and the rows are the reference's. The last row puts pairs of adjacent keys four keys apart
// under a wider range, so that the cut takes a third pass. At warp 32 and wave 64 the rows take the ways that
// close a digit to its keys, pass over a few entries' digit whole and rank a warp's entries; a digit taken whole
// and a closed digit of one key come in the other SelectRow tests' rows.
TEST(SelectRow, ListCutNarrowsItsRangeOverWideLists) {
  using Row = EmulatedRow<GroupWarp32>;
  const int64_t width = 4096, rows = 7;
  std::vector<float> values(size_t(rows * width));
  Rng rng(80);
  const uint32_t one = common::order_key(1.0f);
  for (int64_t c = 0; c < width; ++c)
    values[size_t(6 * width + c)] = Row::Block::value_of(one + 4u * uint32_t(rng.uniform_int(0, 63)) + uint32_t(c % 2));
  for (int j = 0; j < 3; ++j) values[size_t(6 * width + 100 + j)] = Row::Block::value_of(one + 8191u);
  for (int j = 0; j < 2; ++j) values[size_t(6 * width + 200 + j)] = 1e30f;
  for (int64_t r = 0; r < 6; ++r) {
    float* row = values.data() + r * width;
    for (int64_t c = 0; c < width; ++c)
      row[c] = r % 2 == 0 ? 1.0f + 1e-3f * float(rng.normal()) : 1.0f + 1e-6f * float(rng.uniform_int(0, 200));
    for (int j = 0; j < 5; ++j) row[rng.uniform_int(0, width - 1)] = 1e30f;
    if (r >= 2) row[rng.uniform_int(0, width - 1)] = std::numeric_limits<float>::infinity();
    if (r >= 4) row[rng.uniform_int(0, width - 1)] = std::numeric_limits<float>::quiet_NaN();
  }
  for (const int32_t k : {64, 200}) {
    std::vector<int32_t> out32, out64;
    row_outcomes<GroupWarp32>(values, rows, width, k, out32);
    row_outcomes<GroupWave64>(values, rows, width, k, out64);
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<int32_t> want = reference_positions(values.data() + r * width, width, k);
      EXPECT_EQ(std::vector<int32_t>(out32.begin() + r * k, out32.begin() + (r + 1) * k), want) << "warp 32, row " << r << ", k " << k;
      EXPECT_EQ(std::vector<int32_t>(out64.begin() + r * k, out64.begin() + (r + 1) * k), want) << "wave 64, row " << r << ", k " << k;
    }
  }
}

// The sample's key on a block's sample (sample_key): a bin of one key gives that key; otherwise a bound of the
// m-th largest's coarse bin where the sample entries above it stay within [lo, hi], else the exact m-th largest;
// no key where fewer than m entries were drawn.
TEST(SelectRow, SampleKeyIsABinBoundWithinItsWindowOrTheExactKey) {
  using Row = EmulatedRow<GroupWarp32>;
  using Sample = common::select::RowSample<Row>;
  using Arch = common::arch::HostSimt<GroupWarp32::kLanes>;
  constexpr int n = Sample::kSampleSize;
  const int m = 36, lo = 22, hi = 50;
  // The kernels' blocks (select_kernel.cuh) draw 4096: 8 a thread of 512, 4 a thread of 1024.
  using Row512 = common::select::RowTopK<Arch, 512, 8, 16384, 1 << 17>;
  using Row1024 = common::select::RowTopK<Arch, 1024, 8, 16384, 1 << 17>;
  static_assert(common::select::RowSample<Row512>::kSampleItems == 8);
  static_assert(common::select::RowSample<Row1024>::kSampleItems == 4);
  static_assert(common::select::RowSample<Row1024>::kSampleSize == 4096);
  auto key_of = [&](const std::vector<uint32_t>& sample) {
    uint32_t got = 0;
    common::arch::host_launch<GroupWarp32::kLanes, Row::Shared>(1, Row::kThreads, [&](const Arch& a, Row::Shared& sh) {
      Row::clear(a, sh, 0);
      uint32_t mine[Sample::kSampleItems];
      for (int i = 0; i < Sample::kSampleItems; ++i) mine[i] = sample[size_t(a.thread() * Sample::kSampleItems + i)];
      const uint32_t key = Sample::sample_key(a, sh, mine, m, lo, hi);
      if (a.thread() == 0) got = key;
    });
    return got;
  };
  auto above = [](const std::vector<uint32_t>& sample, uint32_t key) {
    return int(std::count_if(sample.begin(), sample.end(), [&](uint32_t x) { return x > key; }));
  };
  auto mth_largest = [&](std::vector<uint32_t> sample) {
    std::sort(sample.begin(), sample.end(), std::greater<>());
    return sample[size_t(m - 1)];
  };
  std::vector<uint32_t> sample(static_cast<size_t>(n));
  std::fill(sample.begin(), sample.end(), common::order_key(0.25f));  // one key
  EXPECT_EQ(key_of(sample), common::order_key(0.25f));
  Rng rng(91);
  for (int trial = 0; trial < 20; ++trial) {  // N(0, 1): a bound of a bin of a few entries, within the window
    for (auto& x : sample) x = common::order_key(float(rng.normal()));
    const uint32_t key = key_of(sample);
    const bool bound = key == common::coarse_digit_floor(int(common::coarse_digit(key)));
    EXPECT_TRUE(bound || key == mth_largest(sample)) << trial;
    EXPECT_GE(above(sample, key), lo) << trial;
    EXPECT_LE(above(sample, key), hi) << trial;
  }
  for (int j = 0; j < n; ++j) sample[size_t(j)] = common::order_key(8.0f + float(j) / 1024.0f);  // two wide bins
  EXPECT_EQ(key_of(sample), mth_largest(sample));
  std::fill(sample.begin(), sample.end(), common::kNoEntryKey);  // fewer than m drawn
  for (int j = 0; j < m - 1; ++j) sample[size_t(j * 7)] = common::order_key(float(j));
  EXPECT_EQ(key_of(sample), common::kNoEntryKey);
}

// The scan's target (RowSample::sample_ranks): k and six standard deviations of the count above the sample's key. On
// rows of the kernels' sizes (the 1024-thread block's sample of 4096, runs of four), of independent values and
// candidate-masked (7 of 8 blocks of 8 at -inf, so a run is live or not as a whole), the count above the sample's
// m-th largest value keeps at least 4.5 standard deviations (over the rows) above k and stays within the list's
// room in every row, and the count above the window's lowest rank (a coarse bin's bound may be taken) is at least
// k; where k is small the list is meant to be shorter than midway between k and the room. Which values a row
// holds does not matter, only their order: uniform values stand for any.
TEST(SelectRow, SampleTargetKeepsItsMarginOnRowsOfTheKernelsSizes) {
  using Arch = common::arch::HostSimt<32>;
  using Row1024 = common::select::RowTopK<Arch, 1024, 8, 16384, 1 << 17>;
  using Sample = common::select::RowSample<Row1024>;
  const int32_t ks[] = {512, 1024, 2048};
  Rng rng(93);
  for (const int count : {32768, 131072}) {
    // The old target, midway: m 136 of 4096 at 128k entries, 544 at 32k.
    EXPECT_LT(Sample::sample_ranks(512, count).m, (512 + Row1024::kPairCap) / 2 * Sample::kSampleSize / count)
        << count;
    for (const bool masked : {false, true}) {
      std::vector<float> row(static_cast<size_t>(count)), drawn(static_cast<size_t>(Sample::kSampleSize));
      std::vector<std::vector<double>> above(std::size(ks)), above_lo(std::size(ks));
      for (int trial = 0; trial < 40; ++trial) {
        for (auto& v : row) v = float(rng.uniform01());
        if (masked)
          for (int b = 0; b < count / 8; ++b)
            if (rng.uniform_int(0, 7) != 0)
              std::fill_n(row.begin() + b * 8, 8, -std::numeric_limits<float>::infinity());
        for (int j = 0; j < Sample::kSampleSize; ++j) drawn[size_t(j)] = row[size_t(Sample::sample_position(j, count))];
        std::sort(drawn.begin(), drawn.end(), std::greater<>());
        for (size_t i = 0; i < std::size(ks); ++i) {
          const auto ranks = Sample::sample_ranks(ks[i], count);
          auto above_rank = [&](int m) {
            const float key = drawn[size_t(m - 1)];
            return double(std::count_if(row.begin(), row.end(), [&](float v) { return v > key; }));
          };
          above[i].push_back(above_rank(ranks.m));
          above_lo[i].push_back(above_rank(ranks.lo));
        }
      }
      for (size_t i = 0; i < std::size(ks); ++i) {
        const std::vector<double>& n = above[i];
        double mean = 0, var = 0;
        for (const double x : n) mean += x / double(n.size());
        for (const double x : n) var += (x - mean) * (x - mean) / double(n.size() - 1);
        const std::string where = "count " + std::to_string(count) + (masked ? " masked" : "") + ", k " +
                                  std::to_string(ks[i]);
        EXPECT_GE(*std::min_element(n.begin(), n.end()), ks[i]) << where;
        EXPECT_LE(*std::max_element(n.begin(), n.end()), Row1024::kPairCap) << where;
        EXPECT_GE((mean - ks[i]) / std::sqrt(var), 4.5) << where << ": mean " << mean << ", sd " << std::sqrt(var);
        EXPECT_GE(*std::min_element(above_lo[i].begin(), above_lo[i].end()), ks[i])
            << where << ", the window's low end";
      }
    }
  }
}

TEST(SelectRow, EveryRowKindAtWave64) {
  const std::vector<int64_t> lens = {0, 7, 1025, 2100};
  uint64_t seed = 300;
  for (const RowKind kind : twins_testing::kAllRowKinds) {
    check_row<GroupWave64>(lens, 2100, kind, 100, seed);
    ++seed;
  }
  check_row<GroupWave64>(lens, 2100, RowKind::minus_inf_heavy, 500, seed++);
}

// Rows of 0 to one tile, every row kind; k from 1 to past the tile.
TEST(SelectShort, EveryRowKindAtWarp32) {
  const std::vector<int64_t> lens = {0, 1, 5, 65, 511, 1500, 2048};
  uint64_t seed = 400;
  for (const RowKind kind : twins_testing::kAllRowKinds) {
    check_short<ShortWarp32>(lens, 2048, kind, 64, seed);
    ++seed;
  }
  check_short<ShortWarp32>(lens, 2048, RowKind::quantized, 700, seed++);
  check_short<ShortWarp32>(lens, 2048, RowKind::one_coarse_bin, 700, seed++);
  check_short<ShortWarp32>(lens, 2048, RowKind::normal, 1, seed++);
  check_short<ShortWarp32>(lens, 2048, RowKind::normal, 3000, seed++);  // k past the tile: every entry, -1 after
  check_short<ShortWarp32>({5, 700, 2000}, 2048, RowKind::normal, 50, seed++, 37);  // rows at an offset
}

TEST(SelectShort, EveryRowKindAtWave64) {
  const std::vector<int64_t> lens = {0, 7, 1025, 2048};
  uint64_t seed = 500;
  for (const RowKind kind : twins_testing::kAllRowKinds) {
    check_short<ShortWave64>(lens, 2048, kind, 100, seed);
    ++seed;
  }
  check_short<ShortWave64>(lens, 2048, RowKind::minus_inf_heavy, 500, seed++);
}

// Every way a row can go, each held to the reference: at most k entries; a
// threshold bin taken whole (100 entries of one value above the rest, k 100);
// a bin ranked on the list (N(0, 1)); a bin past the list (2048 equal values,
// and 2048 distinct values in one coarse bin).
TEST(SelectShort, EveryWayMatchesTheReference) {
  using Short = EmulatedShort<ShortWarp32>;
  using Way = Short::Way;
  constexpr int64_t width = 2048;
  const int32_t k = 100;
  Rng rng(77);
  std::vector<float> row(size_t(5 * width));
  for (int64_t j = 0; j < width; ++j) {
    row[size_t(j)] = float(rng.normal());                                    // listed
    row[size_t(width + j)] = j % 20 == 0 && j < 2000 ? 10.0f : float(j % 7);  // the bin of 10.0 taken whole
    row[size_t(2 * width + j)] = 3.0f;                                       // one key: passes
    row[size_t(3 * width + j)] = 1.0f + float(j) * 1e-5f;                    // one coarse bin: passes
    row[size_t(4 * width + j)] = float(j);                                   // 50 entries: every one
  }
  std::vector<int32_t> lens = {int32_t(width), int32_t(width), int32_t(width), int32_t(width), 50};
  common::RowSpan span;
  span.kind = common::RowSpan::Kind::per_row_2d;
  span.rows = 5;
  span.width = width;
  span.seq_lens = lens.data();
  const common::select::DenseRows src{row.data(), width, span};
  std::vector<int32_t> out(size_t(5 * k));
  oracle::fill_poison(std::span<int32_t>(out));
  std::vector<Way> ways;
  run_short<ShortWarp32>(src, k, out, 0, &ways);
  EXPECT_EQ(ways, (std::vector<Way>{Way::listed, Way::whole_bin, Way::passes, Way::passes, Way::every_entry}));
  for (int64_t r = 0; r < 5; ++r) {
    std::vector<int32_t> want(static_cast<size_t>(k));
    topk_row(row.data() + r * width, lens[size_t(r)], k, want.data());
    std::sort(want.begin(), want.end(), [](int32_t x, int32_t y) { return (x < 0) != (y < 0) ? y < 0 : x < y; });
    EXPECT_EQ(std::vector<int32_t>(out.begin() + r * k, out.begin() + (r + 1) * k), want) << "row " << r;
  }
}

}  // namespace
}  // namespace dsa::select_testing
