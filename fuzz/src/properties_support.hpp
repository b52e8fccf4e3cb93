// Helpers of the property checks (properties_*.cpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/fuzz/properties.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/rows.hpp"
#include "dsa/sparse_sm100.hpp"

namespace dsa::fuzz::detail {

// Runs one call of the implementation; false when it answered Unsupported.
template <class F>
bool supported(F&& call) {
  try {
    call();
    return true;
  } catch (const Unsupported&) {
    return false;
  }
}

inline Outcome passed() { return {}; }
inline Outcome failed(std::string message) { return {Verdict::fail, std::move(message)}; }
inline Outcome unsupported(std::string what) { return {Verdict::unsupported, std::move(what)}; }

// The verdict of several ops on one case: an op answering Unsupported is
// skipped; with none supported the case is unsupported, never a pass.
struct Verdicts {
  bool any_supported = false;
  std::vector<std::string> failures;
  void add(bool supported_op, std::string failure) {
    any_supported |= supported_op;
    if (!failure.empty()) failures.push_back(std::move(failure));
  }
  Outcome outcome(const char* ops) const;
};

// Output buffers pre-filled with the oracle's poison (oracle/poison.hpp).
using oracle::poisoned_blocks;
using oracle::poisoned_logits;
using oracle::poisoned_topk;
// bf16 values in fp32 storage (the sparse logits).
inline Logits poisoned_bf16_logits(int64_t rows, int64_t width) {
  return poisoned_logits(rows, width, oracle::kPoisonBf16AsF32Bits);
}
// Ids and end poisoned, the shape of `shape`.
inline SparseBlocks poisoned_sparse(const SparseBlocks& shape) {
  return oracle::poisoned_sparse(shape.rows, shape.num_sparse, shape.sparse_block_kv);
}

// The SM100 sparse form of a decode step's candidates (the reference's
// expansion over [0, L_r)), when the candidate block size takes one (a
// multiple of 8); and whether the step can have sparse logits (MXFP4 under a
// profile writing bf16 logits).
std::optional<SparseBlocks> reference_sparse(const DecodeProblem& problem, const CandidateBlocks& candidates);
bool takes_sparse_logits(const DecodeProblem& problem, const Profile& profile);

// [rows][k] index rows drawn from `seed` (values in [-1, 1000)): what the padding ops move.
TopkIndices draw_index_rows(int64_t rows, int32_t k, uint64_t seed);


// Two selections of the same rows compared by what they chose
// (oracle::check_same_choice). Empty when they agree.
std::string compare_selections(const TopkIndices& a, const std::string& a_name, const TopkIndices& b,
                               const std::string& b_name, const Logits& values, const RowBounds& windows,
                               bool above_neg_inf_only = false);

// Compact candidate logits compared with `expected` by the logits rule where
// they are defined (oracle/candidate_views.hpp). Empty when equal.
std::string compare_compact(const Logits& actual, const Logits& expected, const CandidateBlocks& candidates,
                            const std::vector<int64_t>& lens, const std::string& what);

}  // namespace dsa::fuzz::detail
