// CPU twin of vLLM's `top_k_per_row` (csrc/libtorch_stable/sampler.cu): a
// radix select over histograms of 2048 bins.
//
//   step 0  the top 11 bits of the value's fp16 key (a coarse pass);
//   step 1  bits 31..21 of the fp32 key, over the whole row again;
//   step 2  bits 20..10, among the entries whose step-1 bin was the cut;
//   step 3  bits 9..0, among those whose steps 1 and 2 bins were the cut.
//
// Each step finds the threshold bin (the bin holding the k-th largest entry),
// emits the entries above it, and stops when the threshold bin holds at most
// `final_capacity` entries (kNumFinalItems): those are sorted in a bounded
// final buffer and the best of them fill the row. After step 3 the threshold
// bin holds equal keys only; they are taken in arrival order. Step 0 emits
// only when it is also the last step (the fix of the duplicate-index bug).
//
// Ties at the cut go to the first entries in scan order (the GPU takes
// whichever arrive first at its atomic counter). The chosen entries are
// written unsorted; every slot of the row is written, a row of L <= k columns
// gives 0..L-1 then -1.
//
// Rows run on emulated SMs (row r on SM r % num_sms, each SM's rows in order)
// whose scratch output persists from row to row like shared memory, so the
// result never depends on the number of host threads.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dsa/indexer_ops.hpp"

namespace dsa::optimized {

struct RadixTopkConfig {
  int32_t final_capacity = 2048;  // kNumFinalItems
  int32_t num_sms = 16;
  // vLLM's paths by row length (top_k_per_row_decode): the final buffer is
  // sorted by a block radix sort from 12288 columns (insertion sort below),
  // and a row from 200000 columns is split over 10 blocks whose top-k lists
  // are merged. The correct twin's results do not depend on them; the
  // defects below live on those paths.
  int64_t radix_sort_min_len = 12288;
  int64_t split_min_len = 200000;
  int32_t split_blocks = 10;
};

// Bugs that shipped in kernels of this design (SPEC 10), re-created for the
// mutant catalog (fuzz/mutants). Every flag is off in cpu_radix_topk.
struct RadixTopkDefects {
  // vLLM before the fix: step 0 emits the entries above its threshold bin even
  // when step 1 restarts over the whole row, so they are emitted twice.
  bool emit_coarse_before_fine = false;
  // vLLM PR #50201: the final pass ranks its buffer by IEEE comparisons; NaNs
  // compare false with everything, so all of them rank 0 and the other slots
  // keep what the SM's scratch held before.
  bool ieee_final_rank = false;
  // AITER #4376: the order in which tied entries reach the cut changes from
  // launch to launch (every second launch they arrive in reverse).
  bool run_dependent_ties = false;
  // Ties at the cut resolved with a duplicate: when tied entries straddle the
  // cut, the last chosen one repeats the one before it.
  bool duplicate_split_tie = false;
  // The -1 tail of rows with L < k is never written.
  bool skip_short_row_tail = false;
  // A row of length 0 (a padded row) is read over the rest of the logits row,
  // so the padded row's garbage becomes indices.
  bool empty_row_reads_full_width = false;
  // vLLM at 030ea52e, radix path (SPEC 10 (a)): the block radix sort of the
  // final buffer pads its unused slots with -FLT_MAX values and uninitialized
  // indices; when the cut falls at -FLT_MAX or -inf, padding sorts among (or
  // above) the real entries and is emitted.
  bool sort_padding_emitted = false;
  // vLLM at 030ea52e, split path (SPEC 10 (b)): a block whose part of the row
  // holds at most k entries pads its list with (-FLT_MAX, -1); the merge ranks
  // that padding above real -inf entries, so a row whose k-th value is -inf
  // gets -1 where an index is due.
  bool merge_padding_above_minus_inf = false;
};

// One SM's worth of the kernel: selects the top k of values[0, len) into
// out[0, k). Keeps its scratch between rows.
class RadixTopkSm {
public:
  RadixTopkSm(RadixTopkConfig config, RadixTopkDefects defects);
  // launch: the launch counter (only run_dependent_ties reads it).
  void select(const float* values, int64_t len, int k, int32_t* out, uint64_t launch = 0);

private:
  void select_row(const float* values, int64_t len, int k, int32_t* out, uint64_t launch);
  void split_and_merge(const float* values, int64_t len, int k, int32_t* out, uint64_t launch);
  void sort_with_padding(const std::vector<int32_t>& items, const float* values, int need);
  void take_best(std::vector<int32_t>& items, const float* values, int need, uint64_t launch);
  void take_in_arrival_order(std::vector<int32_t>& items, int need, uint64_t launch);
  void rank_by_ieee(const std::vector<int32_t>& items, const float* values, int need);

  RadixTopkConfig config_;
  RadixTopkDefects defects_;
  std::vector<uint16_t> bins_;        // step 0 bins of the row
  std::vector<int32_t> candidates_;  // entries of the current threshold bin, in scan order
  std::vector<uint32_t> keys_;       // their fp32 keys
  std::vector<int32_t> output_;  // the SM's scratch output (smemOutput), never cleared
  int found_ = 0;
  int64_t row_len_ = 0;  // of the row being selected (which final sort vLLM takes)
};

std::unique_ptr<IndexerOps> make_cpu_radix_topk();
std::unique_ptr<IndexerOps> make_cpu_radix_topk(const RadixTopkConfig& config, const RadixTopkDefects& defects = {});

}  // namespace dsa::optimized
