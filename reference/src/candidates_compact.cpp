// Compact candidate logits (SPEC 7): the consumer layers score only their
// candidate columns, into rows of candidate_topk_blocks * candidate_block_size.
// The values come from decode_logits_at, which gathers just those entries: this
// path never computes a dense row, so comparing it with the dense logits is a
// real check of the "bit-identical at the same positions" property.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "shared_constants.hpp"

namespace dsa {
namespace {

void check_compact(const Logits& compact, const CandidateBlocks& candidates) {
  candidates.validate();
  if (compact.rows != candidates.rows || compact.width != int64_t(candidates.slots) * candidates.block_size)
    throw InvalidInput("compact_logits", "shape [" + std::to_string(compact.rows) + ", " +
                                             std::to_string(compact.width) + "], the candidates need [" +
                                             std::to_string(candidates.rows) + ", " +
                                             std::to_string(int64_t(candidates.slots) * candidates.block_size) + "]");
}

}  // namespace

int64_t compact_column_position(const CandidateBlocks& candidates, int64_t row, int64_t col) {
  const int64_t S = candidates.block_size;
  const int64_t block = candidates.row(row)[col / S];
  return block < 0 ? -1 : block * S + col % S;
}

namespace {

// The compact rows of `candidates`: column c*S + t of row r scores position
// block_c*S + t (relative to the row start) when it is below lens[r], by
// `score_at(positions per row)`; everything else stays -inf.
template <class ScoreAt>
Logits compact_rows(const CandidateBlocks& candidates, std::span<const int64_t> lens, const ScoreAt& score_at) {
  const int64_t rows = candidates.rows;
  const int64_t width = int64_t(candidates.slots) * candidates.block_size;
  std::vector<std::vector<int64_t>> positions(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < width; ++col) {
      const int64_t p = compact_column_position(candidates, r, col);
      if (p >= 0 && p < lens[size_t(r)]) positions[size_t(r)].push_back(p);
    }
  const auto values = score_at(positions);
  Logits compact{rows, width, std::vector<float>(size_t(rows * width), -kInf)};
  for (int64_t r = 0; r < rows; ++r) {
    size_t i = 0;
    for (int64_t col = 0; col < width; ++col) {
      const int64_t p = compact_column_position(candidates, r, col);
      if (p >= 0 && p < lens[size_t(r)]) compact.row(r)[col] = values[size_t(r)][i++];
    }
  }
  return compact;
}

void check_candidate_rows(const CandidateBlocks& candidates, int64_t rows) {
  candidates.validate();
  if (candidates.rows != rows)
    throw InvalidInput("candidate_blocks", std::to_string(candidates.rows) + " rows, the problem has " +
                                               std::to_string(rows));
}

}  // namespace

Logits compact_candidate_logits(const DecodeProblem& problem, const Profile& profile,
                                const CandidateBlocks& candidates) {
  check_candidate_rows(candidates, problem.rows());
  return compact_rows(candidates, visible_lens(problem),
                      [&](const auto& positions) { return decode_logits_at(problem, profile, positions); });
}

Logits prefill_compact_candidate_logits(const PrefillProblem& problem, const Profile& profile,
                                        const CandidateBlocks& candidates) {
  problem.validate();
  check_candidate_rows(candidates, problem.rows);
  std::vector<int64_t> lens(size_t(problem.rows));
  for (size_t r = 0; r < lens.size(); ++r) lens[r] = std::max<int64_t>(0, problem.ke[r] - problem.ks[r]);
  return compact_rows(candidates, lens, [&](std::vector<std::vector<int64_t>> positions) {
    for (size_t r = 0; r < positions.size(); ++r)
      for (int64_t& p : positions[r]) p += problem.ks[r];
    return prefill_logits_at(problem, profile, positions);
  });
}

TopkIndices compact_candidate_topk(const Logits& compact, const CandidateBlocks& candidates,
                                   std::span<const int64_t> lens, int k) {
  if (k < 1) throw InvalidInput("topk", "k must be at least 1, got " + std::to_string(k));
  check_compact(compact, candidates);
  if (int64_t(lens.size()) != compact.rows)
    throw InvalidInput("seq_lens", std::to_string(lens.size()) + " row lengths for " +
                                       std::to_string(compact.rows) + " rows");
  TopkIndices out{compact.rows, k, std::vector<int32_t>(size_t(compact.rows) * size_t(k))};
#pragma omp parallel for schedule(dynamic) if (compact.rows * compact.width >= kParallelLogits)
  for (int64_t r = 0; r < compact.rows; ++r) {
    // (position, compact column) of the columns the top-k may read, in
    // position order so that ties go to the lowest position as in candidate_topk.
    std::vector<std::pair<int64_t, int64_t>> columns;
    for (int64_t col = 0; col < compact.width; ++col) {
      const int64_t p = compact_column_position(candidates, r, col);
      if (p >= 0 && p < lens[size_t(r)]) columns.emplace_back(p, col);
    }
    std::sort(columns.begin(), columns.end());
    std::vector<float> values(columns.size());
    for (size_t i = 0; i < columns.size(); ++i) values[i] = compact.row(r)[columns[i].second];
    int32_t* dst = out.row(r);
    topk_row(values.data(), int64_t(values.size()), k, dst);
    for (int i = 0; i < k; ++i)
      if (dst[i] >= 0) dst[i] = int32_t(columns[size_t(dst[i])].first);
  }
  return out;
}

}  // namespace dsa
