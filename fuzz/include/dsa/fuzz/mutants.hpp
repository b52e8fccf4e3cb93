// The catalog of real bugs (SPEC 10 and classic ones), each re-created as a
// named mutant: an implementation under test (IndexerOps) built from a CPU
// twin or the reference with that one bug compiled in. Mutants are selectable
// only by the fuzzer and the tests, never by a user-facing implementation name.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dsa/indexer_ops.hpp"

namespace dsa::fuzz {

// Property names shared by the mutant catalog and the fuzzer (fuzz/properties).
namespace property {
inline constexpr const char* kLogitsAgree = "logits_agree";                 // decode logits bit-identical to the reference
inline constexpr const char* kPrefillLogitsAgree = "prefill_logits_agree";
inline constexpr const char* kTopkAgrees = "topk_agrees";                   // oracle top-k rule on the logits it read
inline constexpr const char* kCandidateSelectAgrees = "candidate_select_agrees";
inline constexpr const char* kCandidateTopkAgrees = "candidate_topk_agrees";
inline constexpr const char* kCompactLogitsAgree = "compact_logits_agree";
inline constexpr const char* kPagePermutationInvariance = "page_permutation_invariance";
inline constexpr const char* kCompactEqualsDense = "compact_equals_dense";
inline constexpr const char* kPaddedEqualsUnpadded = "padded_equals_unpadded";
inline constexpr const char* kColumnsPastLengthIgnored = "columns_past_length_ignored";
inline constexpr const char* kMaskThenTopkEqualsCandidateTopk = "mask_then_topk_equals_candidate_topk";
inline constexpr const char* kDeterminism = "determinism";
inline constexpr const char* kEveryEntryWritten = "every_entry_written";
}  // namespace property

struct Mutant {
  std::string name;       // e.g. "topk_per_row_duplicate_on_both_passes"
  std::string bug;        // the real bug it re-creates, with its source (issue / PR / SPEC 10)
  std::string killed_by;  // the property (a property:: name) that kills it, or "comparator_test:<name>"
  std::function<std::unique_ptr<IndexerOps>()> make;
};

const std::vector<Mutant>& mutant_catalog();

}  // namespace dsa::fuzz
