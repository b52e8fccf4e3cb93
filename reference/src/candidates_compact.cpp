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

namespace dsa {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// Below this many logits a parallel region costs more than the rows.
constexpr int64_t kParallelWork = int64_t(1) << 16;

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

Logits compact_candidate_logits(const DecodeProblem& problem, const Profile& profile,
                                const CandidateBlocks& candidates) {
  candidates.validate();
  if (candidates.rows != problem.rows())
    throw InvalidInput("candidate_blocks", std::to_string(candidates.rows) + " rows, the problem has " +
                                               std::to_string(problem.rows()));
  const auto lens = visible_lens(problem);
  const int64_t width = int64_t(candidates.slots) * candidates.block_size;
  // Only live slots' visible positions are scored; everything else stays -inf.
  std::vector<std::vector<int64_t>> positions(size_t(problem.rows()));
  for (int64_t r = 0; r < problem.rows(); ++r)
    for (int64_t col = 0; col < width; ++col) {
      const int64_t p = compact_column_position(candidates, r, col);
      if (p >= 0 && p < lens[size_t(r)]) positions[size_t(r)].push_back(p);
    }
  const auto values = decode_logits_at(problem, profile, positions);

  Logits compact{problem.rows(), width, std::vector<float>(size_t(problem.rows() * width), -kInf)};
  for (int64_t r = 0; r < problem.rows(); ++r) {
    size_t i = 0;
    for (int64_t col = 0; col < width; ++col) {
      const int64_t p = compact_column_position(candidates, r, col);
      if (p >= 0 && p < lens[size_t(r)]) compact.row(r)[col] = values[size_t(r)][i++];
    }
  }
  return compact;
}

TopkIndices compact_candidate_topk(const Logits& compact, const CandidateBlocks& candidates,
                                   std::span<const int64_t> lens, int k) {
  if (k < 1) throw InvalidInput("topk", "k must be at least 1, got " + std::to_string(k));
  check_compact(compact, candidates);
  if (int64_t(lens.size()) != compact.rows)
    throw InvalidInput("seq_lens", std::to_string(lens.size()) + " row lengths for " +
                                       std::to_string(compact.rows) + " rows");
  TopkIndices out{compact.rows, k, std::vector<int32_t>(size_t(compact.rows) * size_t(k))};
#pragma omp parallel for schedule(dynamic) if (compact.rows * compact.width >= kParallelWork)
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
