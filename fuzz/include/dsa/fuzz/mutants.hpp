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
// As logits_agree, and -inf from L_r up to the width (SPEC 9 clean mode): for
// kernels that promise clean rows (AITER's gfx942 kernel writes -inf outside
// the row; a consumer then reads past L_r, as the candidate ops do up to E_r).
inline constexpr const char* kLogitsAgreeClean = "logits_agree_clean";
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
inline constexpr const char* kCandidateMaskAgrees = "candidate_mask_agrees";
inline constexpr const char* kCandidateLogitsTopkAgrees = "candidate_logits_top_k_agrees";  // the gfx942 fused launch
inline constexpr const char* kPrefillCompactEqualsDense = "prefill_compact_equals_dense";
inline constexpr const char* kPaddingRoundTrip = "padding_round_trip";
inline constexpr const char* kSkipDecodeFillAgrees = "skip_decode_fill_agrees";
inline constexpr const char* kSparseBlocksAgree = "sparse_blocks_agree";  // SM100 sparse form
inline constexpr const char* kSparseLogitsAgree = "sparse_logits_agree";
inline constexpr const char* kSparseTopkAgrees = "sparse_topk_agrees";
inline constexpr const char* kDeterminism = "determinism";
inline constexpr const char* kEveryEntryWritten = "every_entry_written";
}  // namespace property

struct Mutant {
  std::string name;       // e.g. "topk_per_row_duplicate_on_both_passes"
  std::string bug;        // the real bug it re-creates, with its source (issue / PR / SPEC 10)
  std::string killed_by;  // the property (a property:: name) that kills it, or "comparator_test:<name>"
  std::function<std::unique_ptr<IndexerOps>()> make;
  // Only for a "comparator_test:" mutant, a bug of a check rather than of a
  // kernel (an assert that checks nothing): runs the comparator's self-test on
  // the mutated check and returns true when the test rejects it (killed).
  // Such a mutant's `make` gives the reference: no property run can see it.
  std::function<bool()> comparator_test;
  // Whether its kernel can run on this machine: a CPU twin always; a GPU
  // kernel's mutant only where that kernel's implementation is available
  // (the table's `available`). One that cannot run here is not fuzzed here,
  // and a table of mutants that never ran never reports them killed.
  std::function<bool()> runs_here = [] { return true; };
};

const std::vector<Mutant>& mutant_catalog();

}  // namespace dsa::fuzz
