// DeepSeek V4.1 candidate blocks (SPEC 7): the source layer's selection of
// candidate blocks, the consumer layers' mask and candidate top-k, and the
// compact candidate logits that score only the candidate columns.
//
// Every op works on a row's range [start, end) of a logits row: decode rows
// start at 0, prefill rows at ks (vLLM's bounds live in packed column space),
// and block c of a row covers columns [start + c*S, start + (c+1)*S) clipped to
// the row. Block ids and top-k indices are relative to the row start.
//
// The row end differs between the ops: the candidate ops (scores, selection,
// mask) use E_r (candidate_row_end: with 1-D lengths every row of a request
// sees the request's full length), the top-k uses the row's own L_r.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dsa/logits.hpp"
#include "dsa/problem.hpp"
#include "dsa/profile.hpp"
#include "dsa/topk.hpp"

namespace dsa {

// Per-row column ranges [start, end) of a logits tensor.
struct RowBounds {
  std::vector<int64_t> start;
  std::vector<int64_t> end;
  int64_t rows() const { return int64_t(end.size()); }
};

// Throws InvalidInput("row_bounds", ...) unless every row's [start, end) lies
// inside the logits width and there is one range per logits row.
void check_row_bounds(const Logits& logits, const RowBounds& bounds);

// The seed's _row_bounds: starts 0, row r ends at request_ends[r / row_repeat].
// Decode rows of one request share their bounds with row_repeat = next_n.
RowBounds repeated_row_bounds(std::span<const int64_t> request_ends, int32_t row_repeat);
// Decode: [0, E_r) for the candidate ops, [0, L_r) for the top-k.
RowBounds candidate_row_bounds(const DecodeProblem& problem);
RowBounds topk_row_bounds(const DecodeProblem& problem);
// Prefill: [ks, ke) for both.
RowBounds prefill_row_bounds(const PrefillProblem& problem);

// [rows][slots] candidate block ids, -1 for an empty slot. A row holds each
// block at most once; the order of blocks in a row is free (SPEC 7).
struct CandidateBlocks {
  int64_t rows = 0;
  int32_t slots = 0;       // candidate_topk_blocks
  int32_t block_size = 0;  // candidate_block_size S
  std::vector<int32_t> blocks;
  const int32_t* row(int64_t r) const { return blocks.data() + r * slots; }
  int32_t* row(int64_t r) { return blocks.data() + r * slots; }
  // Throws InvalidInput("candidate_blocks", ...) for a wrong size, an id
  // below -1, or a block held twice in one row.
  void validate() const;
};

// Scores of blocks [0, num_blocks) of one row: the max of the block's logits
// within [start, end) (NaN propagates), -inf for blocks past the row, +inf for
// the block holding the newest entry (end - start - 1) / S. An empty row has
// no live block. `row` is the whole logits row (column 0 = packed column 0).
std::vector<float> candidate_block_scores(const float* row, int64_t start, int64_t end, int32_t block_size,
                                          int64_t num_blocks);

// The source layer's selection (vLLM `_select_candidate_blocks`): per row the
// `slots` best blocks under the top-k value order (NaN above +inf), ties to
// the lower block index; blocks scoring -inf are never chosen and their slots
// are -1. The reference writes the chosen blocks by descending score (vLLM's
// CUDA order), then the -1 tail.
CandidateBlocks select_candidate_blocks(const Logits& logits, const RowBounds& bounds, int32_t block_size,
                                        int32_t slots);
CandidateBlocks select_candidate_blocks(const DecodeProblem& problem, const Logits& logits, int32_t block_size,
                                        int32_t slots);
CandidateBlocks select_candidate_blocks(const PrefillProblem& problem, const Logits& logits, int32_t block_size,
                                        int32_t slots);

enum class CandidateMask : uint8_t {
  full,     // vLLM apply_candidate_mask: -inf outside [start, end) and in non-candidate blocks
  strided,  // the gfx942 launch: -inf in non-candidate blocks of [start, end); the rest as it was
};
void apply_candidate_mask(Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                          CandidateMask variant = CandidateMask::full);

// Consumer top-k: the k largest logits among the candidate blocks' columns
// within the top-k bounds [start, L_r), indices relative to start, then -1.
// Order and ties as topk_row over the candidate columns in position order
// (lowest position wins a tie; k or fewer columns come out ascending).
TopkIndices candidate_topk(const Logits& logits, const RowBounds& topk_bounds, const CandidateBlocks& candidates,
                           int k);
TopkIndices candidate_topk(const DecodeProblem& problem, const Logits& logits, const CandidateBlocks& candidates,
                           int k);
TopkIndices candidate_topk(const PrefillProblem& problem, const Logits& logits, const CandidateBlocks& candidates,
                           int k);

// ---- Compact candidate logits (candidates_compact.cpp).
//
// compact[r][c*S + t] = logits[r][block_c*S + t], computed by decode_logits_at
// at the candidate positions only (never the dense row); -1 slots and
// positions at or beyond L_r hold -inf. Width = slots * S.
Logits compact_candidate_logits(const DecodeProblem& problem, const Profile& profile,
                                const CandidateBlocks& candidates);
// Prefill rows: compact[r][c*S + t] = logits[r][ks + block_c*S + t], by
// prefill_logits_at; -1 slots and positions with ks + position >= ke hold -inf.
Logits prefill_compact_candidate_logits(const PrefillProblem& problem, const Profile& profile,
                                        const CandidateBlocks& candidates);
// The position that compact column `col` of row r scores, or -1 for a column
// of an empty slot.
int64_t compact_column_position(const CandidateBlocks& candidates, int64_t row, int64_t col);
// Top-k of compact rows, remapped to positions. Reads only columns of live
// slots whose position is below lens[r] (kernels may leave the others
// unwritten); the order is candidate_topk's, so equal compact and dense
// values give the same indices.
TopkIndices compact_candidate_topk(const Logits& compact, const CandidateBlocks& candidates,
                                   std::span<const int64_t> lens, int k);

}  // namespace dsa
