// The SM90 (H100/H200, sm_90a) FP8 MQA logits kernels on device pointers: paged decode, compact
// candidate logits and prefill (docs/cuda.md). Each call refuses what its kernel cannot take by
// throwing dsa::Unsupported before any work (shape, alignment, format, no GPU, wrong arch) and
// turns CUDA errors into dsa::cuda::CudaError. Every pointer is a device pointer, 16-byte aligned.
//
// A launch is two steps, as DeepGEMM's: a schedule (one small kernel that splits the work over the
// SMs from the lengths, into a workspace of schedule_ints(...) int32) and the logits kernel that
// reads it. The schedule depends only on the lengths (and candidates' shape), so a caller may
// reuse it across layers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "dsa/common/row_span.hpp"

namespace dsa::cuda {

enum class Sm90Variant : uint8_t {
  standard,  // D / 32 chained wgmma k32 from zero, no promotion: profile dsa_sm90
  accurate,  // each k32 wgmma from zero, RN-added into an fp32 accumulator: profile dsa_sm90_accurate
};
std::string_view profile_of(Sm90Variant v);

// A decode step (SPEC 4, 5) on the device: e4m3fn q and block-flat cache with fp32 scales per entry.
struct DeviceDecodeStep {
  int32_t batch = 0, next_n = 1, heads = 0, head_dim = 0;
  const uint8_t* q = nullptr;        // [B, next_n, H, D]
  const float* weights = nullptr;    // [B * next_n, H]
  const int32_t* seq_lens = nullptr;  // [B] or [B, next_n]
  bool seq_lens_2d = false;
  int32_t compress_ratio = 1;
  const int32_t* decode_lens = nullptr;  // [B] or null
  bool vllm_padded_lengths = false;
  const int32_t* block_table = nullptr;  // [B, max_pages]
  int32_t max_pages = 0;
  const uint8_t* cache = nullptr;  // [num_pages] pages of block_size * (D + 4) bytes
  int32_t num_pages = 0, block_size = 0;
  int64_t logits_width = 0;  // W, the row stride of the dense logits
};

struct DevicePrefill {
  int32_t rows = 0, heads = 0, head_dim = 0;
  const uint8_t* q = nullptr;         // [S, H, D]
  const float* weights = nullptr;     // [S, H]
  int64_t num_k = 0;
  const uint8_t* k = nullptr;         // [N, D]
  const float* k_scales = nullptr;    // [N]
  const int32_t* ks = nullptr;        // [S]
  const int32_t* ke = nullptr;        // [S]
};

// int32 entries of the schedule workspace of each kind of launch.
size_t paged_schedule_ints(const DeviceDecodeStep& step);
size_t compact_schedule_ints(const DeviceDecodeStep& step);
size_t prefill_schedule_ints(const DevicePrefill& prefill);

// Dense decode logits: logits[r][n] for n < L_r; with `clean`, -inf at [L_r, W) as well (a second
// kernel), otherwise those entries are left as they are.
void sm90_paged_schedule(const DeviceDecodeStep& step, int32_t* schedule, void* stream);
void sm90_paged_logits(const DeviceDecodeStep& step, Sm90Variant variant, const int32_t* schedule, float* logits,
                       bool clean, void* stream);

// Compact candidate logits: out[r][c * S + t] = the dense logit of entry candidates[r][c] * S + t,
// for candidate slots c >= 0 and entries below L_r (S = candidate_block_size in {8, 16, 32, 64});
// the other entries are left as they are.
void sm90_compact_schedule(const DeviceDecodeStep& step, int32_t slots, int32_t candidate_block_size,
                           int32_t* schedule, void* stream);
void sm90_compact_logits(const DeviceDecodeStep& step, Sm90Variant variant, const int32_t* candidates, int32_t slots,
                         int32_t candidate_block_size, const int32_t* schedule, float* out, void* stream);

// The fused candidate launch (the design's candidate_logits_top_k): the compact logits above into
// `compact` ([rows][slots * S]) and the top k of each compact row among the live slots' entries below
// the row's end in `topk_span` (decode rows: [0, L_r); its rows begin at position 0, as a length is
// end - begin; an end past L_r reaches entries the compact logits do not write, which the one launch
// leaves out), remapped to positions, into out [rows][k] (-1 after the chosen; every entry written).
// Among ties at the cut the lowest compact columns are chosen: the same set on every run.
// One launch where sm90_candidate_logits_top_k_is_one_launch says so (rows of at most 16384 entries,
// the blocks ranking the rows they complete), else the compact kernel and the selection's kernel.
// `schedule` is sm90_compact_schedule's, used by one such launch at a time (the one launch counts
// each row's finished units in it and leaves the counts zero).
bool sm90_candidate_logits_top_k_is_one_launch(const DeviceDecodeStep& step, int32_t slots,
                                               int32_t candidate_block_size);
void sm90_candidate_logits_top_k(const DeviceDecodeStep& step, Sm90Variant variant, const int32_t* candidates,
                                 int32_t slots, int32_t candidate_block_size, int32_t* schedule, float* compact,
                                 const common::RowSpan& topk_span, int32_t k, int32_t* out, void* stream);

// Prefill logits: out[r][n] for ks[r] <= n < ke[r] (row stride num_k); the rest is left as it is.
void sm90_prefill_schedule(const DevicePrefill& prefill, int32_t* schedule, void* stream);
void sm90_prefill_logits(const DevicePrefill& prefill, Sm90Variant variant, const int32_t* schedule, float* out,
                         void* stream);

// For tests: the logits kernels run on at most `blocks` persistent blocks (0, the default: one per
// SM), so that a problem small enough for the reference still makes each block's ring of stages wrap
// many times and its math warpgroups take units in pairs, as the large shapes do.
void set_sm90_grid_limit(int32_t blocks);
// For tests: sm90_candidate_logits_top_k runs the two kernels even where the one launch takes the step,
// so that the two paths' arrays can be compared on the same step.
void set_sm90_candidate_two_kernels(bool on);
bool sm90_candidate_two_kernels_forced();
// For tests: the adapters (cuda_ops.hpp: cuda_sm90, cuda_sm90_accurate) stage a decode step's pages
// from page `first_page` of a larger device cache on, its block table's ids moved with them (the
// pages below are allocated, never written or read; 0, the default: the step's own cache), so that
// the kernels address pages past 2 GiB of their cache, as a serving engine's cache of tens of GB
// makes them do. A page's byte offset computed in 32 bits is a real bug there: vLLM #52109 (AITER's
// paged logits on gfx942 scored every page past 2^31 bytes exactly 0.0).
void set_sm90_page_base(int32_t first_page);
int32_t sm90_page_base();

}  // namespace dsa::cuda
