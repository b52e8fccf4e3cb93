// The ranking step of the one-launch candidate_logits_top_k (the CUDA kernel's
// epilogue/rank_compact_rows.cuh) on the host emulator: ShortRowTopK of 512
// threads of 32 keys over one compact row whose load keeps its candidate slots
// in shared memory (StagedCandidateRow), as the kernel ranks a row it completed.
// It must write exactly the array that the two-kernel path writes (ShortRowTopK
// over CandidateColumns of the compact rows), on rows whose candidate blocks are
// out of position order, with empty slots, a visible length that ends inside a
// block, ties, NaN and -inf; and the reference's set where values are distinct.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/common/arch/host_simt.hpp"
#include "dsa/common/select/short_row_topk.hpp"
#include "dsa/common/select/sources.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/rng.hpp"

namespace dsa {
namespace {

constexpr int kThreads = 512, kItems = 32;  // the launch's ranking shape: rows of up to 16384 entries

struct Rows {
  CandidateBlocks candidates;
  Logits compact;
  std::vector<int64_t> lens;
};

// Rows of `slots` blocks of S: row 0 N(0, 1), row 1 sixteen levels (ties at every cut), row 2 N(0, 1)
// with NaN and -inf; ids shuffled (compact order is not position order), one slot in ten empty.
Rows make_rows(int32_t slots, int32_t S, uint64_t seed) {
  Rng rng(seed);
  Rows c;
  c.candidates = CandidateBlocks{3, slots, S, {}};
  const int64_t width = int64_t(slots) * S;
  c.compact = Logits{3, width, {}};
  for (int64_t r = 0; r < 3; ++r) {
    std::vector<int32_t> ids(size_t(slots) + 40);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t(i);
    for (size_t i = ids.size(); i > 1; --i) std::swap(ids[i - 1], ids[size_t(rng.uniform_int(0, int64_t(i) - 1))]);
    for (int32_t s = 0; s < slots; ++s) c.candidates.blocks.push_back(rng.bernoulli(0.1) ? -1 : ids[size_t(s)]);
    // L_r ends inside a block, and blocks past it are candidates too.
    c.lens.push_back(int64_t(slots - 30) * S + 3 + r);
    for (int64_t j = 0; j < width; ++j) {
      float v = float(rng.normal());
      if (r == 1) v = std::floor(v * 4.0f) / 4.0f;
      if (r == 2 && rng.bernoulli(0.01)) v = std::numeric_limits<float>::quiet_NaN();
      if (r == 2 && rng.bernoulli(0.2)) v = -std::numeric_limits<float>::infinity();
      c.compact.values.push_back(v);
    }
  }
  return c;
}

template <int kLanes>
std::vector<int32_t> rank_staged(const Rows& c, int32_t k) {
  using Arch = common::arch::HostSimt<kLanes>;
  using Short = common::select::ShortRowTopK<Arch, kThreads, kItems>;
  struct Shared {
    typename Short::Shared topk;
    int32_t blocks[kThreads * kItems / 8];
  };
  const int32_t slots = c.candidates.slots, S = c.candidates.block_size;
  std::vector<int32_t> out(size_t(3 * k));
  oracle::fill_poison(std::span<int32_t>(out));
  common::arch::host_launch<kLanes, Shared>(3, kThreads, [&](const Arch& a, Shared& sh) {
    const int64_t r = a.block();
    Short::prepare(a, sh.topk);
    const common::select::StagedCandidateRow src{c.compact.row(r), c.candidates.blocks.data() + r * slots, sh.blocks,
                                                 slots, S, c.lens[size_t(r)]};
    int ring = 0;
    Short::select_row(a, sh.topk, src, 0, k, out.data() + r * k, ring);
  });
  return out;
}

template <int kLanes>
std::vector<int32_t> rank_columns(const Rows& c, int32_t k) {
  using Arch = common::arch::HostSimt<kLanes>;
  using Short = common::select::ShortRowTopK<Arch, kThreads, kItems>;
  std::vector<int64_t> starts(3, 0);
  const common::RowSpan span = common::RowSpan::of_bounds(3, c.compact.width, starts.data(), c.lens.data());
  const common::select::CandidateColumns src{c.compact.values.data(), c.compact.width,        span,
                                             c.candidates.blocks.data(), c.candidates.slots, c.candidates.block_size,
                                             /*compact=*/true};
  std::vector<int32_t> out(size_t(3 * k));
  oracle::fill_poison(std::span<int32_t>(out));
  common::arch::host_launch<kLanes, typename Short::Shared>(
      3, kThreads, [&](const Arch& a, typename Short::Shared& sh) { Short::run(a, sh, src, k, out.data()); });
  return out;
}

std::vector<int32_t> sorted(std::vector<int32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

template <int kLanes>
void check(int32_t slots, int32_t S, uint64_t seed) {
  const Rows c = make_rows(slots, S, seed);
  for (const int32_t k : {1, 100, 512, 2048, 20000}) {
    const std::vector<int32_t> staged = rank_staged<kLanes>(c, k);
    EXPECT_EQ(staged, rank_columns<kLanes>(c, k)) << "lanes " << kLanes << " S " << S << " k " << k;
    // Row 0's values are distinct: the reference's set.
    const TopkIndices want = compact_candidate_topk(c.compact, c.candidates, c.lens, k);
    EXPECT_EQ(sorted(std::vector<int32_t>(staged.begin(), staged.begin() + k)),
              sorted(std::vector<int32_t>(want.row(0), want.row(0) + k)))
        << "lanes " << kLanes << " S " << S << " k " << k;
  }
}

TEST(SelectStagedRow, TheLaunchsRankingWritesTheTwoKernelArrayAtWarp32) {
  check<32>(2048, 8, 11);  // DeepSeek V4.1: 2048 blocks of 8, a whole tile
  check<32>(300, 16, 12);
  check<32>(400, 12, 14);  // blocks of a size not a power of two: the columns' slots by division
}

TEST(SelectStagedRow, TheLaunchsRankingWritesTheTwoKernelArrayAtWave64) { check<64>(512, 32, 13); }

}  // namespace
}  // namespace dsa
