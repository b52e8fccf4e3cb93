// The host side of the gfx942 launches: what a vLLM integration would call in
// place of the design's topk.py (seed sparse_indexer_gfx942). Each launch
// returns false for a call it cannot take (the design's "return False": vLLM's
// op then runs at that place), with the reason in `why`; it throws
// InvalidInput naming the argument for a call that is malformed (a null or
// misaligned pointer, a negative size, a stride below the width). Runtime
// failures after the checks (no device, a HIP error) come back as false with
// the HIP error text, never as a wrong answer.
//
// The layer compiles with the HIP runtime headers only: the runtime library is
// opened at run time (hip_runtime.cpp), so every binary of the project links
// it and the checks run on machines without a GPU.
#pragma once

#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <string>

#include "dsa/kcache.hpp"
#include "dsa/optimized/hip/kernel_params.hpp"

namespace dsa::gfx942 {

// A decode step's tensors on the device. rows holds the pointers and sizes the
// kernels read; the rest describes what the pointers point to.
struct DecodeStep {
  DecodeRows rows;
  int32_t heads = 0;
  int32_t head_dim = 0;
  ElementFormat element = ElementFormat::e4m3fnuz;
  CacheLayout layout = CacheLayout::preshuffle;
};

struct LaunchResult {
  bool launched = false;
  std::string why;  // empty when launched
  explicit operator bool() const { return launched; }
};

// Dense logits [B * next_n][logits_stride] (columns [0, width)) in the
// arithmetic of AITER's Gluon kernel: the dense call the compact launch is
// compared against. Takes e4m3fnuz, the preshuffle cache, D = 128, H in {32, 64}.
LaunchResult paged_logits(const DecodeStep& step, float* logits, int64_t logits_stride, int64_t width,
                          hipStream_t stream);

// The workspace of the selection (the shared tree's node slots and arrival
// counters, optimized/common/select/tree_plan.hpp): zero when made, left zero
// by every launch, so one workspace serves launches one after another on one
// stream. select_workspace_size says what a launch needs.
struct SelectWorkspace {
  uint64_t* slots = nullptr;
  int64_t slot_pairs = 0;
  uint32_t* counters = nullptr;
  int64_t counter_count = 0;
};

struct WorkspaceSize {
  int64_t slot_pairs = 0;
  int64_t counters = 0;
  std::string why;  // not empty: the launch cannot take rows of this width and k
};

// Rows of at most `entries` entries (decode_top_k: the logits width;
// select_candidates: the width's blocks; candidate_top_k and the fused launch:
// slots * S) and `k` outputs; `fused` for candidate_logits_top_k, whose
// selection runs in a 4-wave block.
WorkspaceSize select_workspace_size(int64_t rows, int64_t entries, int32_t k, bool fused = false);

// The design's topk.candidate_logits_top_k: compact candidate logits
// [rows][slots * S] and their top k (k = 512) remapped to positions, in one
// launch. `takes_aiter_path` is the design's condition that the dense logits
// would come from AITER's Gluon kernel (paged cache of more than one token per
// page, not a C4A block-flat layer, AITER enabled); padded steps are refused.
// `row_done` is a device workspace of one uint32 per row (zeroed here).
LaunchResult candidate_logits_top_k(const DecodeStep& step, const int32_t* candidate_blocks, int32_t slots,
                                    int32_t candidate_block_size, float* compact, int32_t* topk_indices,
                                    int64_t topk_stride, int32_t topk_tokens, bool takes_aiter_path,
                                    bool requires_padding, uint32_t* row_done, const SelectWorkspace& workspace,
                                    hipStream_t stream);

// The selection launches over dense decode logits [rows][logits_stride]
// (lengths past the width are clamped to it), on the shared TreeTopK: a row is
// split over blocks of 8192 entries and merged by the last block to finish, so
// few long rows still fill the GPU; ties go to the lower position (the same
// set on every run and every GPU); every output entry is written (-1 tail).
// decode_top_k: the top k (k = 512) of each row's [0, L_r), -1 tail.
LaunchResult decode_top_k(const LogitsRows& in, int32_t* topk_indices, int64_t topk_stride, int32_t topk_tokens,
                          const SelectWorkspace& workspace, hipStream_t stream);
// select_candidates (the source layer): the `slots` best candidate blocks of S
// entries of each row's [0, E_r), -1 in the empty slots.
LaunchResult select_candidates(const LogitsRows& in, int32_t candidate_block_size, int32_t* candidate_blocks,
                               int32_t slots, const SelectWorkspace& workspace, hipStream_t stream);
// candidate_top_k (the consumer layers): the top k (k = 512) among the
// candidate blocks' columns of each row's [0, L_r), remapped to positions.
LaunchResult candidate_top_k(const LogitsRows& in, const int32_t* candidate_blocks, int32_t slots,
                             int32_t candidate_block_size, int32_t* topk_indices, int64_t topk_stride,
                             int32_t topk_tokens, const SelectWorkspace& workspace, hipStream_t stream);

// The design's topk.skip_decode_fill: the reference's rule (dsa::skip_decode_fill),
// with the design's own has_prefill_rows = false.
bool skip_decode_fill(int64_t num_decode_tokens, int64_t num_tokens, bool requires_padding);

// The checks alone (no device needed): empty when the launch takes the call.
// Throw InvalidInput for malformed calls, as the launches do.
std::string check_decode_step(const DecodeStep& step);
std::string check_paged_logits(const DecodeStep& step, const float* logits, int64_t logits_stride, int64_t width);
std::string check_candidate_logits_top_k(const DecodeStep& step, const int32_t* candidate_blocks, int32_t slots,
                                         int32_t candidate_block_size, const float* compact,
                                         const int32_t* topk_indices, int64_t topk_stride, int32_t topk_tokens,
                                         bool takes_aiter_path, bool requires_padding, const uint32_t* row_done,
                                         const SelectWorkspace& workspace);

std::string check_logits_rows(const LogitsRows& in);
std::string check_top_k(const LogitsRows& in, const int32_t* topk_indices, int64_t topk_stride, int32_t topk_tokens);
// The workspace against what a launch over `rows` rows needs (`need`).
std::string check_workspace(const SelectWorkspace& workspace, const WorkspaceSize& need);
std::string check_candidates(const LogitsRows& in, const int32_t* candidate_blocks, int32_t slots,
                             int32_t candidate_block_size);

// Whether a gfx942 device and the HIP runtime are present (false here: no MI300).
bool device_available();
// The code objects this build holds (empty when the gfx942 kernels were not built).
bool code_objects_built();

}  // namespace dsa::gfx942
