// The selection sources' loads (optimized/common/select/sources.hpp) on the
// host emulator, whose 16-byte loads refuse an unaligned address as a GPU
// faults on one: BlockScores reads whole blocks of an aligned row in runs of
// four and every other block a value at a time, and either way a row's block
// scores are the reference's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "dsa/rng.hpp"
#include "select_emulation_support.hpp"

namespace dsa::select_testing {
namespace {

// Rows of 4096 floats whose bounds start at `offset` (0 and 4: a 16-byte aligned row start; 1 to 3: unaligned),
// lengths that end inside a block and on one, blocks of -inf, of a NaN among values and of one finite value
// among -inf.
void check_block_scores(int32_t block_size, int64_t offset, uint64_t seed) {
  constexpr int64_t kRows = 6, kWidth = 4096;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  Rng rng(seed);
  Logits logits{kRows, kWidth, std::vector<float>(size_t(kRows * kWidth))};
  for (float& v : logits.values) v = float(rng.normal());
  RowBounds bounds;
  const int64_t lens[kRows] = {kWidth - offset, kWidth - offset - 1, 3000 + block_size, 3000 + block_size + 1, 1, 0};
  for (int64_t r = 0; r < kRows; ++r) {
    bounds.start.push_back(offset);
    bounds.end.push_back(offset + lens[r]);
    float* row = logits.row(r) + offset;
    for (int64_t c = 0; c + block_size <= lens[r] && c < 40 * block_size; c += 4 * block_size) {
      for (int32_t j = 0; j < block_size; ++j) row[c + j] = -kInf;                       // a block of -inf
      row[c + block_size + 1] = std::nanf("");                                           // a NaN among values
      for (int32_t j = 0; j < block_size; ++j) row[c + 2 * block_size + j] = -kInf;
      row[c + 2 * block_size + block_size - 1] = 7.5f;                                   // one value among -inf
    }
  }
  constexpr int32_t kSlots = 24;
  for (auto& ops : {make_emulated_selection<Shape<32, 64, 8>>("emulated_select_w32"),
                    make_emulated_selection<Shape<64, 128, 8>>("emulated_select_w64")}) {
    CandidateBlocks out = oracle::poisoned_blocks(kRows, kSlots, block_size);
    ops->candidate_select(logits, bounds, out);
    const Logits scores = oracle::candidate_block_scores(logits, block_size, bounds);
    const auto verdict = oracle::check_candidate_blocks(oracle::IndexMatrix{out.blocks, out.rows, out.slots}, scores);
    EXPECT_TRUE(verdict.passed) << ops->name() << " block size " << block_size << " offset " << offset << ": "
                                << oracle::summary_line(verdict);
  }
}

TEST(SelectSources, BlockScoresOfAlignedAndUnalignedRowsMatchTheReference) {
  uint64_t seed = 900;
  for (const int32_t block_size : {3, 4, 8, 12, 16})
    for (const int64_t offset : {0, 1, 2, 3, 4}) check_block_scores(block_size, offset, seed++);
}

}  // namespace
}  // namespace dsa::select_testing
