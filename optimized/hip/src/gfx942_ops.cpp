#include "dsa/optimized/hip/gfx942_ops.hpp"

#include <fmt/format.h>

#include <limits>
#include <optional>

#include "device_buffer.hpp"
#include "dsa/error.hpp"
#include "dsa/optimized/hip/launch.hpp"
#include "dsa/padding.hpp"

namespace dsa::gfx942 {
namespace {

using detail::DeviceBuffer;
using detail::HipRuntime;

template <typename T>
std::span<const T> view(const std::vector<T>& v) {
  return {v.data(), v.size()};
}

const HipRuntime& device() {
  std::string why;
  const HipRuntime* rt = detail::runtime(&why);
  if (!rt) throw Unsupported("gfx942: " + why);
  return *rt;
}

void require_gfx942_profile(const Profile& profile) {
  if (profile.name != "dsa_gfx942" && profile.name != "aiter_gfx942_gluon")
    throw Unsupported(fmt::format("gfx942: the kernels compute dsa_gfx942 (AITER's Gluon arithmetic), not {}",
                                  profile.name));
}

void require_launched(const LaunchResult& r, const HipRuntime& rt) {
  if (!r) throw Unsupported("gfx942: " + r.why);
  detail::require_hip(rt, rt.synchronize(), "the launch");
}

// The problem's tensors on the device, and the launchers' view of them.
struct DeviceStep {
  DeviceBuffer q, weights, seq_lens, block_table, cache;
  DecodeStep step;

  DeviceStep(const HipRuntime& rt, const DecodeProblem& p)
      : q(rt, view(p.q)),
        weights(rt, view(p.weights)),
        seq_lens(rt, view(p.seq_lens)),
        block_table(rt, view(p.block_table)),
        cache(rt, view(p.cache.bytes)) {
    step.rows = {q.as<uint8_t>(), weights.as<float>(), seq_lens.as<int32_t>(), block_table.as<int32_t>(),
                 cache.as<uint8_t>(), p.cache.num_pages, p.batch, p.next_n, p.max_pages, p.cache.block_size,
                 p.seq_lens_2d ? 1 : 0};
    step.heads = p.heads;
    step.head_dim = p.head_dim;
    step.element = p.element;
    step.layout = p.cache.layout;
  }
};

// What the kernels' lengths cannot express: padded steps and C4A entries.
void require_plain_decode(const DecodeProblem& p) {
  if (!p.decode_lens.empty()) throw Unsupported("gfx942: a padded step (its padded rows go through vLLM's path)");
  if (p.compress_ratio != 1) throw Unsupported("gfx942: C4A layers (compress_ratio > 1) run vLLM's Triton kernel");
}

// A RowBounds as the kernels' per-row lengths: 2-D lengths (one per row), starts 0.
std::vector<int32_t> row_ends(const RowBounds& bounds) {
  std::vector<int32_t> ends;
  for (int64_t r = 0; r < bounds.rows(); ++r) {
    if (bounds.start[size_t(r)] != 0) throw Unsupported("gfx942: the selection launches take decode rows (start 0)");
    if (bounds.end[size_t(r)] > std::numeric_limits<int32_t>::max())
      throw Unsupported("gfx942: a row beyond 2^31 columns");
    ends.push_back(int32_t(bounds.end[size_t(r)]));
  }
  return ends;
}

LogitsRows logits_rows(const DeviceBuffer& logits, const Logits& host, const DeviceBuffer& ends) {
  LogitsRows in;
  in.logits = logits.as<float>();
  in.logits_stride = host.width;
  in.seq_lens = ends.as<int32_t>();
  in.rows = int32_t(host.rows);
  in.next_n = 1;
  in.seq_lens_2d = 1;
  return in;
}

class Gfx942Ops final : public IndexerOps {
public:
  std::string name() const override { return "hip_gfx942"; }

  void decode_logits(const DecodeProblem& problem, const Profile& profile, Logits& out) override {
    problem.validate();
    require_output("logits", out, problem.rows(), problem.logits_width);
    require_gfx942_profile(profile);
    require_plain_decode(problem);
    const HipRuntime& rt = device();
    DeviceStep d(rt, problem);
    DeviceBuffer logits(rt, view(out.values));
    require_launched(paged_logits(d.step, logits.as<float>(), out.width, out.width, nullptr), rt);
    logits.copy_to(std::span<float>(out.values));
  }

  void candidate_logits_top_k(const DecodeProblem& problem, const Profile& profile, const CandidateBlocks& candidates,
                              Logits& compact_out, TopkIndices& out) override {
    problem.validate();
    candidates.validate();
    require_output("compact_logits", compact_out, problem.rows(), int64_t(candidates.slots) * candidates.block_size);
    require_output("topk_indices", out, problem.rows());
    require_gfx942_profile(profile);
    require_plain_decode(problem);
    const HipRuntime& rt = device();
    DeviceStep d(rt, problem);
    DeviceBuffer blocks(rt, view(candidates.blocks)), compact(rt, view(compact_out.values)),
        topk(rt, view(out.indices)), row_done(rt, size_t(problem.rows()) * sizeof(uint32_t));
    require_launched(gfx942::candidate_logits_top_k(d.step, blocks.as<int32_t>(), candidates.slots,
                                                    candidates.block_size, compact.as<float>(), topk.as<int32_t>(),
                                                    out.k, out.k, true, false, row_done.as<uint32_t>(), nullptr),
                     rt);
    compact.copy_to(std::span<float>(compact_out.values));
    topk.copy_to(std::span<int32_t>(out.indices));
  }

  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    check_row_bounds(logits, bounds);
    require_output("topk_indices", out, logits.rows);
    const std::vector<int32_t> ends = row_ends(bounds);
    const HipRuntime& rt = device();
    DeviceBuffer values(rt, view(logits.values)), lens(rt, view(ends)), topk(rt, view(out.indices));
    require_launched(decode_top_k(logits_rows(values, logits, lens), topk.as<int32_t>(), out.k, out.k, nullptr), rt);
    topk.copy_to(std::span<int32_t>(out.indices));
  }

  void candidate_select(const Logits& logits, const RowBounds& candidate_bounds, CandidateBlocks& out) override {
    check_row_bounds(logits, candidate_bounds);
    require_output("candidate_blocks", out, logits.rows);
    const std::vector<int32_t> ends = row_ends(candidate_bounds);
    const HipRuntime& rt = device();
    DeviceBuffer values(rt, view(logits.values)), lens(rt, view(ends)), blocks(rt, view(out.blocks));
    require_launched(select_candidates(logits_rows(values, logits, lens), out.block_size, blocks.as<int32_t>(),
                                       out.slots, nullptr),
                     rt);
    blocks.copy_to(std::span<int32_t>(out.blocks));
  }

  void candidate_topk(const Logits& logits, const RowBounds& topk_bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    check_row_bounds(logits, topk_bounds);
    candidates.validate();
    require_output("topk_indices", out, logits.rows);
    const std::vector<int32_t> ends = row_ends(topk_bounds);
    const HipRuntime& rt = device();
    DeviceBuffer values(rt, view(logits.values)), lens(rt, view(ends)), blocks(rt, view(candidates.blocks)),
        topk(rt, view(out.indices));
    require_launched(gfx942::candidate_top_k(logits_rows(values, logits, lens), blocks.as<int32_t>(),
                                             candidates.slots, candidates.block_size, topk.as<int32_t>(), out.k,
                                             out.k, nullptr),
                     rt);
    topk.copy_to(std::span<int32_t>(out.indices));
  }

  bool skip_decode_fill(bool has_prefill_rows, int64_t num_decode_tokens, int64_t num_tokens,
                        bool requires_padding) override {
    return dsa::skip_decode_fill(has_prefill_rows, num_decode_tokens, num_tokens, requires_padding);
  }
};

}  // namespace

std::unique_ptr<IndexerOps> make_gfx942_ops() { return std::make_unique<Gfx942Ops>(); }

}  // namespace dsa::gfx942
