// The check of each property on one case (properties_*.cpp); the registry
// (properties.cpp) names them and pairs them with their generators.
#pragma once

#include "dsa/fuzz/properties.hpp"

namespace dsa::fuzz::detail {

// The cases of the properties that reach every op (every kind in `mask`, decode
// cases of every form: plain, padded, SM100 sparse), and their probes.
rc::Gen<FuzzCase> gen_every_op(const GenLimits& limits, KindMask mask);
std::vector<FuzzCase> probes_of_every_op();

Outcome check_topk_agrees(IndexerOps& impl, const TopkCase& c);
Outcome check_columns_past_length_ignored(IndexerOps& impl, const TopkCase& c);
Outcome check_columns_past_length_ignored(IndexerOps& impl, const CandidateCase& c);
Outcome check_candidate_select_agrees(IndexerOps& impl, const CandidateCase& c);
Outcome check_candidate_topk_agrees(IndexerOps& impl, const CandidateCase& c);
Outcome check_mask_then_topk(IndexerOps& impl, const CandidateCase& c);

Outcome check_logits_agree(IndexerOps& impl, const DecodeCase& c);
Outcome check_logits_agree_clean(IndexerOps& impl, const DecodeCase& c);
Outcome check_prefill_logits_agree(IndexerOps& impl, const PrefillCase& c);
Outcome check_page_permutation(IndexerOps& impl, const DecodeCase& c);
Outcome check_compact_logits_agree(IndexerOps& impl, const DecodeCase& c);
Outcome check_compact_equals_dense(IndexerOps& impl, const DecodeCase& c);
Outcome check_padded_equals_unpadded(IndexerOps& impl, const DecodeCase& c);

Outcome check_candidate_mask_agrees(IndexerOps& impl, const CandidateCase& c);
Outcome check_candidate_logits_top_k_agrees(IndexerOps& impl, const DecodeCase& c);
Outcome check_prefill_compact_equals_dense(IndexerOps& impl, const PrefillCase& c);
Outcome check_padding_round_trip(IndexerOps& impl, const DecodeCase& c);
Outcome check_skip_decode_fill_agrees(IndexerOps& impl, const DecodeCase& c);
Outcome check_sparse_blocks_agree(IndexerOps& impl, const DecodeCase& c);
Outcome check_sparse_logits_agree(IndexerOps& impl, const DecodeCase& c);
Outcome check_sparse_topk_agrees(IndexerOps& impl, const DecodeCase& c);

Outcome check_determinism(IndexerOps& impl, const FuzzCase& c);
Outcome check_every_entry_written(IndexerOps& impl, const FuzzCase& c);

}  // namespace dsa::fuzz::detail
