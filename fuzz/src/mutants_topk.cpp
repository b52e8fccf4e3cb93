// Top-k mutants: the reference whose top-k is a CPU twin of the GPU design
// (optimized/cpu) built with one defect of that design. Where the real bug
// needs a bounded buffer to overflow, the buffer is scaled down so that rows
// of tens of columns reach it (docs/mutants.md gives the real thresholds).
#include "dsa/optimized/persistent_topk.hpp"
#include "dsa/optimized/radix_topk.hpp"
#include "mutant_ops.hpp"

namespace dsa::fuzz::detail {

namespace {

class TwinTopk final : public ForwardingOps {
public:
  TwinTopk(std::string name, std::unique_ptr<IndexerOps> twin) : ForwardingOps(std::move(name)), twin_(std::move(twin)) {}
  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override { twin_->topk(logits, bounds, out); }

private:
  std::unique_ptr<IndexerOps> twin_;
};

Mutant twin_mutant(std::string name, std::string bug, const char* killed_by,
                   std::function<std::unique_ptr<IndexerOps>()> make_twin) {
  return make_mutant(name, std::move(bug), killed_by,
                     [name, make_twin] { return std::make_unique<TwinTopk>(name, make_twin()); });
}

using optimized::make_cpu_persistent_topk;
using optimized::make_cpu_radix_topk;
using optimized::PersistentTopkConfig;
using optimized::PersistentTopkDefects;
using optimized::RadixTopkConfig;
using optimized::RadixTopkDefects;

}  // namespace

std::vector<Mutant> topk_mutants() {
  std::vector<Mutant> m;
  m.push_back(twin_mutant(
      "topk_per_row_duplicate_on_both_passes",
      "vLLM top_k_per_row (csrc/sampler.cu before the fix in csrc/libtorch_stable/sampler.cu, SPEC 10): when the "
      "fp16 pass's threshold bin overflows the final buffer, step 0 has already emitted the entries above it and "
      "step 1 restarts over the whole row and emits them again: duplicate indices, true top-k entries missing. "
      "Final buffer scaled from 2048 to 16 entries.",
      property::kTopkAgrees, [] {
        RadixTopkDefects d;
        d.emit_coarse_before_fine = true;
        return make_cpu_radix_topk(RadixTopkConfig{.final_capacity = 16}, d);
      }));
  m.push_back(twin_mutant(
      "topk_per_row_nan_uninitialized_slots",
      "vLLM top_k_per_row, PR #50201 (SPEC 10): a NaN-dominated row puts the threshold bin on the NaN bin; the "
      "final insertion ranking compares with IEEE < and ==, every NaN ranks 0, and the other slots are copied out "
      "of shared memory nobody wrote (what the SM held before).",
      property::kTopkAgrees, [] {
        RadixTopkDefects d;
        d.ieee_final_rank = true;
        return make_cpu_radix_topk(RadixTopkConfig{}, d);
      }));
  m.push_back(twin_mutant(
      "aiter_topk_nondeterministic_ties",
      "AITER #4376 (SPEC 10): entries tied at the threshold reach the cut in a different order from launch to "
      "launch (atomics), so two runs on the same input choose different sets and tensor-parallel ranks disagree.",
      property::kDeterminism, [] {
        RadixTopkDefects d;
        d.run_dependent_ties = true;
        return make_cpu_radix_topk(RadixTopkConfig{}, d);
      }));
  m.push_back(twin_mutant(
      "topk_tie_resolved_with_duplicate",
      "Classic: ties at the cut resolved with a duplicate; when tied entries straddle the cut the last chosen slot "
      "repeats the tie before it, so one tied index appears twice and the row holds k - 1 distinct entries.",
      property::kTopkAgrees, [] {
        RadixTopkDefects d;
        d.duplicate_split_tie = true;
        return make_cpu_radix_topk(RadixTopkConfig{}, d);
      }));
  m.push_back(twin_mutant(
      "topk_missing_minus_one_tail",
      "Classic: a row with L < k writes its L indices but never the -1 tail, which then holds whatever the buffer "
      "held (a step that skips the -1 pre-fill, skip_decode_fill, exposes it).",
      property::kEveryEntryWritten, [] {
        RadixTopkDefects d;
        d.skip_short_row_tail = true;
        return make_cpu_radix_topk(RadixTopkConfig{}, d);
      }));
  m.push_back(twin_mutant(
      "padded_row_garbage_in_indices",
      "SPEC 10: padded rows whose garbage leaks into the index buffer. A padded row has length 0; the top-k takes a "
      "length of 0 as 'the whole row' and selects among the padded row's garbage (NaN logits of the NaN-padded q), "
      "writing indices where the step expects -1.",
      property::kPaddedEqualsUnpadded, [] {
        RadixTopkDefects d;
        d.empty_row_reads_full_width = true;
        return make_cpu_radix_topk(RadixTopkConfig{}, d);
      }));
  m.push_back(twin_mutant(
      "vllm_topk_sort_padding_emitted",
      "vLLM top_k_per_row_decode at 030ea52e, radix path (12288 <= columns < 200000; SPEC 10 (a), found by this "
      "suite on an H200): the block radix sort of the final buffer pads its unused slots with -FLT_MAX values and "
      "uninitialized indices, so when the cut falls at -FLT_MAX or -inf padding is emitted (indices out of range, "
      "duplicates). Final buffer scaled from 2048 to 16 entries, radix path from 32 columns.",
      property::kTopkAgrees, [] {
        RadixTopkDefects d;
        d.sort_padding_emitted = true;
        return make_cpu_radix_topk(RadixTopkConfig{.final_capacity = 16, .radix_sort_min_len = 32}, d);
      }));
  m.push_back(twin_mutant(
      "vllm_topk_merge_padding_above_minus_inf",
      "vLLM top_k_per_row_decode at 030ea52e, split path (>= 200000 columns; SPEC 10 (b), found by this suite on an "
      "H200): a block whose part of the row holds at most k entries pads its list with (-FLT_MAX, -1), and the merge "
      "ranks that padding above real -inf entries: a row whose k-th value is -inf gets -1 where an index is due. "
      "Split path scaled from 200000 to 64 columns (10 parts).",
      property::kTopkAgrees, [] {
        RadixTopkDefects d;
        d.merge_padding_above_minus_inf = true;
        return make_cpu_radix_topk(RadixTopkConfig{.split_min_len = 64}, d);
      }));
  m.push_back(twin_mutant(
      "persistent_topk_candidate_overflow",
      "vLLM persistent_topk, issue #51782 / PR #52149 (SPEC 10): the filtered path compacts the threshold coarse "
      "bin into a fixed candidate buffer and silently drops what does not fit, then refines the rest: k distinct "
      "indices, but the wrong ones. Real buffer 16384 (drops from kv_len 16385 when one bin holds the row); "
      "scaled to 32 here.",
      property::kTopkAgrees, [] {
        PersistentTopkDefects d;
        d.drop_candidate_overflow = true;
        return make_cpu_persistent_topk(PersistentTopkConfig{.candidate_capacity = 32}, d);
      }));
  m.push_back(twin_mutant(
      "persistent_topk_ring_misaligned",
      "vLLM persistent_topk, PR #49139 (SPEC 10): the radix path's three-slot histogram ring advanced with the "
      "block's row counter, which short rows also advance; a radix row after a short one starts on a slot still "
      "holding counts of an earlier row, so its threshold bin is wrong. One persistent block, radix path from 33 "
      "columns (real: 32769).",
      property::kTopkAgrees, [] {
        PersistentTopkDefects d;
        d.ring_follows_row_counter = true;
        return make_cpu_persistent_topk(PersistentTopkConfig{.num_blocks = 1, .radix_min_len = 33}, d);
      }));
  return m;
}

}  // namespace dsa::fuzz::detail
