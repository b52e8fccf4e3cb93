// Candidate blocks (SPEC 7): block scores, selection, mask and candidate top-k.
#include "dsa/candidates.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "dsa/error.hpp"
#include "shared_constants.hpp"

namespace dsa {
namespace {

std::string row_name(int64_t r) { return "row " + std::to_string(r); }


void check_block_size(int32_t block_size) {
  if (block_size < 1)
    throw InvalidInput("candidate_block_size", "must be at least 1, got " + std::to_string(block_size));
}

void check_rows(const CandidateBlocks& candidates, int64_t rows) {
  candidates.validate();
  if (candidates.rows != rows)
    throw InvalidInput("candidate_blocks", std::to_string(candidates.rows) + " rows for " + std::to_string(rows) +
                                               " logits rows");
}

int64_t blocks_in(int64_t len, int32_t block_size) { return (len + block_size - 1) / block_size; }

// Row r's candidate positions (relative to its start) below `len`, ascending.
std::vector<int64_t> candidate_positions(const CandidateBlocks& candidates, int64_t r, int64_t len) {
  std::vector<int64_t> positions;
  const int64_t S = candidates.block_size;
  for (int32_t c = 0; c < candidates.slots; ++c) {
    const int64_t block = candidates.row(r)[c];
    if (block < 0) continue;
    for (int64_t p = block * S; p < std::min((block + 1) * S, len); ++p) positions.push_back(p);
  }
  std::sort(positions.begin(), positions.end());
  return positions;
}

}  // namespace

RowBounds repeated_row_bounds(std::span<const int64_t> request_ends, int32_t row_repeat) {
  if (row_repeat < 1) throw InvalidInput("row_repeat", "must be at least 1, got " + std::to_string(row_repeat));
  RowBounds b;
  b.start.assign(request_ends.size() * size_t(row_repeat), 0);
  b.end.resize(b.start.size());
  for (size_t r = 0; r < b.end.size(); ++r) b.end[r] = request_ends[r / size_t(row_repeat)];
  return b;
}

RowBounds candidate_row_bounds(const DecodeProblem& problem) {
  RowBounds b;
  b.end = candidate_row_ends(problem);
  b.start.assign(b.end.size(), 0);
  return b;
}

RowBounds topk_row_bounds(const DecodeProblem& problem) {
  RowBounds b;
  b.end = visible_lens(problem);
  b.start.assign(b.end.size(), 0);
  return b;
}

RowBounds prefill_row_bounds(const PrefillProblem& problem) {
  if (problem.ks.size() != size_t(problem.rows) || problem.ke.size() != size_t(problem.rows))
    throw InvalidInput("ks", "ks and ke need one entry per row (" + std::to_string(problem.rows) + ")");
  return RowBounds{{problem.ks.begin(), problem.ks.end()}, {problem.ke.begin(), problem.ke.end()}};
}

void CandidateBlocks::validate() const {
  check_block_size(block_size);
  if (rows < 0 || slots < 0)
    throw InvalidInput("candidate_blocks", "negative shape [" + std::to_string(rows) + ", " + std::to_string(slots) + "]");
  if (blocks.size() != size_t(rows) * size_t(slots))
    throw InvalidInput("candidate_blocks", "has " + std::to_string(blocks.size()) + " ids, expected " +
                                               std::to_string(rows) + " x " + std::to_string(slots));
  std::vector<int32_t> sorted;
  for (int64_t r = 0; r < rows; ++r) {
    sorted.assign(row(r), row(r) + slots);
    std::sort(sorted.begin(), sorted.end());
    for (int32_t i = 0; i < slots; ++i) {
      if (sorted[size_t(i)] < -1)
        throw InvalidInput("candidate_blocks", row_name(r) + " holds block id " + std::to_string(sorted[size_t(i)]));
      if (i > 0 && sorted[size_t(i)] >= 0 && sorted[size_t(i)] == sorted[size_t(i) - 1])
        throw InvalidInput("candidate_blocks", row_name(r) + " holds block " + std::to_string(sorted[size_t(i)]) +
                                                   " twice");
    }
  }
}

std::vector<float> candidate_block_scores(const float* row, int64_t start, int64_t end, int32_t block_size,
                                          int64_t num_blocks) {
  check_block_size(block_size);
  if (start < 0 || end < start)
    throw InvalidInput("row_bounds", "[" + std::to_string(start) + ", " + std::to_string(end) + ") is not a range");
  if (num_blocks < 0) throw InvalidInput("num_blocks", "negative: " + std::to_string(num_blocks));
  std::vector<float> scores(size_t(num_blocks), -kInf);
  const int64_t live = std::min(num_blocks, blocks_in(end - start, block_size));
  for (int64_t c = 0; c < live; ++c) {
    const int64_t lo = start + c * block_size, hi = std::min(lo + block_size, end);
    float m = -kInf;
    for (int64_t n = lo; n < hi; ++n) {
      if (std::isnan(row[n])) {
        m = row[n];
        break;
      }
      if (row[n] > m) m = row[n];
    }
    scores[size_t(c)] = m;
  }
  // The newest entry's block is always kept: the query attends to its own neighbourhood.
  const int64_t newest = (end - start - 1) / block_size;
  if (end > start && newest < num_blocks) scores[size_t(newest)] = kInf;
  return scores;
}

CandidateBlocks select_candidate_blocks(const Logits& logits, const RowBounds& bounds, int32_t block_size,
                                        int32_t slots) {
  check_block_size(block_size);
  if (slots < 1) throw InvalidInput("candidate_topk_blocks", "must be at least 1, got " + std::to_string(slots));
  check_row_bounds(logits, bounds);
  CandidateBlocks out{logits.rows, slots, block_size,
                      std::vector<int32_t>(size_t(logits.rows) * size_t(slots), -1)};
#pragma omp parallel for schedule(dynamic) if (logits.rows * logits.width >= kParallelLogits)
  for (int64_t r = 0; r < logits.rows; ++r) {
    const int64_t start = bounds.start[size_t(r)], end = bounds.end[size_t(r)];
    const auto scores = candidate_block_scores(logits.row(r), start, end, block_size, blocks_in(end - start, block_size));
    // Larger key = higher score, then lower block index (as topk_row).
    std::vector<uint64_t> keys;
    keys.reserve(scores.size());
    for (size_t c = 0; c < scores.size(); ++c)
      if (!(scores[c] == -kInf)) keys.push_back((uint64_t(topk_order_key(scores[c])) << 32) | (0xffffffffu - uint32_t(c)));
    const size_t chosen = std::min(keys.size(), size_t(slots));
    std::partial_sort(keys.begin(), keys.begin() + ptrdiff_t(chosen), keys.end(), std::greater<>());
    for (size_t i = 0; i < chosen; ++i) out.row(r)[i] = int32_t(0xffffffffu - uint32_t(keys[i] & 0xffffffffu));
  }
  return out;
}

CandidateBlocks select_candidate_blocks(const DecodeProblem& problem, const Logits& logits, int32_t block_size,
                                        int32_t slots) {
  return select_candidate_blocks(logits, candidate_row_bounds(problem), block_size, slots);
}

CandidateBlocks select_candidate_blocks(const PrefillProblem& problem, const Logits& logits, int32_t block_size,
                                        int32_t slots) {
  return select_candidate_blocks(logits, prefill_row_bounds(problem), block_size, slots);
}

void apply_candidate_mask(Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                          CandidateMask variant) {
  check_row_bounds(logits, bounds);
  check_rows(candidates, logits.rows);
  const int64_t S = candidates.block_size;
#pragma omp parallel for schedule(dynamic) if (logits.rows * logits.width >= kParallelLogits)
  for (int64_t r = 0; r < logits.rows; ++r) {
    const int64_t start = bounds.start[size_t(r)], end = bounds.end[size_t(r)];
    std::vector<char> keep(size_t(blocks_in(end - start, int32_t(S))), 0);
    for (int32_t c = 0; c < candidates.slots; ++c) {
      const int64_t block = candidates.row(r)[c];
      if (block >= 0 && block < int64_t(keep.size())) keep[size_t(block)] = 1;
    }
    float* row = logits.row(r);
    for (int64_t n = start; n < end; ++n)
      if (!keep[size_t((n - start) / S)]) row[n] = -kInf;
    if (variant == CandidateMask::full) {
      std::fill(row, row + start, -kInf);
      std::fill(row + end, row + logits.width, -kInf);
    }
  }
}

TopkIndices candidate_topk(const Logits& logits, const RowBounds& topk_bounds, const CandidateBlocks& candidates,
                           int k) {
  if (k < 1) throw InvalidInput("topk", "k must be at least 1, got " + std::to_string(k));
  check_row_bounds(logits, topk_bounds);
  check_rows(candidates, logits.rows);
  TopkIndices out{logits.rows, k, std::vector<int32_t>(size_t(logits.rows) * size_t(k))};
#pragma omp parallel for schedule(dynamic) if (logits.rows * logits.width >= kParallelLogits)
  for (int64_t r = 0; r < logits.rows; ++r) {
    const int64_t start = topk_bounds.start[size_t(r)];
    const auto positions = candidate_positions(candidates, r, topk_bounds.end[size_t(r)] - start);
    std::vector<float> values(positions.size());
    for (size_t i = 0; i < positions.size(); ++i) values[i] = logits.row(r)[start + positions[i]];
    int32_t* dst = out.row(r);
    topk_row(values.data(), int64_t(values.size()), k, dst);
    for (int i = 0; i < k; ++i)
      if (dst[i] >= 0) dst[i] = int32_t(positions[size_t(dst[i])]);
  }
  return out;
}

TopkIndices candidate_topk(const DecodeProblem& problem, const Logits& logits, const CandidateBlocks& candidates,
                           int k) {
  return candidate_topk(logits, topk_row_bounds(problem), candidates, k);
}

TopkIndices candidate_topk(const PrefillProblem& problem, const Logits& logits, const CandidateBlocks& candidates,
                           int k) {
  return candidate_topk(logits, prefill_row_bounds(problem), candidates, k);
}

void check_row_bounds(const Logits& logits, const RowBounds& bounds) {
  if (bounds.start.size() != bounds.end.size())
    throw InvalidInput("row_bounds", std::to_string(bounds.start.size()) + " starts but " +
                                         std::to_string(bounds.end.size()) + " ends");
  if (bounds.rows() != logits.rows)
    throw InvalidInput("row_bounds", std::to_string(bounds.rows()) + " rows for " + std::to_string(logits.rows) +
                                         " logits rows");
  for (int64_t r = 0; r < bounds.rows(); ++r) {
    const int64_t s = bounds.start[size_t(r)], e = bounds.end[size_t(r)];
    if (s < 0 || e < s || e > logits.width)
      throw InvalidInput("row_bounds", row_name(r) + " has [" + std::to_string(s) + ", " + std::to_string(e) +
                                           ") outside the logits width " + std::to_string(logits.width));
  }
}

}  // namespace dsa
