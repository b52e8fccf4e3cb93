// The checks every gfx942 launch makes before it touches the device: malformed
// calls throw InvalidInput naming the argument; calls the kernels do not take
// come back as the reason (the launch then returns false).
#include <fmt/format.h>

#include <cstdint>
#include <limits>

#include "dsa/error.hpp"
#include "dsa/optimized/hip/launch.hpp"
#include "dsa/padding.hpp"

namespace dsa::gfx942 {
namespace {

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

void require_pointer(const void* p, const char* name, size_t alignment) {
  if (!p) throw InvalidInput(name, "is a null device pointer");
  if (reinterpret_cast<uintptr_t>(p) % alignment != 0)
    throw InvalidInput(name, fmt::format("is not {}-byte aligned", alignment));
}

void require_positive(int64_t v, const char* name) {
  if (v <= 0) throw InvalidInput(name, fmt::format("is {}; it must be positive", v));
}

}  // namespace

std::string check_decode_step(const DecodeStep& step) {
  const DecodeRows& r = step.rows;
  require_positive(r.batch, "batch");
  require_positive(r.next_n, "next_n");
  require_positive(step.heads, "heads");
  require_positive(step.head_dim, "head_dim");
  require_positive(r.num_pages, "num_pages");
  require_positive(r.page_size, "page_size");
  require_positive(r.max_pages, "max_pages");
  // 16-byte operand loads: q rows and cache pages start on 16 bytes.
  require_pointer(r.q, "q", 16);
  require_pointer(r.kv_cache, "kv_cache", 16);
  require_pointer(r.weights, "weights", 4);
  require_pointer(r.seq_lens, "seq_lens", 4);
  require_pointer(r.block_table, "block_table", 4);

  if (step.element != ElementFormat::e4m3fnuz)
    return fmt::format("the gfx942 kernels take e4m3fnuz, not {}", to_string(step.element));
  if (step.layout != CacheLayout::preshuffle)
    return fmt::format("the gfx942 kernels read the preshuffle cache, not {} (C4A layers run vLLM's kernel)",
                       to_string(step.layout));
  if (step.head_dim != 128) return fmt::format("head_dim {}: the preshuffle layout is defined for D = 128", step.head_dim);
  if (step.heads != 32 && step.heads != 64)
    return fmt::format("heads {}: the kernels hold H / 16 MFMA tiles of 16 heads for H in {{32, 64}}", step.heads);
  if (r.page_size % 16 != 0) return fmt::format("page_size {}: the preshuffle cache needs a multiple of 16", r.page_size);
  if (int64_t(r.batch) * r.next_n > kMaxInt32 || r.num_pages > kMaxInt32 ||
      int64_t(r.max_pages) * r.page_size > kMaxInt32)
    return "rows, pages or tokens beyond 2^31: the kernels index in 32 bits";
  return {};
}

std::string check_paged_logits(const DecodeStep& step, const float* logits, int64_t logits_stride, int64_t width) {
  std::string why = check_decode_step(step);
  require_pointer(logits, "logits", 4);
  if (width < 0) throw InvalidInput("width", fmt::format("is {}; it must not be negative", width));
  if (logits_stride < width)
    throw InvalidInput("logits_stride", fmt::format("{} is below the width {}", logits_stride, width));
  if (why.empty() && width > kMaxInt32) why = "width beyond 2^31: the kernels index in 32 bits";
  return why;
}

std::string check_candidate_logits_top_k(const DecodeStep& step, const int32_t* candidate_blocks, int32_t slots,
                                         int32_t candidate_block_size, const float* compact,
                                         const int32_t* topk_indices, int64_t topk_stride, int32_t topk_tokens,
                                         bool takes_aiter_path, bool requires_padding, const uint32_t* row_done,
                                         const SelectWorkspace& workspace) {
  std::string why = check_decode_step(step);
  require_pointer(candidate_blocks, "candidate_blocks", 4);
  require_pointer(compact, "compact", 4);
  require_pointer(topk_indices, "topk_indices", 4);
  require_pointer(row_done, "row_done", 4);
  require_pointer(workspace.slots, "workspace.slots", 8);
  require_pointer(workspace.counters, "workspace.counters", 4);
  require_positive(slots, "slots");
  require_positive(candidate_block_size, "candidate_block_size");
  require_positive(topk_tokens, "topk_tokens");
  if (topk_stride < topk_tokens)
    throw InvalidInput("topk_stride", fmt::format("{} is below topk_tokens {}", topk_stride, topk_tokens));
  if (!why.empty()) return why;
  if (!takes_aiter_path)
    return "the dense logits of this call would not come from AITER's Gluon kernel, whose arithmetic the launch copies";
  if (requires_padding) return "a padded step: its padded rows go through vLLM's path";
  if (topk_tokens != 512) return fmt::format("topk_tokens {}: the launch is the design's top 512", topk_tokens);
  if (int64_t(slots) * candidate_block_size > kMaxInt32) return "compact rows beyond 2^31 columns";
  return {};
}

std::string check_logits_rows(const LogitsRows& in) {
  require_pointer(in.logits, "logits", 4);
  require_pointer(in.seq_lens, "seq_lens", 4);
  require_positive(in.rows, "rows");
  require_positive(in.next_n, "next_n");
  require_positive(in.logits_stride, "logits_stride");
  if (in.rows % in.next_n != 0)
    throw InvalidInput("rows", fmt::format("{} rows are not whole requests of next_n {}", in.rows, in.next_n));
  if (in.width < 0 || in.width > in.logits_stride)
    throw InvalidInput("width", fmt::format("{} is outside [0, logits_stride = {}]", in.width, in.logits_stride));
  return in.logits_stride > kMaxInt32 ? "logits rows beyond 2^31 columns: the kernels index in 32 bits" : "";
}

std::string check_workspace(const SelectWorkspace& workspace, const WorkspaceSize& need) {
  if (!need.why.empty()) return need.why;
  if (workspace.slot_pairs < need.slot_pairs)
    throw InvalidInput("workspace.slot_pairs",
                       fmt::format("{} is below the {} the launch needs", workspace.slot_pairs, need.slot_pairs));
  if (workspace.counter_count < need.counters)
    throw InvalidInput("workspace.counter_count",
                       fmt::format("{} is below the {} the launch needs", workspace.counter_count, need.counters));
  if (need.slot_pairs > 0) require_pointer(workspace.slots, "workspace.slots", 8);
  if (need.counters > 0) require_pointer(workspace.counters, "workspace.counters", 4);
  return {};
}

std::string check_top_k(const LogitsRows& in, const int32_t* topk_indices, int64_t topk_stride, int32_t topk_tokens) {
  const std::string why = check_logits_rows(in);
  require_pointer(topk_indices, "topk_indices", 4);
  require_positive(topk_tokens, "topk_tokens");
  if (topk_stride < topk_tokens)
    throw InvalidInput("topk_stride", fmt::format("{} is below topk_tokens {}", topk_stride, topk_tokens));
  if (!why.empty()) return why;
  if (topk_tokens != 512) return fmt::format("topk_tokens {}: the gfx942 top-k is the design's top 512", topk_tokens);
  return {};
}

std::string check_candidates(const LogitsRows& in, const int32_t* candidate_blocks, int32_t slots,
                             int32_t candidate_block_size) {
  const std::string why = check_logits_rows(in);
  require_pointer(candidate_blocks, "candidate_blocks", 4);
  require_positive(slots, "slots");
  require_positive(candidate_block_size, "candidate_block_size");
  if (!why.empty()) return why;
  if (int64_t(slots) * candidate_block_size > kMaxInt32) return "candidate columns beyond 2^31";
  return {};
}

bool skip_decode_fill(int64_t num_decode_tokens, int64_t num_tokens, bool requires_padding) {
  return dsa::skip_decode_fill(false, num_decode_tokens, num_tokens, requires_padding);
}

}  // namespace dsa::gfx942
