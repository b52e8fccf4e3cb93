// The selection launches (select.hpp): one kernel per source.
#include <cuda_runtime.h>

#include <string>

#include "dsa/error.hpp"
#include "dsa/optimized/cuda/select.hpp"
#include "select_launch.cuh"

namespace dsa::cuda {

using common::select::Bug;
namespace sk = select_kernels;

int select_capacity() { return sk::kCapacity; }

common::select::TreePlan select_plan(int64_t widest_entries, int32_t k, const char* op) {
  const std::string what = std::string("cuda selection ") + op;
  if (widest_entries > int64_t(INT32_MAX))
    throw Unsupported(what + ": rows of at most 2^31 - 1 entries, got " + std::to_string(widest_entries));
  common::select::TreePlan plan;
  switch (common::select::make_tree_plan(widest_entries, k, sk::kCapacity, plan)) {
    case common::select::PlanError::none: break;
    case common::select::PlanError::k_too_large:
      throw Unsupported(what + ": merges rows longer than " + std::to_string(sk::kCapacity) + " entries only for k <= " +
                        std::to_string(sk::kCapacity / 2) + ", got k = " + std::to_string(k));
    case common::select::PlanError::too_many_levels:
      throw Unsupported(what + ": rows of " + std::to_string(widest_entries) + " entries need more merge levels (" +
                        std::to_string(common::select::kMaxTreeLevels) + ") for k = " + std::to_string(k));
    case common::select::PlanError::bad_shape: throw InvalidInput("topk", "k must be at least 1, got " + std::to_string(k));
  }
  return plan;
}

int32_t select_group_size(int64_t rows, int64_t widest_entries) {
  return sk::group_size<common::select::DenseRows>(rows, widest_entries);
}

static int sm_count() {
  static const int sms = [] {
    int device = 0, n = 0;
    DSA_CUDA_CHECK(cudaGetDevice(&device));
    DSA_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
    return n;
  }();
  return sms;
}

// The one dispatch between the row kernel and the group kernel, the faster of
// the two on the shapes measured (bench/gpu/SELECT_RESULTS.md, runs 58 and 78,
// an H100). Rows of values past the short-row kernel's 16384 entries, up to the
// row kernel's bitmaps: up to 32768 entries at any row count (1 to 12 rows of
// 32k: the row kernel faster in 20 of 24 cases, at most 4 % slower in the
// others; 16 to 256 rows of 20k and 32k: 1.02-2.2x faster, run 58), longer ones
// from 4 rows (run 78: 4, 8 and 12 rows of 64k 1.06-1.53x faster, of 128k
// 0.97-1.06x outside 16-level rows and 1.26-1.31x on them; 1 and 2 rows of 128k
// stay the clusters', 1.00-1.10x faster outside 16-level rows). Rows of columns
// keyed at load (candidate top-k) past 32768 entries once they are a quarter of
// the SMs' count (runs 9 and 17). Block scores read several values an entry and
// stay the clusters' (2.6x, run 8).
bool select_row_kernel(int64_t rows, int64_t widest_entries, SelectSource source) {
  if (source == SelectSource::blocks || widest_entries <= sk::kShortCapacity || widest_entries > sk::kRowMaxEntries)
    return false;
  if (source == SelectSource::values)
    return widest_entries <= sk::kRowKernelAnyRowsEntries || rows >= sk::kRowKernelLongRowsFrom;
  return widest_entries > sk::kRowKernelAnyRowsEntries && 4 * rows >= sm_count();
}

// A row's block in the row kernel waits on its own instructions (ncu, SELECT_RESULTS.md run 46), so twice the
// warps on a row's SM take it faster: 1024 threads were 11-19 % faster at 1 to 64 rows of 128k and 2-5 % at 128
// and 132, and two blocks of 512 an SM 11-12 % faster at 256 rows (run 48, an H100); since the sample of 4096
// (run 50) the two are within 1 % at 256 rows, so past the SMs' count the dispatch keeps 512. Only rows of values take
// 1024 (launch_planned): no other source reaches the row kernel with rows this long, and each instantiation
// adds to the build.
int32_t select_row_threads(int64_t rows) { return rows <= sm_count() ? 1024 : 512; }

// The short-row kernel for rows that one block's registers hold (at most
// 16384 entries, one value an entry), at any row count: since its first pass
// counts the end bins in registers and its marking compares keys (run 34) it is
// the faster kernel from 1 to 128 rows, on compact rows (14.3-18.3 us against
// the group kernel's 16.0-26.4) and on the candidate columns of dense rows
// (16.7-22.7 against 17.1-31.7): a block a row beats spreading a row of one
// tile over a cluster even where most SMs stay idle (bench/gpu/SELECT_RESULTS.md,
// run 34; before it the group kernel was the faster one below a quarter of the
// SMs' count, run 26).
bool select_short_kernel(int64_t widest_entries, SelectSource source) {
  return source != SelectSource::blocks && widest_entries <= sk::kShortCapacity;
}

common::select::GroupPlan select_group_plan(int64_t rows, int64_t widest_entries, int32_t k, const char* op,
                                            SelectSource source) {
  const std::string what = std::string("cuda selection ") + op;
  if (widest_entries > int64_t(INT32_MAX))
    throw Unsupported(what + ": rows of at most 2^31 - 1 entries, got " + std::to_string(widest_entries));
  if (k < 1) throw InvalidInput("topk", "k must be at least 1, got " + std::to_string(k));
  const int32_t g = select_group_size(rows, widest_entries);
  if (rows * g > int64_t(INT32_MAX))
    throw Unsupported(what + ": at most 2^31 - 1 blocks, got " + std::to_string(rows) + " rows of " +
                      std::to_string(g) + " blocks");
  return {k, g, select_row_kernel(rows, widest_entries, source), select_short_kernel(widest_entries, source)};
}

namespace {
// The kernel a group plan names, for any source (the overloads below keep the kernels' instantiations in
// this file: callers compiled as C++ see only the declarations).
template <class Source>
void launch_planned(const Source& src, const common::select::GroupPlan& plan, int32_t* out, void* stream) {
  if (plan.short_row) {
    sk::launch_short(src, plan.k, out, stream);
  } else if (plan.row_kernel) {
    if constexpr (Source::kValues) {
      if (select_row_threads(src.rows()) == 1024) return sk::launch_row<Source, 1024>(src, plan.k, out, stream);
    }
    sk::launch_row(src, plan.k, out, stream);
  } else {
    sk::launch_group(src, plan, out, stream);
  }
}
}  // namespace

void launch_select(const common::select::DenseRows& src, const common::select::GroupPlan& plan, int32_t* out,
                   void* stream) {
  launch_planned(src, plan, out, stream);
}
// Block scores take the clusters only (select_row_kernel, select_short_kernel): the row and short-row kernels
// over them are not built (the row kernel's was 790 KB of SASS, and each instantiation adds to the build).
void launch_select(const common::select::BlockScores& src, const common::select::GroupPlan& plan, int32_t* out,
                   void* stream) {
  if (plan.row_kernel || plan.short_row)
    throw Unsupported("cuda selection candidate_select: block scores take the group kernel only; the plan names the " +
                      std::string(plan.row_kernel ? "row" : "short-row") + " kernel");
  sk::launch_group(src, plan, out, stream);
}
void launch_select(const common::select::CandidateColumns& src, const common::select::GroupPlan& plan, int32_t* out,
                   void* stream) {
  launch_planned(src, plan, out, stream);
}

void launch_select(const common::select::DenseRows& src, const common::select::TreePlan& plan,
                   const common::select::TreeOutput& out, void* stream) {
  sk::launch<common::select::DenseRows, Bug::none>(src, plan, out, stream);
}
void launch_select(const common::select::BlockScores& src, const common::select::TreePlan& plan,
                   const common::select::TreeOutput& out, void* stream) {
  sk::launch<common::select::BlockScores, Bug::none>(src, plan, out, stream);
}
void launch_select(const common::select::CandidateColumns& src, const common::select::TreePlan& plan,
                   const common::select::TreeOutput& out, void* stream) {
  sk::launch<common::select::CandidateColumns, Bug::none>(src, plan, out, stream);
}

#if !DSA_CUDA_MUTANTS
bool select_mutants_built() { return false; }
void launch_select_mutant(Bug, const common::select::DenseRows&, const common::select::TreePlan&,
                          const common::select::TreeOutput&, void*) {
  throw Unsupported("cuda selection: the mutants are built only with -DDSA_CUDA_MUTANTS=ON (the GPU test bundle)");
}
#endif

}  // namespace dsa::cuda
