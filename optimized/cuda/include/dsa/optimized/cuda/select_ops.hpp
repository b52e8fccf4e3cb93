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

std::unique_ptr<IndexerOps> make_cuda_select_ops();
// The same with a bug of select::Bug compiled into the top-k kernel (the
// mutant catalog's CUDA entries); Unsupported unless built with DSA_CUDA_MUTANTS.
std::unique_ptr<IndexerOps> make_cuda_select_mutant(common::select::Bug bug);

}  // namespace dsa::cuda
