// CPU twin of vLLM's `persistent_topk` (csrc/persistent_topk.cu): a fixed set
// of persistent blocks, block b taking rows b, b + G, b + 2G, ... in order,
// each row by one of three paths chosen by its length L:
//
//   L <= k            trivial: 0..L-1, then -1;
//   L < radix_min_len (L <= 32768)
//                     filtered: a 256-bin histogram of the top 8 bits of the
//                     fp16 key finds the threshold bin; entries above it are
//                     emitted, the threshold bin's entries are compacted into a
//                     bounded candidate buffer (16384) and refined by four
//                     8-bit passes over their fp32 keys;
//   longer            radix: four 8-bit passes over the whole row's fp32 keys,
//                     whose histograms live in a ring of three shared by every
//                     row of the block: pass g of the block uses slot g % 3 and
//                     clears slot (g + 1) % 3 for the next pass (the GPU cannot
//                     clear the slot it just read before every CTA of the group
//                     has read it).
//
// A threshold bin too large for the candidate buffer falls back to the radix
// passes over the whole row (the fix of vLLM #51782). The ring counts radix
// passes only (the fix of PR #49139). Ties at the cut go to the first entries
// in scan order. Blocks run in parallel; each block's rows run in order, so
// the result never depends on the number of host threads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "dsa/indexer_ops.hpp"

namespace dsa::optimized {

struct PersistentTopkConfig {
  int32_t num_blocks = 16;             // persistent CTA groups G
  int64_t radix_min_len = 32769;       // rows at least this long take the radix path
  int32_t candidate_capacity = 16384;  // the filtered path's candidate buffer
};

// Bugs of this design (SPEC 10), re-created for the mutant catalog. Off in
// cpu_persistent_topk.
struct PersistentTopkDefects {
  // vLLM #51782: candidates beyond the buffer are silently dropped and the
  // refinement runs on the ones that fit.
  bool drop_candidate_overflow = false;
  // vLLM PR #49139: the ring position follows the block's row counter, which
  // short rows advance too, so a radix row after a short one can start on a
  // slot still holding counts of an earlier row.
  bool ring_follows_row_counter = false;
};

// One persistent block: its histogram ring and its scratch (shared memory).
class PersistentTopkBlock {
public:
  PersistentTopkBlock(PersistentTopkConfig config, PersistentTopkDefects defects);
  // Start of a launch: the ring and the counters are zero.
  void begin_launch();
  // The block's next row: values[0, len) into out[0, k).
  void select(const float* values, int64_t len, int k, int32_t* out);

private:
  void filtered(const float* values, int64_t len, int k);
  void whole_row(const float* values, int64_t len);
  void radix_passes(int k, int64_t first_ring_pass);
  std::array<int32_t, 256>& ring_pass(int64_t pass);

  PersistentTopkConfig config_;
  PersistentTopkDefects defects_;
  std::array<std::array<int32_t, 256>, 3> ring_{};
  int64_t row_iter_ = 0;
  int64_t radix_iter_ = 0;
  std::vector<uint8_t> bins_;
  std::vector<int32_t> candidates_;  // entries still in the running, in scan order
  std::vector<uint32_t> keys_;       // their fp32 keys
  std::vector<int32_t> output_;  // scratch output, never cleared
  int found_ = 0;
};

std::unique_ptr<IndexerOps> make_cpu_persistent_topk();
std::unique_ptr<IndexerOps> make_cpu_persistent_topk(const PersistentTopkConfig& config,
                                                     const PersistentTopkDefects& defects = {});

}  // namespace dsa::optimized
