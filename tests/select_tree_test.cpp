// The shared selection launches (optimized/common/select) on the host
// emulator, at warp 32 and wave 64: each chooses exactly the reference's set
// (its order is total, lowest position on ties), writes every output entry,
// and leaves its workspace counters at zero for the next launch.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/rng.hpp"
#include "dsa/topk.hpp"
#include "optimized/hip/device/select/one_block.hpp"
#include "select_emulation_support.hpp"
#include "twins_test_support.hpp"

namespace dsa::select_testing {
namespace {

using twins_testing::RowKind;

using Warp32 = Shape<32, 64, 8>;    // capacity 512
using Wave64 = Shape<64, 128, 8>;   // capacity 1024

std::vector<int32_t> sorted_row(const int32_t* row, int k) {
  std::vector<int32_t> v(row, row + k);
  std::sort(v.begin(), v.end());
  return v;
}

// The reference's indices of each row, as sets.
::testing::AssertionResult same_sets(const std::vector<int32_t>& got, const TopkIndices& want) {
  for (int64_t r = 0; r < want.rows; ++r) {
    const auto g = sorted_row(got.data() + r * want.k, want.k), w = sorted_row(want.row(r), want.k);
    if (g != w) {
      auto f = ::testing::AssertionFailure() << "row " << r << " differs:";
      for (int i = 0; i < want.k && i < 12; ++i) f << " " << g[size_t(i)] << "/" << w[size_t(i)];
      return f;
    }
  }
  return ::testing::AssertionSuccess();
}

bool all_zero(const std::vector<uint32_t>& v) {
  return std::all_of(v.begin(), v.end(), [](uint32_t x) { return x == 0; });
}

template <class S>
void check_dense(const std::vector<int64_t>& lens, int64_t width, RowKind kind, int k, int grid, uint64_t seed,
                 int64_t start = 0) {
  Rng rng(seed);
  const auto c = twins_testing::make_case(lens, width + start, kind, rng, start);
  common::select::DenseRows src{c.logits.values.data(), c.logits.width, bounds_span(c)};
  std::vector<int32_t> out(size_t(c.logits.rows) * size_t(k));
  oracle::fill_poison(std::span<int32_t>(out));
  Workspace ws;
  ASSERT_EQ(run_tree<S>(src, k, grid, out, ws), common::select::PlanError::none);
  TopkIndices want{c.logits.rows, k, std::vector<int32_t>(out.size())};
  for (int64_t r = 0; r < c.logits.rows; ++r)
    topk_row(c.logits.row(r) + c.bounds.start[size_t(r)], lens[size_t(r)], k, want.row(r));
  EXPECT_TRUE(same_sets(out, want)) << twins_testing::to_string(kind) << " k " << k;
  EXPECT_TRUE(all_zero(ws.counters));
  // Run again on the same workspace: the same output.
  std::vector<int32_t> again(out.size());
  oracle::fill_poison(std::span<int32_t>(again));
  ASSERT_EQ(run_tree<S>(src, k, grid, again, ws), common::select::PlanError::none);
  EXPECT_EQ(again, out);
}

TEST(SelectTree, DenseRowsOfEveryKindAtWarp32) {
  // One leaf, several leaves with one merge, and a tree of three levels (k 200: two children per merge).
  const std::vector<int64_t> lens = {0, 1, 63, 64, 65, 511, 512, 513, 1500, 2600};
  uint64_t seed = 1;
  for (const RowKind kind : twins_testing::kAllRowKinds) check_dense<Warp32>(lens, 2600, kind, 64, 3, seed++);
  check_dense<Warp32>(lens, 2600, RowKind::quantized, 200, 4, seed++);
  check_dense<Warp32>(lens, 2600, RowKind::normal, 1, 2, seed++);
}

TEST(SelectTree, DenseRowsOfEveryKindAtWave64) {
  const std::vector<int64_t> lens = {0, 7, 100, 1023, 1024, 1025, 2100};
  uint64_t seed = 100;
  for (const RowKind kind : twins_testing::kAllRowKinds) check_dense<Wave64>(lens, 2100, kind, 100, 3, seed++);
  check_dense<Wave64>(lens, 2100, RowKind::minus_inf_heavy, 500, 2, seed++);
}

TEST(SelectTree, RowsStartingAtAnOffset) {
  check_dense<Warp32>({5, 700, 1200}, 1300, RowKind::normal, 50, 2, 7, 37);
}

// Output rows `stride` apart (vLLM's topk_indices_buffer[:, :k] view): rows of one leaf and of
// merged leaves land at their stride, the entries between rows stay as the caller left them.
TEST(SelectTree, OutputRowsAtAStrideAtWave64) {
  const std::vector<int64_t> lens = {0, 300, 1024, 2100};
  constexpr int k = 100;
  constexpr int64_t stride = 131;
  Rng rng(11);
  const auto c = twins_testing::make_case(lens, 2100, RowKind::normal, rng, 0);
  common::select::DenseRows src{c.logits.values.data(), c.logits.width, bounds_span(c)};
  std::vector<int32_t> out(size_t(c.logits.rows) * size_t(stride));
  oracle::fill_poison(std::span<int32_t>(out));
  const std::vector<int32_t> poisoned = out;
  Workspace ws;
  ASSERT_EQ(run_tree<Wave64>(src, k, 3, out, ws, stride), common::select::PlanError::none);
  TopkIndices want{c.logits.rows, k, std::vector<int32_t>(size_t(c.logits.rows) * k)};
  std::vector<int32_t> got(want.indices.size());
  for (int64_t r = 0; r < c.logits.rows; ++r) {
    topk_row(c.logits.row(r), lens[size_t(r)], k, want.row(r));
    std::copy_n(out.begin() + r * stride, k, got.begin() + r * k);
    EXPECT_TRUE(std::equal(out.begin() + r * stride + k, out.begin() + (r + 1) * stride,
                           poisoned.begin() + r * stride + k))
        << "row " << r << " wrote past its k entries";
  }
  EXPECT_TRUE(same_sets(got, want));
  EXPECT_TRUE(all_zero(ws.counters));
}

// The fused gfx942 launch's selection (kernels/candidate_logits_top_k.hip): per row, one block is
// the whole grid (OneBlock) over that row alone (OneRow) of compact candidate columns, with the
// row's output and workspace; rows of three leaves and a merge, run as the kernel runs them.
TEST(SelectTree, FusedSelectionOneBlockPerRowAtWave64) {
  using Arch = gfx942::OneBlock<common::arch::HostSimt<64>>;
  using Tree = common::select::TreeTopK<Arch, Wave64::kThreads, Wave64::kItems>;
  constexpr int32_t slots = 300, S = 8;
  const std::vector<int32_t> seq_lens = {1300, 3000};  // 1-D lengths, next_n 2: L_r 1299, 1300, 2999, 3000
  common::select::CandidateColumns cols;
  cols.span.kind = common::RowSpan::Kind::visible_1d;
  cols.span.rows = 4;
  cols.span.width = 3200;
  cols.span.seq_lens = seq_lens.data();
  cols.span.next_n = 2;
  Rng rng(23);
  CandidateBlocks cand{4, slots, S, {}};
  for (int64_t r = 0; r < 4; ++r) {
    std::vector<int32_t> ids(3200 / S + 2);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t(i);
    for (size_t i = ids.size(); i > 1; --i) std::swap(ids[i - 1], ids[size_t(rng.uniform_int(0, int64_t(i) - 1))]);
    for (int32_t c = 0; c < slots; ++c) cand.blocks.push_back(rng.bernoulli(0.1) ? -1 : ids[size_t(c)]);
  }
  Logits compact{4, int64_t(slots) * S, {}};
  for (int64_t i = 0; i < compact.rows * compact.width; ++i) compact.values.push_back(float(rng.normal()));
  cols.values = compact.values.data();
  cols.row_stride = compact.width;
  cols.blocks = cand.blocks.data();
  cols.slots = slots;
  cols.block_size = S;
  cols.compact = true;
  const std::vector<int64_t> lens = {1299, 1300, 2999, 3000};
  for (const int32_t k : {100, 512}) {
    TreePlan plan;
    ASSERT_EQ(common::select::make_tree_plan(compact.width, k, Tree::kCapacity, plan), common::select::PlanError::none);
    ASSERT_EQ(plan.max_leaves, 3);
    std::vector<int32_t> out(size_t(4 * k));
    oracle::fill_poison(std::span<int32_t>(out));
    Workspace ws;
    ws.slots.resize(size_t(plan.slot_pairs(4)));
    ws.counters.resize(size_t(plan.counters(4)), 0);
    for (int64_t r = 0; r < 4; ++r) {
      const int64_t nodes = r * plan.nodes_per_row;
      const TreeOutput o{out.data() + r * k, ws.slots.data() + nodes * k, ws.counters.data() + nodes, nullptr};
      common::arch::host_launch<64, Tree::Shared>(1, Wave64::kThreads, [&](const auto& a, Tree::Shared& sh) {
        Tree::run(Arch{a}, sh, gfx942::OneRow<common::select::CandidateColumns>{cols, r}, plan, o);
      });
    }
    EXPECT_TRUE(same_sets(out, compact_candidate_topk(compact, cand, lens, k))) << "k " << k;
    EXPECT_TRUE(all_zero(ws.counters));
  }
}

// Both mask variants against the reference's, on rows with a start and blocks past the row.
TEST(SelectMask, FullAndStridedAsTheReference) {
  auto ops = make_emulated_selection<Warp32>("emulated", 2);
  Rng rng(12);
  const auto c = twins_testing::make_case({0, 37, 300, 64}, 330, RowKind::normal, rng, 5);
  CandidateBlocks cand{4, 6, 8, {}};
  for (int64_t r = 0; r < 4; ++r)
    for (const int32_t b : {0, 3, -1, 7, 40, 2}) cand.blocks.push_back(b);
  for (const CandidateMask variant : {CandidateMask::full, CandidateMask::strided}) {
    Logits a = c.logits, b = c.logits;
    ops->candidate_mask(a, c.bounds, cand, variant);
    apply_candidate_mask(b, c.bounds, cand, variant);
    for (size_t i = 0; i < a.values.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(a.values[i]), std::bit_cast<uint32_t>(b.values[i])) << i;
  }
}

// The padding kernels against the reference's ops, and the skip_decode_fill rule.
TEST(SelectPadding, PackAndUnpackAsTheReference) {
  auto ops = make_emulated_selection<Warp32>("emulated", 2);
  auto ref = make_reference_ops();
  Rng rng(9);
  EXPECT_TRUE(twins_testing::padding_as_reference(*ops, *ref, {2, 1, 3, 3}, 3, 70, 33, rng));
  TopkIndices padded{12, 33, std::vector<int32_t>(12 * 33, 0)}, x{9, 33, std::vector<int32_t>(9 * 33, -7)};
  EXPECT_THROW(ops->unpack_topk(padded, std::vector<int32_t>{2, 1, 4, 3}, x), InvalidInput);
  for (const bool prefill : {false, true})
    for (const bool padding : {false, true})
      for (const int64_t decode : {0, 3, 5})
        EXPECT_EQ(ops->skip_decode_fill(prefill, decode, 5, padding), ref->skip_decode_fill(prefill, decode, 5, padding));
  EXPECT_THROW(ops->skip_decode_fill(false, 6, 5, false), InvalidInput);
}

}  // namespace
}  // namespace dsa::select_testing
