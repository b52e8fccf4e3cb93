// Helpers of the property checks (properties_*.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/fuzz/properties.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/rows.hpp"

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

// Output buffers pre-filled with the oracle's poison (oracle/poison.hpp).
TopkIndices poisoned_topk(int64_t rows, int32_t k);
CandidateBlocks poisoned_blocks(int64_t rows, int32_t slots, int32_t block_size);
Logits poisoned_logits(int64_t rows, int64_t width);


// Two selections of the same rows compared by the values they chose (a
// multiset per row, so ties may go either way), after checking that each
// holds distinct indices inside its row. above_neg_inf_only: compare only
// the chosen values above -inf and ignore the -1 counts (SPEC 7's
// mask-then-top-k versus candidate top-k). Empty when they agree.
std::string compare_selections(const TopkIndices& a, const std::string& a_name, const TopkIndices& b,
                               const std::string& b_name, const Logits& values, const RowBounds& windows,
                               bool above_neg_inf_only = false);

// Compact candidate logits compared with `expected` by the logits rule where
// they are defined (oracle/candidate_views.hpp). Empty when equal.
std::string compare_compact(const Logits& actual, const Logits& expected, const CandidateBlocks& candidates,
                            const std::vector<int64_t>& lens, const std::string& what);

}  // namespace dsa::fuzz::detail
