// The selection launches of the gfx942 design on CUDA (issue 13), on device
// pointers: decode top-k, candidate selection, candidate top-k, and the top-k
// half of the fused candidate launch. All run the shared TreeTopK
// (optimized/common/select): rows split over blocks (8192 entries each) and
// merged by the last block to finish, a total order (lowest position on
// ties, NaN above +inf), every output entry written (-1 after the chosen).
//
// The workspace (select_workspace) is zero when made and every launch leaves
// it zero; one workspace serves launches one after another on one stream.
// A launch refuses what it cannot take with dsa::Unsupported, before any work.
#pragma once

#include <cstdint>
#include <type_traits>

#include "dsa/common/candidate_mask.hpp"
#include "dsa/common/padding.hpp"
#include "dsa/common/select/block_topk.hpp"
#include "dsa/common/select/group_topk.hpp"
#include "dsa/common/select/sources.hpp"
#include "dsa/common/select/topk_tree.hpp"
#include "dsa/common/select/tree_plan.hpp"

namespace dsa::cuda {

// Entries one block ranks (the capacity the tree plans take).
int select_capacity();

// The plan for rows of at most `widest_entries` entries and k outputs;
// throws Unsupported naming the op when the launches cannot take it.
common::select::TreePlan select_plan(int64_t widest_entries, int32_t k, const char* op);

// The group launches (GroupTopK: a row per thread block cluster, no
// workspace, any k >= 1), the top-k kernels of cuda_select: blocks per row for
// `rows` rows of at most `widest_entries` entries on this GPU, and the plan.
// Throws InvalidInput for k < 1, Unsupported for rows of 2^31 entries or more.
int32_t select_group_size(int64_t rows, int64_t widest_entries);
// What the dispatch knows of a source (select/sources.hpp): a row's values (DenseRows), columns keyed at load
// (CandidateColumns), or blocks of several values an entry (BlockScores).
enum class SelectSource : int32_t { values, columns, blocks };
template <class Source>
constexpr SelectSource select_source_of() {
  if constexpr (std::is_same_v<Source, common::select::BlockScores>)
    return SelectSource::blocks;
  else if constexpr (Source::kValues)
    return SelectSource::values;
  else
    return SelectSource::columns;
}
// Whether such a launch runs the row kernel (RowTopK: a block per row) instead of clusters: the one dispatch.
bool select_row_kernel(int64_t rows, int64_t widest_entries, SelectSource source);
// The row kernel's block for `rows` rows of values: 1024 threads (one block an SM) while the rows leave SMs to
// spare, 512 (two an SM) past them.
int32_t select_row_threads(int64_t rows);
// Whether it runs the short-row kernel (ShortRowTopK: a block per row held in registers), at any row count; it
// comes first.
bool select_short_kernel(int64_t widest_entries, SelectSource source);
common::select::GroupPlan select_group_plan(int64_t rows, int64_t widest_entries, int32_t k, const char* op,
                                            SelectSource source);
void launch_select(const common::select::DenseRows& src, const common::select::GroupPlan& plan, int32_t* out,
                   void* stream);
void launch_select(const common::select::BlockScores& src, const common::select::GroupPlan& plan, int32_t* out,
                   void* stream);
void launch_select(const common::select::CandidateColumns& src, const common::select::GroupPlan& plan, int32_t* out,
                   void* stream);

// The tree launches (TreeTopK; the mutant build's kernels, and the speed
// benchmark's baseline of the previous kernel).
// Runs the selection over `src` into out (TreeOutput: [rows][k], workspace),
// on `stream` (a cudaStream_t, or null), without waiting.
void launch_select(const common::select::DenseRows& src, const common::select::TreePlan& plan,
                   const common::select::TreeOutput& out, void* stream);
void launch_select(const common::select::BlockScores& src, const common::select::TreePlan& plan,
                   const common::select::TreeOutput& out, void* stream);
void launch_select(const common::select::CandidateColumns& src, const common::select::TreePlan& plan,
                   const common::select::TreeOutput& out, void* stream);

// The row kernels around the selection (select_rows.cu): vLLM's padding
// pack/unpack and the candidate mask (full or strided). The mask keeps a bit
// per block of the widest row in shared memory: at most
// candidate_mask_bitmap_words() words (Unsupported beyond).
inline constexpr int kMaskBitmapBytes = 96 * 1024;
int64_t candidate_mask_bitmap_words();
void launch_pack_rows(const common::PackRows& p, void* stream);
void launch_unpack_topk(const common::UnpackTopk& p, void* stream);
void launch_candidate_mask(const common::CandidateMaskRows& p, void* stream);

// The same with a bug of the mutant catalog injected; only in a build with
// DSA_CUDA_MUTANTS (the GPU test bundle). Throws Unsupported elsewhere.
bool select_mutants_built();
void launch_select_mutant(common::select::Bug bug, const common::select::DenseRows& src,
                          const common::select::TreePlan& plan, const common::select::TreeOutput& out, void* stream);

}  // namespace dsa::cuda
