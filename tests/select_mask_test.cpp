// The candidate mask's block body (optimized/common/candidate_mask.hpp) on the
// host emulator, at warp 32 and wave 64: rows of several kMaskPart parts, whose
// start lies before a part, on a part's first column or inside one, so that
// each branch of the 32-bit block arithmetic runs; both variants, block sizes
// that do and do not divide the part, grids of one block to more blocks than
// items. The result must equal the reference's apply_candidate_mask bit for
// bit, and the padding of a strided row must be left as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/rng.hpp"
#include "select_emulation_support.hpp"
#include "test_values.hpp"

namespace dsa::select_testing {
namespace {

using common::kMaskPart;
using ::dsa::test::bits_of;

using MaskWarp32 = Shape<32, 64, 1>;
using MaskWave64 = Shape<64, 128, 1>;

// A mask case: explicit row bounds over a row of `width` columns stored with
// `stride` (>= width) floats a row, and each row's candidate slots.
struct MaskCase {
  int64_t width = 0, stride = 0;
  RowBounds bounds;
  CandidateBlocks candidates;
  std::vector<float> stored;  // [rows][stride]
};

// Starts that put each part of a row in a different position against it:
// before the start, starting on it, holding it.
std::vector<int64_t> interesting_starts(int64_t width) {
  std::vector<int64_t> starts{0, 1, 5000, kMaskPart - 1, kMaskPart, kMaskPart + 100, 2 * kMaskPart + 3, width - 1,
                              width};
  starts.erase(std::remove_if(starts.begin(), starts.end(), [&](int64_t s) { return s > width; }), starts.end());
  return starts;
}

MaskCase make_case(int64_t width, int64_t pad, int32_t block_size, uint64_t seed) {
  Rng rng(seed);
  MaskCase c;
  c.width = width;
  c.stride = width + pad;
  for (int64_t start : interesting_starts(width)) {
    // Ends: the whole row, one column, a block and a bit, a random place, and empty.
    for (int64_t end : {width, std::min(width, start + 1), std::min(width, start + block_size + 3),
                        rng.uniform_int(start, width), start}) {
      c.bounds.start.push_back(start);
      c.bounds.end.push_back(end);
    }
  }
  const int64_t rows = c.bounds.rows();
  const int64_t widest_blocks = (width + block_size - 1) / block_size;
  c.candidates.rows = rows;
  c.candidates.block_size = block_size;
  c.candidates.slots = 48;
  c.candidates.blocks.assign(size_t(rows * c.candidates.slots), -1);
  for (int64_t r = 0; r < rows; ++r) {
    // Distinct blocks, some past the row's own blocks (the mask ignores them), -1 slots between.
    std::vector<int32_t> pool(size_t(widest_blocks + 4));
    for (size_t i = 0; i < pool.size(); ++i) pool[i] = int32_t(i);
    for (int32_t s = 0; s < c.candidates.slots; ++s) {
      if (pool.empty() || rng.uniform_int(0, 5) == 0) continue;
      const size_t pick = size_t(rng.uniform_int(0, int64_t(pool.size()) - 1));
      c.candidates.row(r)[s] = pool[pick];
      pool.erase(pool.begin() + std::ptrdiff_t(pick));
    }
  }
  c.candidates.validate();
  c.stored.resize(size_t(rows * c.stride));
  for (float& v : c.stored) v = float(rng.uniform_int(-1000, 1000)) / 8.0f;
  return c;
}

template <class S>
void expect_mask_matches_reference(const MaskCase& c, CandidateMask variant, int grid) {
  // The reference on the dense [rows][width] view.
  Logits expected{c.bounds.rows(), c.width, {}};
  for (int64_t r = 0; r < expected.rows; ++r)
    expected.values.insert(expected.values.end(), c.stored.begin() + r * c.stride,
                           c.stored.begin() + r * c.stride + c.width);
  apply_candidate_mask(expected, c.bounds, c.candidates, variant);

  std::vector<float> got = c.stored;
  common::CandidateMaskRows p;
  p.logits = got.data();
  p.row_stride = c.stride;
  p.span = common::RowSpan::of_bounds(c.bounds.rows(), c.width, c.bounds.start.data(), c.bounds.end.data());
  p.blocks = c.candidates.blocks.data();
  p.slots = c.candidates.slots;
  p.block_size = c.candidates.block_size;
  p.full = variant == CandidateMask::full;
  EmulatorBackend<S> backend;
  backend.grid = grid;
  ASSERT_LE(p.bitmap_words(), backend.mask_bitmap_words());
  backend.launch(p);

  int64_t wrong = 0;
  for (int64_t r = 0; r < expected.rows; ++r) {
    for (int64_t col = 0; col < c.stride; ++col) {
      const float want = col < c.width ? expected.at(r, col) : c.stored[size_t(r * c.stride + col)];
      const float have = got[size_t(r * c.stride + col)];
      if (bits_of(want) != bits_of(have) && wrong++ < 5)
        ADD_FAILURE() << "row " << r << " [" << c.bounds.start[size_t(r)] << ", " << c.bounds.end[size_t(r)]
                      << ") column " << col << (col < c.width ? "" : " (padding)") << ": " << have << ", want " << want;
    }
  }
  EXPECT_EQ(wrong, 0);
}

template <class S>
void run_mask_grid() {
  // Three full parts and a short one; a row of exactly two parts; one shorter than a part.
  for (int64_t width : {3 * kMaskPart + 777, 2 * kMaskPart, int64_t(3001)}) {
    for (int32_t block_size : {8, 24, 64}) {
      const MaskCase c = make_case(width, width % 2 ? 5 : 0, block_size, uint64_t(width * 131 + block_size));
      for (CandidateMask variant : {CandidateMask::full, CandidateMask::strided}) {
        for (int grid : {1, 3, 22}) {
          SCOPED_TRACE(::testing::Message() << "width " << width << " block " << block_size << " grid " << grid
                                          << (variant == CandidateMask::full ? " full" : " strided"));
          expect_mask_matches_reference<S>(c, variant, grid);
        }
      }
    }
  }
}

TEST(CandidateMaskBlock, Warp32MatchesReferenceOverParts) { run_mask_grid<MaskWarp32>(); }
TEST(CandidateMaskBlock, Wave64MatchesReferenceOverParts) { run_mask_grid<MaskWave64>(); }

// The launch's grid comes from items(): a block per (row, part).
TEST(CandidateMaskBlock, ItemsCountRowParts) {
  common::CandidateMaskRows p;
  p.span.rows = 7;
  p.span.width = 2 * kMaskPart + 1;
  EXPECT_EQ(p.parts(), 3);
  EXPECT_EQ(p.items(), 21);
  p.span.width = kMaskPart;
  EXPECT_EQ(p.items(), 7);
}

}  // namespace
}  // namespace dsa::select_testing
