// The CUDA selection kernels (cuda_select) on the GPU: each chooses exactly
// the reference's sets (their order is total, lowest index on ties), writes
// every entry, and repeats itself bit for bit; the mask and padding kernels
// equal the reference's ops. Without an sm_90 GPU each test that needs one
// reports skipped, and the refusal on such a machine is itself tested.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/select.hpp"
#include "dsa/optimized/cuda/select_ops.hpp"
#if defined(DSA_WITH_VLLM_BASELINE)
#include "dsa/optimized/cuda/vllm_topk.hpp"
#endif
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "dsa/rng.hpp"
#include "dsa/topk.hpp"
#include "gpu/gpu_test_support.hpp"
#include "twins_test_support.hpp"

namespace dsa {
namespace {

using twins_testing::RowKind;

std::vector<int32_t> sorted_row(const int32_t* row, int k) {
  std::vector<int32_t> v(row, row + k);
  std::sort(v.begin(), v.end());
  return v;
}

// The reference's sets, row by row, and nothing left of the poison.
::testing::AssertionResult same_sets_as_reference(const TopkIndices& got, const twins_testing::TopkCase& c) {
  const auto written = oracle::check_written(oracle::view(got), "topk_indices");
  if (!written.passed) return ::testing::AssertionFailure() << oracle::format_table(written);
  std::vector<int32_t> want(size_t(got.k));
  for (int64_t r = 0; r < got.rows; ++r) {
    const int64_t start = c.bounds.start[size_t(r)], len = c.bounds.end[size_t(r)] - start;
    topk_row(c.logits.row(r) + start, len, got.k, want.data());
    if (sorted_row(got.row(r), got.k) != sorted_row(want.data(), got.k))
      return ::testing::AssertionFailure() << "row " << r << " (length " << len << ") chose another set";
  }
  return ::testing::AssertionSuccess();
}

TEST(CudaSelect, RefusesWithoutAGpu) {
  if (cuda::sm90_available()) GTEST_SKIP() << "an sm_90 GPU is present";
  auto ops = cuda::make_cuda_select_ops();
  Rng rng(1);
  const auto c = twins_testing::make_case({10}, 10, RowKind::normal, rng);
  EXPECT_THROW(twins_testing::run_topk(*ops, c.logits, c.bounds, 4), Unsupported);
}

// Lengths around the block (8192), the merge levels and the landmarks of
// SPEC 10 (16385, 2^17, 2^18), every kind of row, k of the design: the group
// kernel (cuda_select) and the tree kernel (cuda_select_tree, gfx942's code).
TEST(CudaSelect, DecodeTopkIsTheReferencesSetOnEveryKindAndLength) {
  REQUIRE_SM90();
  const std::vector<int64_t> lens = {0, 1, 511, 513, 2049, 8191, 8192, 8193, 16384, 16385, 40000, 131072, 262144};
  for (auto make : {cuda::make_cuda_select_ops, cuda::make_cuda_select_tree_ops}) {
    auto ops = make();
    uint64_t seed = 10;
    for (const int k : {512, 1024, 2048})
      for (const RowKind kind : twins_testing::kAllRowKinds) {
        Rng rng(seed++);
        const auto c = twins_testing::make_case(lens, 262144, kind, rng);
        const TopkIndices got = twins_testing::run_topk(*ops, c.logits, c.bounds, k);
        EXPECT_TRUE(same_sets_as_reference(got, c)) << ops->name() << ", " << twins_testing::to_string(kind) << ", k "
                                                    << k;
        // The same input again: bit for bit the same output (order included).
        EXPECT_EQ(twins_testing::run_topk(*ops, c.logits, c.bounds, k).indices, got.indices) << ops->name();
      }
  }
}

// The triggers of the three bugs SPEC 10 lists in vLLM's top_k_per_row_decode
// (030ea52e), decode rows from column 0; vLLM picks its path by the logits
// width: (a) the radix path (12288 <= width < 200000) with the cut at -FLT_MAX
// or -inf; (b) the split path (width >= 200000: ten parts, a part of at most k
// entries padded with -FLT_MAX / -1) with a row far shorter than the width and
// a k-th value of -inf; (c) the insertion ranking (width < 12288) of a
// threshold bin of NaNs (at least k of them, at most its 2048 final items).
// NaN-dominated rows on the other two paths are checked as well.
struct Triggers {
  twins_testing::TopkCase c;
  std::vector<std::string> what;
  int32_t k = 2048;

  Triggers(int64_t width, int32_t k_) : k(k_) { c.logits.width = width; }
  template <class Value>
  void row(int64_t len, std::string name, Value value) {
    const int64_t r = c.logits.rows++, w = c.logits.width;
    c.logits.values.resize(size_t(c.logits.rows * w), -std::numeric_limits<float>::infinity());
    for (int64_t n = 0; n < len; ++n) c.logits.values[size_t(r * w + n)] = value(n);
    c.bounds.start.push_back(0);
    c.bounds.end.push_back(len);
    what.push_back(std::move(name));
  }
};

std::vector<Triggers> vllm_triggers() {
  const float neg_inf = -std::numeric_limits<float>::infinity(), lowest = -std::numeric_limits<float>::max();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Rng rng(40);
  auto normal = [&] { return float(rng.normal()); };
  Triggers radix(131072, 2048), split(262144, 2048), insertion(10000, 512);
  radix.row(131072, "(a) 1000 finite, the rest -inf (cut at -inf)",
            [&](int64_t n) { return n % 131 == 0 && n < 131000 ? normal() : neg_inf; });
  radix.row(20000, "(a) 1500 finite, 1000 -FLT_MAX, the rest -inf (cut at -inf)",
            [&](int64_t n) { return n < 1500 ? normal() : n < 2500 ? lowest : neg_inf; });
  radix.row(50000, "(a) 100 finite, the rest -FLT_MAX (cut at -FLT_MAX)",
            [&](int64_t n) { return n % 500 == 7 ? normal() : lowest; });
  radix.row(131072, "NaN: 7 in 8 (radix path)", [&](int64_t n) { return n % 8 == 0 ? normal() : nan; });
  split.row(5000, "(b) 5000 of 262144 columns, 300 finite, the rest -inf",
            [&](int64_t n) { return n % 16 == 3 && n < 4800 ? normal() : neg_inf; });
  split.row(20000, "(b) 20000 of 262144 columns, 1000 finite, the rest -inf",
            [&](int64_t n) { return n % 20 == 0 ? normal() : neg_inf; });
  split.row(262144, "-inf: 300 finite in 262144 (split path)",
            [&](int64_t n) { return n % 800 == 3 && n < 240000 ? normal() : neg_inf; });
  split.row(262144, "NaN: every entry (split path)", [&](int64_t) { return nan; });
  insertion.row(10000, "(c) 1000 NaN among 10000, k 512", [&](int64_t n) { return n % 10 == 4 ? nan : normal(); });
  insertion.row(9000, "(c) 600 NaN of both signs among 9000, k 512",
                [&](int64_t n) { return n % 15 == 1 ? (n % 2 ? nan : -nan) : normal(); });
  std::vector<Triggers> all;
  all.push_back(std::move(radix));
  all.push_back(std::move(split));
  all.push_back(std::move(insertion));
  return all;
}

// The trigger rows whose top k the oracle rejects, by name.
std::vector<std::string> rows_wrong(IndexerOps& ops) {
  std::vector<std::string> wrong;
  for (const Triggers& t : vllm_triggers()) {
    const TopkIndices got = twins_testing::run_topk(ops, t.c.logits, t.c.bounds, t.k);
    for (int64_t r = 0; r < got.rows; ++r) {
      const RowBounds one{{0}, {t.c.bounds.end[size_t(r)]}};
      const Logits row{1, t.c.logits.width, {t.c.logits.row(r), t.c.logits.row(r) + t.c.logits.width}};
      const TopkIndices mine{1, got.k, {got.row(r), got.row(r) + got.k}};
      if (!oracle::check_topk(oracle::view(mine), row, one).passed) wrong.push_back(t.what[size_t(r)]);
    }
  }
  return wrong;
}

TEST(CudaSelect, HasNoneOfVllmsThreeTopkBugs) {
  REQUIRE_SM90();
  auto ops = cuda::make_cuda_select_ops();
  EXPECT_EQ(rows_wrong(*ops), std::vector<std::string>{});
}

#if defined(DSA_WITH_VLLM_BASELINE)
// The same rows through vLLM's own kernel (a baseline built from its source):
// the oracle sees each of the three bugs of SPEC 10 there.
TEST(CudaSelect, TheOracleSeesVllmsThreeTopkBugsInVllmsKernel) {
  REQUIRE_SM90();
  auto vllm = cuda::make_vllm_topk_ops();
  const std::vector<std::string> wrong = rows_wrong(*vllm);
  std::string list;
  for (const auto& w : wrong) list += "\n  " + w;
  std::cout << "vLLM top_k_per_row_decode wrong on:" << (list.empty() ? " none" : list) << "\n";
  for (const char* bug : {"(a)", "(b)", "(c)"})
    EXPECT_TRUE(std::any_of(wrong.begin(), wrong.end(), [&](const std::string& w) { return w.starts_with(bug); }))
        << "no row of bug " << bug << " is wrong in vLLM's kernel";
}
#endif

TEST(CudaSelect, PrefillRowsCountFromTheirStart) {
  REQUIRE_SM90();
  auto ops = cuda::make_cuda_select_ops();
  Rng rng(3);
  const auto c = twins_testing::make_case({100, 20000, 9000}, 30000, RowKind::quantized, rng, 1237);
  EXPECT_TRUE(same_sets_as_reference(twins_testing::run_topk(*ops, c.logits, c.bounds, 1024), c));
}

// The group kernel takes any k (no merge), and rows past its cache (a part of
// more than four tiles per block is read again per pass).
TEST(CudaSelect, TakesAnyKAndRowsPastTheCache) {
  REQUIRE_SM90();
  auto ops = cuda::make_cuda_select_ops();
  Rng rng(4);
  const auto c = twins_testing::make_case({20000}, 20000, RowKind::normal, rng);
  EXPECT_TRUE(same_sets_as_reference(twins_testing::run_topk(*ops, c.logits, c.bounds, 5000), c));
  // One row just past a tile (rows of one tile go to the short-row kernel), k close to its length.
  const auto short_row = twins_testing::make_case({17000}, 17000, RowKind::normal, rng);
  EXPECT_TRUE(same_sets_as_reference(twins_testing::run_topk(*ops, short_row.logits, short_row.bounds, 16000), short_row));
  for (const RowKind kind : {RowKind::normal, RowKind::quantized, RowKind::minus_inf_heavy}) {
    const auto long_rows = twins_testing::make_case({1000003, 300000}, 1000003, kind, rng);
    const TopkIndices got = twins_testing::run_topk(*ops, long_rows.logits, long_rows.bounds, 2048);
    EXPECT_TRUE(same_sets_as_reference(got, long_rows)) << twins_testing::to_string(kind);
    EXPECT_EQ(twins_testing::run_topk(*ops, long_rows.logits, long_rows.bounds, 2048).indices, got.indices);
  }
}

// Enough rows for the row kernel (a block per row) with rows past its stage
// (16384 entries: one read against a sample's key, or the histogram's way when
// k is past half the list) up to its bitmaps (2^17), and rows staged: more rows
// than SMs (blocks of 512 threads, two an SM) and fewer (blocks of 1024); the
// dispatch's choices are asserted, so this tests them.
void check_row_kernel(int rows, int32_t threads, uint64_t seed) {
  const std::vector<int64_t> cycle = {0, 1, 511, 8193, 16384, 16385, 32768, 32769, 40000, 131071, 131072};
  std::vector<int64_t> lens;
  for (int r = 0; r < rows; ++r) lens.push_back(cycle[size_t(r) % cycle.size()]);
  ASSERT_TRUE(cuda::select_row_kernel(int64_t(lens.size()), 131072, cuda::SelectSource::values));
  ASSERT_FALSE(cuda::select_row_kernel(int64_t(lens.size()), 131073, cuda::SelectSource::values));  // past its bitmaps
  ASSERT_EQ(cuda::select_row_threads(int64_t(lens.size())), threads);
  auto ops = cuda::make_cuda_select_ops();
  for (const RowKind kind : {RowKind::normal, RowKind::quantized, RowKind::minus_inf_heavy, RowKind::nan_heavy})
    for (const int k : {512, 2048, 5000}) {
      if (kind != RowKind::normal && k == 512) continue;
      if (kind != RowKind::normal && kind != RowKind::quantized && k == 5000) continue;
      Rng rng(seed++);
      const auto c = twins_testing::make_case(lens, 131072, kind, rng);
      const TopkIndices got = twins_testing::run_topk(*ops, c.logits, c.bounds, k);
      EXPECT_TRUE(same_sets_as_reference(got, c)) << twins_testing::to_string(kind) << ", k " << k;
      EXPECT_EQ(twins_testing::run_topk(*ops, c.logits, c.bounds, k).indices, got.indices);
    }
}

TEST(CudaSelect, RowKernelTakesManyRowsStagedAndPastTheStage) {
  REQUIRE_SM90();
  const int sms = cuda::device_info().sm_count;
  check_row_kernel(sms + 28, 512, 50);
}

TEST(CudaSelect, RowKernelTakesRowsThatLeaveSmsToSpareAtTwiceTheWarps) {
  REQUIRE_SM90();
  const int sms = cuda::device_info().sm_count;
  check_row_kernel(sms / 8, 1024, 80);
}

// The dispatch between the row kernel and the clusters (select_launch.cu): rows of values past the short-row
// kernel's 16384 entries take the row kernel at any row count up to 32768 entries, from 4 rows past it; keyed
// columns only past 32768 entries, from a quarter of the SMs' count; block scores never.
TEST(CudaSelect, DispatchTakesTheRowKernelWhereItWasMeasuredFaster) {
  REQUIRE_SM90();
  using cuda::SelectSource;
  const int64_t sms = cuda::device_info().sm_count, quarter = (sms + 3) / 4;
  EXPECT_FALSE(cuda::select_row_kernel(1000, 16384, SelectSource::values));  // the short-row kernel's
  EXPECT_TRUE(cuda::select_short_kernel(16384, SelectSource::values));
  EXPECT_FALSE(cuda::select_short_kernel(16385, SelectSource::values));
  EXPECT_TRUE(cuda::select_row_kernel(1, 16385, SelectSource::values));
  EXPECT_TRUE(cuda::select_row_kernel(1, 32768, SelectSource::values));
  EXPECT_FALSE(cuda::select_row_kernel(3, 32769, SelectSource::values));
  EXPECT_FALSE(cuda::select_row_kernel(1, 131072, SelectSource::values));
  EXPECT_TRUE(cuda::select_row_kernel(4, 32769, SelectSource::values));
  EXPECT_TRUE(cuda::select_row_kernel(4, 131072, SelectSource::values));
  EXPECT_FALSE(cuda::select_row_kernel(sms * 4, 131073, SelectSource::values));
  EXPECT_FALSE(cuda::select_row_kernel(sms * 4, 32768, SelectSource::columns));
  EXPECT_FALSE(cuda::select_row_kernel(quarter - 1, 32769, SelectSource::columns));
  EXPECT_TRUE(cuda::select_row_kernel(quarter, 32769, SelectSource::columns));
  EXPECT_FALSE(cuda::select_row_kernel(sms * 4, 32769, SelectSource::blocks));
  EXPECT_FALSE(cuda::select_short_kernel(16, SelectSource::blocks));
}

// Block scores take the group kernel only, so the row and short-row kernels over them are not built: a plan that
// names one is refused before anything reaches the device (no GPU needed).
TEST(CudaSelect, BlockScoresRefuseAPlanOfTheRowOrShortRowKernel) {
  const common::select::BlockScores src{nullptr, 0, common::RowSpan{}, 8};
  for (const bool row_kernel : {true, false}) {
    const common::select::GroupPlan plan{512, 1, row_kernel, !row_kernel};
    try {
      cuda::launch_select(src, plan, nullptr, nullptr);
      ADD_FAILURE() << "no refusal of the " << (row_kernel ? "row" : "short-row") << " kernel";
    } catch (const Unsupported& e) {
      EXPECT_NE(std::string(e.what()).find(row_kernel ? "names the row kernel" : "names the short-row kernel"),
                std::string::npos) << e.what();
    }
  }
}

// Rows that one block's registers hold (at most 16384 entries): the short-row
// kernel at any row count, on every row kind, at k from 1 to past the row,
// rows walked by a persistent grid (more rows than blocks); the dispatch's
// choice is asserted, so this tests it.
TEST(CudaSelect, ShortRowKernelTakesRowsOfOneTile) {
  REQUIRE_SM90();
  const std::vector<int64_t> cycle = {0, 1, 511, 512, 4097, 8192, 16383, 16384};
  std::vector<int64_t> lens;
  for (int r = 0; r < 300; ++r) lens.push_back(cycle[size_t(r) % cycle.size()]);  // more rows than blocks
  ASSERT_TRUE(cuda::select_short_kernel(16384, cuda::SelectSource::values));
  ASSERT_FALSE(cuda::select_short_kernel(16385, cuda::SelectSource::values));  // past one tile
  ASSERT_FALSE(cuda::select_short_kernel(2048, cuda::SelectSource::blocks));   // block scores: 8 values an entry
  ASSERT_TRUE(cuda::select_short_kernel(1, cuda::SelectSource::values));       // even one entry
  auto ops = cuda::make_cuda_select_ops();
  Rng few_rng(89);
  const auto few = twins_testing::make_case({16384, 9000, 0, 1}, 16384, RowKind::normal, few_rng);
  EXPECT_TRUE(same_sets_as_reference(twins_testing::run_topk(*ops, few.logits, few.bounds, 512), few));
  uint64_t seed = 90;
  for (const RowKind kind : twins_testing::kAllRowKinds)
    for (const int k : {1, 512, 2048, 20000}) {
      if (kind != RowKind::normal && (k == 1 || k == 20000)) continue;
      Rng rng(seed++);
      const auto c = twins_testing::make_case(lens, 16384, kind, rng);
      const TopkIndices got = twins_testing::run_topk(*ops, c.logits, c.bounds, k);
      EXPECT_TRUE(same_sets_as_reference(got, c)) << twins_testing::to_string(kind) << ", k " << k;
      EXPECT_EQ(twins_testing::run_topk(*ops, c.logits, c.bounds, k).indices, got.indices);
    }
}

// 128k context, candidate blocks of 8, 2048 of them: the selection of the
// source layer and the consumer top-k, against the reference.
TEST(CudaSelect, CandidateSelectionAndTopkAsTheReference) {
  REQUIRE_SM90();
  auto ops = cuda::make_cuda_select_ops();
  for (const RowKind kind : {RowKind::normal, RowKind::quantized, RowKind::nan_heavy, RowKind::minus_inf_heavy}) {
    Rng rng(20 + uint64_t(kind));
    const auto c = twins_testing::make_case({131072, 5000, 1, 0, 70000}, 131072, kind, rng);
    const CandidateBlocks want = select_candidate_blocks(c.logits, c.bounds, 8, 2048);
    CandidateBlocks got{c.logits.rows, 2048, 8, std::vector<int32_t>(want.blocks.size())};
    oracle::fill_poison(std::span<int32_t>(got.blocks));
    ops->candidate_select(c.logits, c.bounds, got);
    for (int64_t r = 0; r < got.rows; ++r)
      EXPECT_EQ(sorted_row(got.row(r), got.slots), sorted_row(want.row(r), want.slots))
          << twins_testing::to_string(kind) << " row " << r;
    // The consumer top-k over those blocks, sorted (so the reference's tie order is ours) and shuffled.
    CandidateBlocks cand = want;
    for (int64_t r = 0; r < cand.rows; ++r) std::sort(cand.row(r), cand.row(r) + cand.slots);
    for (int pass = 0; pass < 2; ++pass) {
      TopkIndices out{c.logits.rows, 512, std::vector<int32_t>(size_t(c.logits.rows) * 512)};
      oracle::fill_poison(std::span<int32_t>(out.indices));
      ops->candidate_topk(c.logits, c.bounds, cand, out);
      if (pass == 0) {
        const TopkIndices ref = candidate_topk(c.logits, c.bounds, cand, 512);
        for (int64_t r = 0; r < out.rows; ++r)
          EXPECT_EQ(sorted_row(out.row(r), 512), sorted_row(ref.row(r), 512)) << twins_testing::to_string(kind);
      } else {
        Logits masked = c.logits;
        apply_candidate_mask(masked, c.bounds, cand);
        const auto verdict = oracle::check_topk(oracle::view(out), masked, c.bounds);
        EXPECT_TRUE(verdict.passed) << oracle::format_table(verdict);
      }
      for (int64_t r = 0; r < cand.rows; ++r) std::reverse(cand.row(r), cand.row(r) + cand.slots);
    }
  }
}

TEST(CudaSelect, MaskAndPaddingAsTheReference) {
  REQUIRE_SM90();
  auto ops = cuda::make_cuda_select_ops();
  auto ref = make_reference_ops();
  Rng rng(30);
  const auto c = twins_testing::make_case({131072, 77, 0, 4000}, 131072, RowKind::normal, rng);
  const CandidateBlocks cand = select_candidate_blocks(c.logits, c.bounds, 8, 2048);
  for (const CandidateMask variant : {CandidateMask::full, CandidateMask::strided}) {
    Logits a = c.logits, b = c.logits;
    ops->candidate_mask(a, c.bounds, cand, variant);
    ref->candidate_mask(b, c.bounds, cand, variant);
    EXPECT_TRUE(std::equal(a.values.begin(), a.values.end(), b.values.begin(), [](float x, float y) {
      return std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y);
    }));
  }
  EXPECT_TRUE(twins_testing::padding_as_reference(*ops, *ref, {3, 1, 4, 2}, 4, 8192, 2048, rng));
}

}  // namespace
}  // namespace dsa
