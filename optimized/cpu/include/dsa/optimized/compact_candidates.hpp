// CPU twin of the consumer layers' compact-candidate path (SPEC 7; the gfx942
// design's `candidate_logits_top_k` launch): logits are computed only at the
// candidate blocks' columns, straight into compact rows
// (compact[r][c * S + t] = logit of position block_c * S + t), and the top-k is
// taken from the compact rows and remapped to positions. It never computes the
// dense row: its candidate_topk gathers the compact row from the logits it is
// given and selects with the top_k_per_row twin (radix_topk.hpp).
//
// Compact columns of -1 slots and at positions at or beyond L_r are written
// -inf (the kernels may leave them; the top-k never reads them). Ties at the
// cut go to the first compact columns in slot order.
#pragma once

#include <memory>

#include "dsa/indexer_ops.hpp"

namespace dsa::optimized {

std::unique_ptr<IndexerOps> make_cpu_compact_candidates();

}  // namespace dsa::optimized
