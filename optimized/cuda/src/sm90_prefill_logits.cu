// Host launcher of the SM90 prefill kernel (kernels/sm90_logits_kernel.cuh): contiguous K, rows
// grouped by kPrefillGroup so that one 64-entry tile of K serves several query rows.
#include "sm90_logits_launch.cuh"
#include "tensor_map.hpp"

namespace dsa::cuda {
namespace {

using kernels::LogitsMode;
using kernels::LogitsParams;
using launch::refuse;

constexpr int32_t kPrefillGroup = 4;  // query rows per segment (4 x 64 heads = 256, one Q copy)

int32_t group_rows(const DevicePrefill& f) { return f.heads == 64 ? kPrefillGroup : 2 * kPrefillGroup; }

void check_prefill(const DevicePrefill& f) {
  launch::require_shape(f.heads, f.head_dim);
  if (f.rows < 1) refuse("needs at least one query row");
  if (f.num_k < 1 || f.num_k > (int64_t(1) << 31) - 64) refuse("takes 1 to 2^31 - 64 K entries");
  launch::require_aligned(f.q, "q");
  launch::require_aligned(f.weights, "weights");
  launch::require_aligned(f.k, "k");
  launch::require_aligned(f.k_scales, "k_scales");
}

LogitsParams lengths(const DevicePrefill& f) {
  LogitsParams p{};
  p.group_rows = group_rows(f);
  p.num_segments = (f.rows + p.group_rows - 1) / p.group_rows;
  p.ks = f.ks;
  p.ke = f.ke;
  p.query_rows = f.rows;
  return p;
}

}  // namespace

size_t prefill_schedule_ints(const DevicePrefill& f) {
  const size_t segments = size_t((f.rows + group_rows(f) - 1) / group_rows(f));
  return 2 * segments + 1;  // the unit prefix, then each segment's first tile
}

void sm90_prefill_schedule(const DevicePrefill& f, int32_t* schedule, void* stream) {
  launch::require_sm90();
  check_prefill(f);
  const LogitsParams p = lengths(f);
  launch::launch_schedule<LogitsMode::prefill>(p, schedule, schedule + p.num_segments + 1,
                                              static_cast<cudaStream_t>(stream));
}

void sm90_prefill_logits(const DevicePrefill& f, Sm90Variant variant, const int32_t* schedule, float* out,
                         void* stream) {
  const DeviceInfo& d = launch::require_sm90();
  check_prefill(f);
  LogitsParams p = lengths(f);
  const auto swizzle = f.head_dim == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
  p.q_map = encode_tensor_map("q", CU_TENSOR_MAP_DATA_TYPE_UINT8, f.q,
                              {uint64_t(f.head_dim), uint64_t(f.rows) * uint64_t(f.heads)}, {uint64_t(f.head_dim)},
                              {uint32_t(f.head_dim), uint32_t(p.group_rows * f.heads)}, swizzle);
  p.w_map = encode_tensor_map("weights", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, f.weights, {uint64_t(f.heads), uint64_t(f.rows)},
                              {uint64_t(f.heads) * 4}, {uint32_t(f.heads), uint32_t(p.group_rows)},
                              CU_TENSOR_MAP_SWIZZLE_NONE);
  p.k_map = encode_tensor_map("k", CU_TENSOR_MAP_DATA_TYPE_UINT8, f.k, {uint64_t(f.head_dim), uint64_t(f.num_k)},
                              {uint64_t(f.head_dim)}, {uint32_t(f.head_dim), 64u}, swizzle);
  // The scales as one row of a 2-D map (a rank-1 map was refused by the H200's driver).
  p.s_map = encode_tensor_map("k_scales", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, f.k_scales, {uint64_t(f.num_k), 1},
                              {(uint64_t(f.num_k) * 4 + 15) / 16 * 16}, {64u, 1u}, CU_TENSOR_MAP_SWIZZLE_NONE);
  p.block = 64;
  p.unit_prefix = schedule;
  p.first_tile = schedule + p.num_segments + 1;
  p.out = out;
  p.out_stride = f.num_k;
  launch::ring_stages(d, f.heads, f.head_dim, p.group_rows, kernels::kMaxMathWarpgroups);  // refuses a Q too large
  launch::dispatch<LogitsMode::prefill>(p, f.heads, f.head_dim, variant, d, static_cast<cudaStream_t>(stream));
}

}  // namespace dsa::cuda
