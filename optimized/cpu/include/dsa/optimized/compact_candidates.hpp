// CPU twin of the consumer layers' compact-candidate path (SPEC 7; the gfx942
// design's `candidate_logits_top_k` launch): logits are computed only at the
// candidate blocks' columns, straight into compact rows
// (compact[r][c * S + t] = logit of position block_c * S + t), and the top-k is
// taken from the compact rows and remapped to positions.
//
// Its compact logits are a second algorithm, not the reference's
// decode_logits_at: per row it stages the pages its candidate columns touch,
// reads each column's entry out of its staged page with the layout's own
// addressing, then makes one pass over the gathered entries (the profile's
// matrix-unit model for the per-head dots, the exact model as a sequential
// double sum, then the profile's reduction program), as a GPU kernel would.
// So compact = dense (and compact = reference) check the reference's gather
// and tiling as much as the twin's. Its candidate_topk gathers the compact row
// from the logits it is given and selects with the top_k_per_row twin
// (radix_topk.hpp); it never computes a dense row. candidate_logits_top_k is
// the fused launch: these compact logits, then that top-k over them.
//
// Compact columns of -1 slots and at positions at or beyond L_r are written
// -inf (the kernels may leave them; the top-k never reads them). Ties at the
// cut go to the first compact columns in slot order.
#pragma once

#include <memory>

#include "dsa/indexer_ops.hpp"

namespace dsa::optimized {

// Bugs a gather can have, for tests that show the properties see them.
struct CompactCandidatesDefects {
  // The entry's slot in its page taken modulo the candidate block size S, not
  // the page size (both are a "block_size" in the kernels' arguments): right
  // only when the two are equal.
  bool slot_modulo_candidate_block = false;
  // Every entry takes the K scale of its page's first slot (a scale loaded once per page).
  bool scale_of_first_slot = false;
};

std::unique_ptr<IndexerOps> make_cpu_compact_candidates(const CompactCandidatesDefects& defects = {});

}  // namespace dsa::optimized
