// Host side of kernels/candidate_logits_top_k.hip.
#include <fmt/format.h>

#include <algorithm>

#include "dsa/optimized/hip/launch.hpp"
#include "hip_runtime.hpp"

namespace dsa::gfx942 {
namespace {

constexpr int kThreads = 256;
constexpr int32_t kTilesPerBlock = 32;  // 512 compact columns per block
constexpr int64_t kMaxGridY = 65535;

}  // namespace

LaunchResult candidate_logits_top_k(const DecodeStep& step, const int32_t* candidate_blocks, int32_t slots,
                                    int32_t candidate_block_size, float* compact, int32_t* topk_indices,
                                    int64_t topk_stride, int32_t topk_tokens, bool takes_aiter_path,
                                    bool requires_padding, uint32_t* row_done, const SelectWorkspace& workspace,
                                    hipStream_t stream) {
  std::string why = check_candidate_logits_top_k(step, candidate_blocks, slots, candidate_block_size, compact,
                                                 topk_indices, topk_stride, topk_tokens, takes_aiter_path,
                                                 requires_padding, row_done, workspace);
  if (!why.empty()) return {false, why};
  const int64_t rows = int64_t(step.rows.batch) * step.rows.next_n;
  const WorkspaceSize need = select_workspace_size(rows, int64_t(slots) * candidate_block_size, topk_tokens, true);
  if (!need.why.empty()) return {false, need.why};
  if (why = check_workspace(workspace, need); !why.empty()) return {false, why};
  CandidateLogitsTopkParams p;
  p.rows = step.rows;
  p.candidate_blocks = candidate_blocks;
  p.slots = slots;
  p.candidate_block_size = candidate_block_size;
  p.compact = compact;
  p.topk = topk_indices;
  p.topk_stride = topk_stride;
  p.k = topk_tokens;
  p.row_done = row_done;
  common::select::make_tree_plan(int64_t(slots) * candidate_block_size, topk_tokens, kFusedSelectCapacity, p.plan);
  p.slots_workspace = workspace.slots;
  p.counters = workspace.counters;
  const int64_t tiles = (int64_t(slots) * candidate_block_size + 15) / 16;
  p.tiles_per_block = int32_t(std::max<int64_t>(kTilesPerBlock, (tiles + kMaxGridY - 1) / kMaxGridY));
  const auto grid_y = uint32_t((tiles + p.tiles_per_block - 1) / p.tiles_per_block);

  std::string no_device;
  const detail::HipRuntime* rt = detail::runtime(&no_device);
  if (!rt) return {false, no_device};
  // The counters the last block of each row waits on; the kernel leaves them zero again.
  if (const hipError_t e = rt->memset_async(row_done, 0, size_t(rows) * sizeof(uint32_t), stream); e != hipSuccess)
    return {false, fmt::format("row_done: {}", rt->get_error_string(e))};
  const char* symbol =
      step.heads == 64 ? "dsa_gfx942_candidate_logits_top_k_h64" : "dsa_gfx942_candidate_logits_top_k_h32";
  why = detail::launch("candidate_logits_top_k", symbol, &p, sizeof(p), uint32_t(rows), grid_y, kThreads, stream);
  return {why.empty(), why};
}

}  // namespace dsa::gfx942
