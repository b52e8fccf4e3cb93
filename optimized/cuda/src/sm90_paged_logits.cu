// Host launchers of the SM90 decode kernels: dense paged logits (with the -inf fill of `clean`) and
// compact candidate logits. Both run kernels/sm90_logits_kernel.cuh.
#include <cmath>

#include "sm90_logits_launch.cuh"
#include "tensor_map.hpp"

namespace dsa::cuda {
namespace launch {

void check_step(const DeviceDecodeStep& s) {
  require_shape(s.heads, s.head_dim);
  if (s.block_size != 64) refuse("takes pages of 64 entries, got " + std::to_string(s.block_size));
  if (s.next_n < 1 || s.next_n * s.heads > 256)
    refuse("takes next_n * H <= 256 (one copy of a request's Q), got next_n " + std::to_string(s.next_n));
  if (s.batch < 1) refuse("needs at least one request");
  if (s.compress_ratio < 1) refuse("compress_ratio must be at least 1");
  require_aligned(s.q, "q");
  require_aligned(s.weights, "weights");
  require_aligned(s.cache, "the K cache");
}

void check_candidates(int32_t slots, int32_t candidate_block_size) {
  if (candidate_block_size != 8 && candidate_block_size != 16 && candidate_block_size != 32 &&
      candidate_block_size != 64)
    refuse("takes candidate blocks of 8, 16, 32 or 64 entries, got " + std::to_string(candidate_block_size));
  if (slots < 1) refuse("needs at least one candidate slot");
}

LogitsParams decode_params(const DeviceDecodeStep& s, int32_t group_rows, int32_t block) {
  LogitsParams p{};
  const int64_t rows = int64_t(s.batch) * s.next_n;
  const auto swizzle = s.head_dim == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
  const uint64_t page_bytes = uint64_t(s.block_size) * uint64_t(s.head_dim + 4);
  p.q_map = encode_tensor_map("q", CU_TENSOR_MAP_DATA_TYPE_UINT8, s.q, {uint64_t(s.head_dim), uint64_t(rows * s.heads)},
                              {uint64_t(s.head_dim)}, {uint32_t(s.head_dim), uint32_t(group_rows * s.heads)}, swizzle);
  p.w_map = encode_tensor_map("weights", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, s.weights, {uint64_t(s.heads), uint64_t(rows)},
                              {uint64_t(s.heads) * 4}, {uint32_t(s.heads), uint32_t(group_rows)},
                              CU_TENSOR_MAP_SWIZZLE_NONE);
  if (s.num_pages > 0)
    p.k_map = encode_tensor_map("K cache", CU_TENSOR_MAP_DATA_TYPE_UINT8, s.cache,
                                {uint64_t(s.head_dim), uint64_t(s.block_size), uint64_t(s.num_pages)},
                                {uint64_t(s.head_dim), page_bytes}, {uint32_t(s.head_dim), uint32_t(block), 1u}, swizzle);
  p.group_rows = group_rows;
  p.block = block;
  p.seq_lens = s.seq_lens;
  p.decode_lens = s.decode_lens;
  p.batch = s.batch;
  p.next_n = s.next_n;
  p.compress_ratio = s.compress_ratio;
  p.seq_lens_2d = s.seq_lens_2d ? 1 : 0;
  p.vllm_padded = s.vllm_padded_lengths ? 1 : 0;
  p.block_table = s.block_table;
  p.max_pages = s.max_pages;
  p.cache = s.cache;
  p.page_bytes = int64_t(page_bytes);
  return p;
}

LogitsParams compact_params(const DeviceDecodeStep& step, const int32_t* candidates, int32_t slots,
                            int32_t candidate_block_size, const int32_t* schedule, float* out) {
  LogitsParams p = decode_params(step, 1, candidate_block_size);
  p.num_segments = step.batch * step.next_n;
  p.unit_prefix = schedule;
  p.candidates = candidates;
  p.slots = slots;
  p.out = out;
  p.out_stride = int64_t(slots) * candidate_block_size;
  return p;
}

}  // namespace launch

namespace {

using kernels::LogitsMode;
using kernels::LogitsParams;
using launch::check_candidates;
using launch::check_step;
using launch::decode_params;
using launch::refuse;

// -inf at [L_r, W) of every row (DeepGEMM's clean_logits): one block per row.
__global__ void __launch_bounds__(256) fill_past_lengths(LogitsParams p, int64_t width) {
  const int32_t row = int32_t(blockIdx.x);
  const int32_t len = kernels::visible_len(p, row / p.next_n, row % p.next_n);
  float* out = p.out + int64_t(row) * width;
  for (int64_t n = len + threadIdx.x; n < width; n += blockDim.x) out[n] = -INFINITY;
}

// Lengths only: what the schedule and the fill kernels read.
LogitsParams length_params(const DeviceDecodeStep& s) {
  LogitsParams p{};
  p.seq_lens = s.seq_lens;
  p.decode_lens = s.decode_lens;
  p.batch = s.batch;
  p.next_n = s.next_n;
  p.compress_ratio = s.compress_ratio;
  p.seq_lens_2d = s.seq_lens_2d ? 1 : 0;
  p.vllm_padded = s.vllm_padded_lengths ? 1 : 0;
  return p;
}

}  // namespace

std::string_view profile_of(Sm90Variant v) { return v == Sm90Variant::accurate ? "dsa_sm90_accurate" : "dsa_sm90"; }

size_t paged_schedule_ints(const DeviceDecodeStep& step) { return size_t(step.batch) + 1; }
// The units' prefix over the rows, then for the one-launch candidate_logits_top_k each row's count of
// units done (zeroed by sm90_compact_schedule).
size_t compact_schedule_ints(const DeviceDecodeStep& step) { return 2 * size_t(step.batch) * size_t(step.next_n) + 1; }

void sm90_paged_schedule(const DeviceDecodeStep& step, int32_t* schedule, void* stream) {
  launch::require_sm90();
  check_step(step);
  LogitsParams p = length_params(step);
  p.num_segments = step.batch;
  launch::launch_schedule<LogitsMode::paged>(p, schedule, nullptr, static_cast<cudaStream_t>(stream));
}

void sm90_paged_logits(const DeviceDecodeStep& step, Sm90Variant variant, const int32_t* schedule, float* logits,
                       bool clean, void* stream) {
  const DeviceInfo& d = launch::require_sm90();
  check_step(step);
  const auto s = static_cast<cudaStream_t>(stream);
  if (step.num_pages > 0) {
    LogitsParams p = decode_params(step, step.next_n, 64);
    p.num_segments = step.batch;
    p.unit_prefix = schedule;
    p.out = logits;
    p.out_stride = step.logits_width;
    // Refuses a Q too large for a ring (the kernel's own ring is chosen by its launch).
    launch::ring_stages(d, step.heads, step.head_dim, step.next_n, kernels::kMaxMathWarpgroups);
    launch::dispatch<LogitsMode::paged>(p, step.heads, step.head_dim, variant, d, s);
  }
  if (clean && step.logits_width > 0) {
    LogitsParams p = length_params(step);
    p.out = logits;
    fill_past_lengths<<<step.batch * step.next_n, 256, 0, s>>>(p, step.logits_width);
    DSA_CUDA_CHECK(cudaGetLastError());
  }
}

void sm90_compact_schedule(const DeviceDecodeStep& step, int32_t slots, int32_t candidate_block_size,
                           int32_t* schedule, void* stream) {
  launch::require_sm90();
  check_step(step);
  check_candidates(slots, candidate_block_size);
  LogitsParams p = length_params(step);
  p.num_segments = step.batch * step.next_n;
  p.slots = slots;
  p.block = candidate_block_size;
  const auto s = static_cast<cudaStream_t>(stream);
  launch::launch_schedule<LogitsMode::compact>(p, schedule, nullptr, s);
  const size_t rows = size_t(p.num_segments);
  DSA_CUDA_CHECK(cudaMemsetAsync(schedule + rows + 1, 0, (compact_schedule_ints(step) - rows - 1) * 4, s));
}

void sm90_compact_logits(const DeviceDecodeStep& step, Sm90Variant variant, const int32_t* candidates, int32_t slots,
                         int32_t candidate_block_size, const int32_t* schedule, float* out, void* stream) {
  const DeviceInfo& d = launch::require_sm90();
  check_step(step);
  check_candidates(slots, candidate_block_size);
  if (step.num_pages == 0) return;  // no visible entry anywhere
  const LogitsParams p = launch::compact_params(step, candidates, slots, candidate_block_size, schedule, out);
  launch::ring_stages(d, step.heads, step.head_dim, 1, kernels::kMaxMathWarpgroups);  // refuses a Q too large
  launch::dispatch<LogitsMode::compact>(p, step.heads, step.head_dim, variant, d, static_cast<cudaStream_t>(stream));
}

}  // namespace dsa::cuda
