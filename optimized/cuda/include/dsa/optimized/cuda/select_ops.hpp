// The CUDA selection launches (select.hpp) as implementations under test:
// topk (decode and prefill rows), candidate_select and candidate_topk, with
// the shared host half (optimized/common/host/selection_ops.hpp): inputs and
// the caller's poisoned outputs go to the device, outputs come back whole.
// A machine without an sm_90 or sm_100 GPU gets Unsupported.
#pragma once

#include <memory>

#include "dsa/common/select/block_topk.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::cuda {

// cuda_select: the top-k launches run GroupTopK (a row per thread block cluster).
std::unique_ptr<IndexerOps> make_cuda_select_ops();
// cuda_select_tree: the same ops with the top-k launches on TreeTopK (no clusters),
// the shared code the gfx942 build launches at wave 64, here run at warp 32.
std::unique_ptr<IndexerOps> make_cuda_select_tree_ops();
// The same with a bug of select::Bug compiled into the top-k kernel (the
// mutant catalog's CUDA entries); Unsupported unless built with DSA_CUDA_MUTANTS.
std::unique_ptr<IndexerOps> make_cuda_select_mutant(common::select::Bug bug);

}  // namespace dsa::cuda
