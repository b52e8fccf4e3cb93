// Host side of kernels/paged_logits.hip.
#include <fmt/format.h>

#include <algorithm>

#include "dsa/optimized/hip/launch.hpp"
#include "hip_runtime.hpp"

namespace dsa::gfx942 {
namespace {

constexpr int kThreads = 256;
constexpr int32_t kTilesPerBlock = 32;  // 512 tokens: 8 tiles of 16 per wave
constexpr int64_t kMaxGridY = 65535;

}  // namespace

LaunchResult paged_logits(const DecodeStep& step, float* logits, int64_t logits_stride, int64_t width,
                          hipStream_t stream) {
  std::string why = check_paged_logits(step, logits, logits_stride, width);
  if (!why.empty()) return {false, why};
  PagedLogitsParams p;
  p.rows = step.rows;
  p.logits = logits;
  p.logits_stride = logits_stride;
  p.width = width;
  // The host does not read seq_lens (device memory): the split covers the
  // width, and blocks past a row's length return at once.
  const int64_t tiles = std::max<int64_t>(1, (width + 15) / 16);
  p.tiles_per_block = int32_t(std::max<int64_t>(kTilesPerBlock, (tiles + kMaxGridY - 1) / kMaxGridY));
  const auto grid_y = uint32_t((tiles + p.tiles_per_block - 1) / p.tiles_per_block);
  const char* symbol = step.heads == 64 ? "dsa_gfx942_paged_logits_h64" : "dsa_gfx942_paged_logits_h32";
  why = detail::launch("paged_logits", symbol, &p, sizeof(p), uint32_t(step.rows.batch * step.rows.next_n), grid_y,
                       kThreads, stream);
  return {why.empty(), why};
}

}  // namespace dsa::gfx942
