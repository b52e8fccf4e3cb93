// The SM100 sparse form of the candidate consumer step (SPEC 7).
#include "dsa/sparse_sm100.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "dsa/error.hpp"
#include "shared_constants.hpp"

namespace dsa {
namespace {

void check_sparse_rows(const SparseBlocks& sparse, int64_t rows, const char* what) {
  if (sparse.rows != rows || sparse.end.size() != size_t(rows) ||
      sparse.ids.size() != size_t(rows) * size_t(sparse.num_sparse) || sparse.sparse_block_kv < 1)
    throw InvalidInput("sparse_indices", "shape does not match the " + std::to_string(rows) + " rows of " + what);
  for (int64_t r = 0; r < rows; ++r)
    if (sparse.end[size_t(r)] < 0 || sparse.end[size_t(r)] > sparse.width())
      throw InvalidInput("end", "row " + std::to_string(r) + " has end " + std::to_string(sparse.end[size_t(r)]) +
                                    " outside [0, " + std::to_string(sparse.width()) + "]");
}

}  // namespace

int32_t pick_sparse_block_kv(int32_t candidate_block_size) {
  for (const int32_t sbk : {16, 8})
    if (candidate_block_size > 0 && candidate_block_size % sbk == 0) return sbk;
  throw InvalidInput("candidate_block_size", std::to_string(candidate_block_size) +
                                                 " is not a positive multiple of a sparse block size (16 or 8)");
}

SparseBlocks expand_candidate_blocks(const CandidateBlocks& candidates, const RowBounds& bounds) {
  candidates.validate();
  if (bounds.start.size() != size_t(candidates.rows) || bounds.end.size() != size_t(candidates.rows))
    throw InvalidInput("row_bounds", "need one [ks, ke) per candidate row (" + std::to_string(candidates.rows) + ")");
  const int32_t sbk = pick_sparse_block_kv(candidates.block_size);
  const int32_t ratio = candidates.block_size / sbk;
  SparseBlocks out;
  out.rows = candidates.rows;
  out.num_sparse = candidates.slots * ratio;
  out.sparse_block_kv = sbk;
  out.ids.resize(size_t(out.rows) * size_t(out.num_sparse));
  out.end.resize(size_t(out.rows));
  for (int64_t r = 0; r < out.rows; ++r) {
    const int64_t ks = bounds.start[size_t(r)], ke = bounds.end[size_t(r)];
    if (ks < 0)
      throw InvalidInput("row_bounds", "row " + std::to_string(r) + " starts at " + std::to_string(ks));
    const int64_t max_block = (std::max<int64_t>(ke - ks, 0) + sbk - 1) / sbk;
    std::vector<int64_t> valid;
    for (int32_t c = 0; c < candidates.slots; ++c) {
      const int64_t block = candidates.row(r)[c];
      if (block < 0) continue;
      for (int64_t i = 0; i < ratio; ++i)
        if (block * ratio + i < max_block) valid.push_back(block * ratio + i);
    }
    std::sort(valid.begin(), valid.end());
    valid.erase(std::unique(valid.begin(), valid.end()), valid.end());
    const int64_t base = ks / sbk;
    int32_t* ids = out.ids.data() + r * out.num_sparse;
    for (size_t j = 0; j < valid.size(); ++j) ids[j] = int32_t(valid[j] + base);
    // DeepGEMM's padding convention: repeat the last valid block.
    const int32_t pad = valid.empty() ? int32_t(base) : ids[valid.size() - 1];
    std::fill(ids + valid.size(), ids + out.num_sparse, pad);
    if (valid.empty()) {
      out.end[size_t(r)] = 0;
    } else {
      // Ids are sorted, so only the last valid block can reach past ke.
      const int64_t last_start = valid.back() * sbk + ks;
      const int64_t fill = std::clamp<int64_t>(ke - last_start, 1, sbk);
      out.end[size_t(r)] = int32_t(int64_t(valid.size() - 1) * sbk + fill);
    }
  }
  return out;
}

SparseBlocks expand_candidate_blocks(const DecodeProblem& problem, const CandidateBlocks& candidates) {
  return expand_candidate_blocks(candidates, topk_row_bounds(problem));
}

int64_t sparse_column_position(const SparseBlocks& sparse, std::span<const int64_t> row_ks, int64_t row,
                               int64_t col) {
  const int64_t sbk = sparse.sparse_block_kv;
  return (int64_t(sparse.row(row)[col / sbk]) - row_ks[size_t(row)] / sbk) * sbk + col % sbk;
}

Logits sparse_logits(const DecodeProblem& problem, const Profile& profile, const SparseBlocks& sparse) {
  if (problem.element != ElementFormat::mxfp4)
    throw InvalidInput("kv_cache", std::string("the SM100 sparse logits read an MXFP4 cache, not ") +
                                       std::string(to_string(problem.element)));
  if (profile.logits != Precision::bf16)
    throw InvalidInput("profile", profile.name + " writes fp32 logits; the SM100 sparse logits are bf16");
  check_sparse_rows(sparse, problem.rows(), "the problem");
  const std::vector<int64_t> zero_ks(size_t(problem.rows()), 0);
  std::vector<std::vector<int64_t>> positions(size_t(problem.rows()));
  for (int64_t r = 0; r < problem.rows(); ++r)
    for (int64_t col = 0; col < sparse.end[size_t(r)]; ++col)
      positions[size_t(r)].push_back(sparse_column_position(sparse, zero_ks, r, col));
  const auto values = decode_logits_at(problem, profile, positions);
  Logits out{problem.rows(), sparse.width(), std::vector<float>(size_t(problem.rows() * sparse.width()), -kInf)};
  for (int64_t r = 0; r < problem.rows(); ++r)
    std::copy(values[size_t(r)].begin(), values[size_t(r)].end(), out.row(r));
  return out;
}

TopkIndices sparse_topk(const Logits& sparse_logits, const SparseBlocks& sparse, int k) {
  if (k < 1 || k > kDeepSelectMaxK)
    throw InvalidInput("topk", "DeepSelect takes k in [1, " + std::to_string(kDeepSelectMaxK) + "], got " +
                                   std::to_string(k));
  check_sparse_rows(sparse, sparse_logits.rows, "the sparse logits");
  if (sparse_logits.width < sparse.width())
    throw InvalidInput("sparse_logits", "width " + std::to_string(sparse_logits.width) + " below the " +
                                            std::to_string(sparse.width()) + " sparse columns");
  TopkIndices out{sparse_logits.rows, k, std::vector<int32_t>(size_t(sparse_logits.rows) * size_t(k))};
  for (int64_t r = 0; r < sparse_logits.rows; ++r) topk_row(sparse_logits.row(r), sparse.end[size_t(r)], k, out.row(r));
  return out;
}

TopkIndices remap_sparse_topk(const TopkIndices& columns, const SparseBlocks& sparse,
                              std::span<const int64_t> row_ks) {
  check_sparse_rows(sparse, columns.rows, "the top-k");
  if (row_ks.size() != size_t(columns.rows))
    throw InvalidInput("row_ks", std::to_string(row_ks.size()) + " starts for " + std::to_string(columns.rows) + " rows");
  TopkIndices out = columns;
  for (int64_t r = 0; r < columns.rows; ++r)
    for (int32_t i = 0; i < columns.k; ++i) {
      const int32_t col = columns.row(r)[i];
      if (col < 0) continue;
      if (col >= sparse.width())
        throw InvalidInput("topk_indices", "row " + std::to_string(r) + " holds column " + std::to_string(col) +
                                               " beyond the " + std::to_string(sparse.width()) + " sparse columns");
      out.row(r)[i] = int32_t(sparse_column_position(sparse, row_ks, r, col));
    }
  return out;
}

TopkIndices sparse_candidate_topk(const DecodeProblem& problem, const Profile& profile,
                                  const CandidateBlocks& candidates, int k) {
  const SparseBlocks sparse = expand_candidate_blocks(problem, candidates);
  const Logits logits = sparse_logits(problem, profile, sparse);
  const std::vector<int64_t> zero_ks(size_t(problem.rows()), 0);
  return remap_sparse_topk(sparse_topk(logits, sparse, k), sparse, zero_ks);
}

}  // namespace dsa
