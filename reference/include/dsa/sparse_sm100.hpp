// The SM100 sparse form of the candidate consumer step (SPEC 7; the seed
// sparse_indexer_backend_sm100; vLLM sparse_mqa_logits.py; DeepGEMM
// fp8_fp4_(paged_)sparse_mqa_logits): candidate blocks expanded to sorted
// "sparse blocks" of SBK entries, bf16 logits at those entries only, a top-k
// over each row's valid prefix [0, end), and the remap of columns to positions.
//
// The kernel takes one query per row (vLLM's varlen decode layout), so a
// decode row's K range is [0, L_r): its candidate end is its own length.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/logits.hpp"
#include "dsa/problem.hpp"
#include "dsa/profile.hpp"
#include "dsa/topk.hpp"

namespace dsa {

// DeepSelect takes k up to this.
inline constexpr int kDeepSelectMaxK = 4096;

// SBK: the largest of 16 and 8 dividing the candidate block size. Throws
// InvalidInput("candidate_block_size", ...) when neither divides it.
int32_t pick_sparse_block_kv(int32_t candidate_block_size);

// [rows][num_sparse] sparse block ids (num_sparse = slots * S / SBK) and the
// per-row count of valid sparse columns.
struct SparseBlocks {
  int64_t rows = 0;
  int32_t num_sparse = 0;
  int32_t sparse_block_kv = 0;  // SBK
  std::vector<int32_t> ids;     // kernel block ids: ks / SBK + the row-relative sparse block
  std::vector<int32_t> end;     // [rows]
  const int32_t* row(int64_t r) const { return ids.data() + r * num_sparse; }
  int64_t width() const { return int64_t(num_sparse) * sparse_block_kv; }
};

// vLLM candidate_blocks_to_sparse_indices. Each candidate block b becomes the
// sparse blocks b*ratio .. b*ratio + ratio - 1; those below
// ceil((ke - ks) / SBK) are valid. Valid ids come first, ascending and unique,
// shifted by ks / SBK; the other slots repeat the last valid id (ks / SBK for
// a row with none). end = the valid columns: full blocks, the last one cut at
// ke (block i of the row starts at packed column i*SBK + ks % SBK).
SparseBlocks expand_candidate_blocks(const CandidateBlocks& candidates, const RowBounds& bounds);
// Decode rows: ks = 0, ke = L_r.
SparseBlocks expand_candidate_blocks(const DecodeProblem& problem, const CandidateBlocks& candidates);

// The entry (relative to ks) that sparse column `col` of row r scores.
int64_t sparse_column_position(const SparseBlocks& sparse, std::span<const int64_t> row_ks, int64_t row,
                               int64_t col);

// The kernel's bf16 logits [rows][width()]: column j*SBK + o holds the logit of
// entry id_j*SBK + o, computed by decode_logits_at at those entries only;
// columns at or beyond end[r] hold -inf (the kernel writes its padding
// blocks there; the top-k never reads them). Needs an MXFP4 problem and a
// profile with bf16 logits (deepgemm_sm100_bf16); throws InvalidInput
// ("kv_cache" / "profile") otherwise.
Logits sparse_logits(const DecodeProblem& problem, const Profile& profile, const SparseBlocks& sparse);

// DeepSelect's top-k of each row's columns [0, end[r]) (topk_row: -1 fill
// when end < k). Throws InvalidInput("topk") for k outside [1, kDeepSelectMaxK].
TopkIndices sparse_topk(const Logits& sparse_logits, const SparseBlocks& sparse, int k);

// Column j*SBK + o -> (id_j - ks/SBK)*SBK + o; -1 stays -1.
TopkIndices remap_sparse_topk(const TopkIndices& columns, const SparseBlocks& sparse,
                              std::span<const int64_t> row_ks);

// The whole decode step: expand, sparse logits, top-k, remap to positions.
TopkIndices sparse_candidate_topk(const DecodeProblem& problem, const Profile& profile,
                                  const CandidateBlocks& candidates, int k);

}  // namespace dsa
