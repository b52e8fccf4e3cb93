// The SM100 sparse backend (cuda_sm100_sparse_*, docs/cuda_sm100.md): the engine-start checks (on
// any machine), and on an sm_90 or sm_100 GPU the candidate expansion and the top-k over `end`
// against the reference, with "every entry written". Without such a GPU those tests report skipped.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/optimized/cuda/cuda_ops.hpp"
#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/sm100_sparse.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/determinism_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/rows.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/sparse_check.hpp"
#include "dsa/rng.hpp"
#include "dsa/sparse_sm100.hpp"
#include "dsa_cuda/layout/umma_desc.cuh"

namespace dsa {
namespace {

using cuda::Sm100SparseKernels;

#define REQUIRE_SPARSE_SELECT_GPU()                                                                  \
  do {                                                                                               \
    if (!cuda::sparse_select_available())                                                            \
      GTEST_SKIP() << "no sm_90 or sm_100 GPU: "                                                     \
                   << (cuda::device_info().present ? cuda::device_info().name : cuda::device_info().why_absent); \
  } while (0)

// V4.1's shape, the numbers of the seed's builder.
cuda::SparseBackendConfig v41() {
  cuda::SparseBackendConfig c;
  c.candidate_block_size = 8;
  c.candidate_topk_blocks = 2048;
  c.topk_tokens = 512;
  c.cache_element = ElementFormat::mxfp4;
  c.page_size = 64;
  c.heads = 32;
  c.head_dim = 128;
  c.max_rows = 256;
  return c;
}

template <class F>
std::string invalid_input_argument(F&& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.argument();
  }
  return "(no InvalidInput)";
}

TEST(Sm100SparseBackend, ChecksEveryRequirementOfTheBuilderOnce) {
  cuda::SparseBackendConfig c = v41();
  c.sparse_logits = false;
  const cuda::SparseLayout l = cuda::check_sparse_backend(c);
  EXPECT_EQ(l.sparse_block_kv, 8);
  EXPECT_EQ(l.num_sparse_blocks, 2048);
  EXPECT_EQ(l.num_sparse_columns, 16384);
  c.candidate_block_size = 32;
  EXPECT_EQ(cuda::check_sparse_backend(c).sparse_block_kv, 16);
  EXPECT_EQ(cuda::check_sparse_backend(c).num_sparse_blocks, 4096);

  const auto arg = [](auto change) {
    cuda::SparseBackendConfig bad = v41();
    bad.sparse_logits = false;
    change(bad);
    return invalid_input_argument([&] { cuda::check_sparse_backend(bad); });
  };
  EXPECT_EQ(arg([](auto& b) { b.candidate_block_size = 0; }), "candidate_block_size");  // not a V4.1 model
  EXPECT_EQ(arg([](auto& b) { b.candidate_topk_blocks = 0; }), "candidate_block_size");
  EXPECT_EQ(arg([](auto& b) { b.cache_element = ElementFormat::e4m3fn; }), "kv_cache");
  EXPECT_EQ(arg([](auto& b) { b.candidate_block_size = 12; }), "candidate_block_size");  // neither 16 nor 8 divides
  EXPECT_EQ(arg([](auto& b) { b.page_size = 60; }), "page_size");
  EXPECT_EQ(arg([](auto& b) { b.candidate_block_size = 16, b.page_size = 8; }), "page_size");
  EXPECT_EQ(arg([](auto& b) { b.topk_tokens = 4097; }), "topk_tokens");
  EXPECT_EQ(arg([](auto& b) { b.topk_tokens = 0; }), "topk_tokens");
  EXPECT_EQ(arg([](auto& b) { b.candidate_topk_blocks = 32, b.topk_tokens = 512; }), "topk_tokens");  // 256 columns
  EXPECT_EQ(arg([](auto& b) { b.candidate_topk_blocks = 4097; }), "candidate_topk_blocks");
  EXPECT_EQ(arg([](auto& b) { b.heads = 16; }), "heads");
  EXPECT_EQ(arg([](auto& b) { b.max_rows = 0; }), "max_rows");
}

TEST(Sm100SparseBackend, TheDeviceIsCheckedWhenTheBackendIsMade) {
  cuda::SparseBackendConfig c = v41();
  if (!cuda::sm100_available()) {
    EXPECT_THROW(cuda::SparseBackend{c}, Unsupported);  // the logits need a B200
  }
  c.sparse_logits = false;
  if (!cuda::sparse_select_available()) {
    EXPECT_THROW(cuda::SparseBackend{c}, Unsupported);
  }
  // The configuration is checked first, as in the seed's builder.
  c.cache_element = ElementFormat::e4m3fn;
  EXPECT_EQ(invalid_input_argument([&] { cuda::SparseBackend{c}; }), "kv_cache");
}

// The tcgen05 descriptors the logits kernel issues, field by field (PTX ISA's instruction and
// shared-memory descriptor tables; CUTLASS's UMMA::InstrDescriptor[BlockScaled] agree).
TEST(Sm100SparseLogitsDescriptors, InstructionDescriptorsHoldEveryField) {
  // f8f6f4, e4m3 x e4m3 -> f32, K-major, M 128, N 64: D format 1 at bit 4, N/8 = 8 at 17, M/16 = 8 at 24.
  EXPECT_EQ(cuda::layout::f8f6f4_e4m3_idesc(128, 64), 0x08100010u);
  EXPECT_EQ(cuda::layout::f8f6f4_e4m3_idesc(128, 32), 0x08080010u);
  // mxf4: E2M1 (1) at bits 7 and 10, UE8M0 (1) at bit 23, scale ids at 4-5 (B) and 29-30 (A).
  EXPECT_EQ(cuda::layout::mxf4_idesc(128, 32, 0), 0x08880480u);
  EXPECT_EQ(cuda::layout::mxf4_idesc(128, 64, 2), 0x489004A0u);
}

TEST(Sm100SparseLogitsDescriptors, NoSwizzleTilesAreAPermutationOfCoreMatrices) {
  for (const uint32_t row_bytes : {32u, 64u, 128u}) {
    std::vector<int> seen(128 * row_bytes, 0);
    for (uint32_t r = 0; r < 128; ++r)
      for (uint32_t b = 0; b < row_bytes; ++b) {
        const uint32_t o = cuda::layout::core_matrix_offset(r, b, row_bytes);
        ASSERT_LT(o, seen.size());
        ++seen[o];
        // A core matrix is 8 rows of 16 contiguous bytes.
        if (b % 16 != 15) {
          EXPECT_EQ(cuda::layout::core_matrix_offset(r, b + 1, row_bytes), o + 1);
        }
      }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; })) << row_bytes;
    // K step s (32 bytes of K) starts 256 s bytes in: the descriptor's start moves with it.
    EXPECT_EQ(cuda::layout::core_matrix_offset(0, 32, row_bytes), cuda::layout::kKStepBytes);
  }
  // Descriptor: start >> 4 at 0, LBO 128 >> 4 at 16, SBO 8 * 64 >> 4 at 32, version 1 at 46.
  EXPECT_EQ(cuda::layout::kmajor_tile_descriptor(0x400, 64, 1),
            (uint64_t(0x500 >> 4)) | (uint64_t(8) << 16) | (uint64_t(32) << 32) | (uint64_t(1) << 46));
  std::vector<int> slots(128, 0);
  for (uint32_t m = 0; m < 128; ++m) ++slots[cuda::layout::scale_staging_index(m)];
  EXPECT_TRUE(std::all_of(slots.begin(), slots.end(), [](int n) { return n == 1; }));
}

// Candidate rows of distinct blocks, some past the row end, some -1; bounds [ks, ke) with ks of
// any alignment and lengths at and around sparse-block edges.
struct ExpandCase {
  CandidateBlocks candidates;
  RowBounds bounds;
};

ExpandCase draw_expand_case(Rng& rng, int32_t block_size, int32_t slots, int64_t rows) {
  ExpandCase c;
  c.candidates = {rows, slots, block_size, std::vector<int32_t>(size_t(rows * slots), -1)};
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t ks = rng.bernoulli(0.5) ? 0 : rng.uniform_int(0, 50);
    const int64_t edges[] = {0, 1, 7, 8, 9, 15, 16, 17, block_size - 1, block_size, block_size + 1};
    const int64_t len = rng.bernoulli(0.3) ? edges[rng.uniform_int(0, 10)] : rng.uniform_int(0, 40 * block_size);
    c.bounds.start.push_back(ks);
    c.bounds.end.push_back(ks + len);
    // Distinct blocks from [0, blocks + 3): a few lie past the row.
    const int64_t blocks = (len + block_size - 1) / block_size + 3;
    std::vector<int32_t> pool;
    for (int64_t b = 0; b < blocks; ++b) pool.push_back(int32_t(b));
    for (size_t i = pool.size(); i > 1; --i) std::swap(pool[i - 1], pool[size_t(rng.uniform_int(0, int64_t(i) - 1))]);
    int32_t* row = c.candidates.row(r);
    for (int32_t s = 0, next = 0; s < slots && size_t(next) < pool.size(); ++s)
      if (!rng.bernoulli(0.15)) row[s] = pool[size_t(next++)];
  }
  return c;
}

SparseBlocks poisoned_like(const SparseBlocks& expected) {
  SparseBlocks s = expected;
  oracle::fill_poison(s.ids);
  oracle::fill_poison(s.end);
  return s;
}

TEST(Sm100SparseSelect, ExpansionEqualsTheReferenceEveryEntryWritten) {
  REQUIRE_SPARSE_SELECT_GPU();
  const auto impl = cuda::make_cuda_sm100_sparse_ops(Sm100SparseKernels::select);
  Rng rng(20261201);
  const int32_t sizes[] = {8, 16, 24, 32, 40, 64};
  const int32_t slot_counts[] = {1, 3, 96, 513, 2048, 4096};
  for (int i = 0; i < 36; ++i) {
    const int32_t S = sizes[i % 6], slots = slot_counts[i / 6];
    const ExpandCase c = draw_expand_case(rng, S, slots, rng.uniform_int(1, 5));
    const SparseBlocks expected = expand_candidate_blocks(c.candidates, c.bounds);
    SparseBlocks out = poisoned_like(expected);
    impl->expand_candidate_blocks(c.candidates, c.bounds, out);
    const oracle::SparseBlocksVerdict v = oracle::check_sparse_blocks(out, expected);
    EXPECT_TRUE(v.passed) << "S " << S << " slots " << slots << "\n" << oracle::format_table(v);
  }
}

// A device copy for the backend's raw launches.
template <class T>
struct Device {
  T* p = nullptr;
  explicit Device(const std::vector<T>& host) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(1, host.size()) * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~Device() { cudaFree(p); }
};

TEST(Sm100SparseSelect, TheBackendExpandsEachStepIntoItsScratch) {
  REQUIRE_SPARSE_SELECT_GPU();
  cuda::SparseBackendConfig c = v41();
  c.sparse_logits = false;
  c.candidate_topk_blocks = 64;
  c.topk_tokens = 128;
  c.max_rows = 6;
  cuda::SparseBackend backend(c);
  Rng rng(11);
  for (const int64_t rows : {6, 2}) {  // two steps through the same scratch
    const ExpandCase e = draw_expand_case(rng, c.candidate_block_size, c.candidate_topk_blocks, rows);
    const SparseBlocks expected = expand_candidate_blocks(e.candidates, e.bounds);
    std::vector<int32_t> ks(e.bounds.start.begin(), e.bounds.start.end()), ke(e.bounds.end.begin(), e.bounds.end.end());
    Device<int32_t> cand(e.candidates.blocks), dks(ks), dke(ke);
    backend.expand(rows, cand.p, dks.p, dke.p, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    SparseBlocks out = expected;
    ASSERT_EQ(cudaMemcpy(out.ids.data(), backend.sparse_ids(), out.ids.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(out.end.data(), backend.end(), out.end.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    const oracle::SparseBlocksVerdict v = oracle::check_sparse_blocks(out, expected);
    EXPECT_TRUE(v.passed) << rows << " rows\n" << oracle::format_table(v);
  }
  EXPECT_EQ(invalid_input_argument([&] { backend.expand(7, nullptr, nullptr, nullptr, nullptr); }), "rows");
}

// Sparse logits as the backend writes them (bf16 values), with ties, -inf runs and NaN; poison past
// each row's end, which the top-k must never read.
Logits draw_sparse_logits(Rng& rng, const SparseBlocks& s) {
  Logits l{s.rows, s.width(), std::vector<float>(size_t(s.rows * s.width()))};
  oracle::fill_poison(l.values, oracle::kPoisonBf16AsF32Bits);
  for (int64_t r = 0; r < s.rows; ++r) {
    const int kind = int(rng.uniform_int(0, 3));  // normal, 16 levels, mostly -inf, with NaN
    for (int64_t c = 0; c < s.end[size_t(r)]; ++c) {
      float v = float(rng.normal());
      if (kind == 1) v = float(rng.uniform_int(0, 15)) * 0.25f;
      if (kind == 2 && rng.bernoulli(0.875)) v = -std::numeric_limits<float>::infinity();
      if (kind == 3 && rng.bernoulli(0.05)) v = std::numeric_limits<float>::quiet_NaN();
      l.values[size_t(r * s.width() + c)] = round_to_bf16(v);
    }
  }
  return l;
}

TEST(Sm100SparseSelect, TopkOverEndIsTheRuleRemappedToPositionsEveryEntryWrittenDeterministic) {
  REQUIRE_SPARSE_SELECT_GPU();
  const auto impl = cuda::make_cuda_sm100_sparse_ops(Sm100SparseKernels::select);
  Rng rng(20261202);
  struct Shape {
    int32_t block_size, slots, k;
  };
  // V4.1 (16384 columns, k 512), DeepSelect's largest k, ratio 2 and 3, rows shorter than k.
  const Shape shapes[] = {{8, 2048, 512}, {16, 1024, 4096}, {32, 64, 100}, {24, 40, 7}, {8, 96, 512}, {64, 4, 1}};
  for (const Shape& sh : shapes) {
    const ExpandCase c = draw_expand_case(rng, sh.block_size, sh.slots, rng.uniform_int(1, 4));
    const SparseBlocks sparse = expand_candidate_blocks(c.candidates, c.bounds);
    const Logits values = draw_sparse_logits(rng, sparse);
    const std::vector<int64_t> row_ks = c.bounds.start;
    TopkIndices first = oracle::poisoned_topk(sparse.rows, sh.k);
    TopkIndices second = first;
    impl->sparse_topk(values, sparse, row_ks, first);
    impl->sparse_topk(values, sparse, row_ks, second);
    const std::string what = "S " + std::to_string(sh.block_size) + " slots " + std::to_string(sh.slots) + " k " +
                             std::to_string(sh.k);
    const oracle::WrittenVerdict w = oracle::check_written(oracle::view(first), "topk_indices");
    EXPECT_TRUE(w.passed) << what << "\n" << oracle::format_table(w);
    const oracle::SelectionVerdict v =
        oracle::check_topk_among(oracle::view(first), oracle::sparse_columns(values, sparse, row_ks));
    EXPECT_TRUE(v.passed) << what << "\n" << oracle::format_table(v);
    const oracle::DeterminismVerdict d = oracle::check_determinism(oracle::view(first), oracle::view(second));
    EXPECT_TRUE(d.passed) << what << "\n" << oracle::format_table(d);
  }
}

TEST(Sm100SparseSelect, TopkRefusesWhatDeepSelectCannotTake) {
  const auto impl = cuda::make_cuda_sm100_sparse_ops(Sm100SparseKernels::select);
  Rng rng(5);
  const ExpandCase c = draw_expand_case(rng, 8, 16, 2);
  const SparseBlocks sparse = expand_candidate_blocks(c.candidates, c.bounds);
  Logits values = draw_sparse_logits(rng, sparse);
  TopkIndices big{2, kDeepSelectMaxK + 1, std::vector<int32_t>(size_t(2 * (kDeepSelectMaxK + 1)))};
  EXPECT_EQ(invalid_input_argument([&] { impl->sparse_topk(values, sparse, c.bounds.start, big); }), "topk");
  TopkIndices out{2, 8, std::vector<int32_t>(16)};
  if (sparse.end[0] > 0) {
    values.values[0] = 0.1f;  // not a bf16 value
    EXPECT_EQ(invalid_input_argument([&] { impl->sparse_topk(values, sparse, c.bounds.start, out); }), "sparse_logits");
  }
}

TEST(Sm100SparseSelect, RefusesBadInputOnAnyMachine) {
  const auto impl = cuda::make_cuda_sm100_sparse_ops(Sm100SparseKernels::select);
  Rng rng(7);
  ExpandCase c = draw_expand_case(rng, 8, 4, 2);
  SparseBlocks out{2, 4, 8, std::vector<int32_t>(8), std::vector<int32_t>(2)};
  // The checks of the arguments come before the device's.
  c.bounds.start[1] = -1;
  EXPECT_EQ(invalid_input_argument([&] { impl->expand_candidate_blocks(c.candidates, c.bounds, out); }), "row_bounds");
  c = draw_expand_case(rng, 12, 4, 2);
  EXPECT_EQ(invalid_input_argument([&] { impl->expand_candidate_blocks(c.candidates, c.bounds, out); }),
            "candidate_block_size");
  c = draw_expand_case(rng, 8, 4, 2);
  SparseBlocks narrow{2, 3, 8, std::vector<int32_t>(6), std::vector<int32_t>(2)};
  EXPECT_EQ(invalid_input_argument([&] { impl->expand_candidate_blocks(c.candidates, c.bounds, narrow); }),
            "sparse_block_ids");
  // The logits implementation has no expansion.
  const auto logits = cuda::make_cuda_sm100_sparse_ops(Sm100SparseKernels::logits);
  EXPECT_THROW(logits->expand_candidate_blocks(c.candidates, c.bounds, out), Unsupported);
}

TEST(Sm100SparseSelect, TooManySlotsIsRefusedNotTruncated) {
  REQUIRE_SPARSE_SELECT_GPU();
  const auto impl = cuda::make_cuda_sm100_sparse_ops(Sm100SparseKernels::select);
  Rng rng(9);
  const ExpandCase c = draw_expand_case(rng, 8, cuda::kExpandMaxSlots + 1, 1);
  SparseBlocks out = poisoned_like(expand_candidate_blocks(c.candidates, c.bounds));
  EXPECT_THROW(impl->expand_candidate_blocks(c.candidates, c.bounds, out), Unsupported);
}

}  // namespace
}  // namespace dsa
