#include "dsa/optimized/hip/gfx942_ops.hpp"

#include <fmt/format.h>

#include <limits>
#include <optional>

#include "device_buffer.hpp"
#include "dsa/common/host/device_buffers.hpp"
#include "dsa/common/host/selection_ops.hpp"
#include "dsa/error.hpp"
#include "dsa/optimized/hip/launch.hpp"

namespace dsa::gfx942 {
namespace {

using detail::DeviceBuffer;
using detail::HipRuntime;
namespace sel = common::select;

template <typename T>
std::span<const T> view(const std::vector<T>& v) {
  return {v.data(), v.size()};
}

// dsa_gfx942, or a profile of the same arithmetic (aiter_gfx942_gluon: the kernels copy AITER's Gluon
// datapath), the rule the contract's claims_profile gives the harness.
void require_gfx942_profile(const Profile& profile) {
  if (profile.name != "dsa_gfx942" && !same_arithmetic(profile, find_profile("dsa_gfx942")))
    throw Unsupported(fmt::format("gfx942: the kernels compute dsa_gfx942 (AITER's Gluon arithmetic), not {}",
                                  profile.name));
}

void require_launched(const LaunchResult& r) {
  if (!r) throw Unsupported("gfx942: " + r.why);
  const HipRuntime& rt = detail::device();
  detail::require_hip(rt, rt.synchronize(), "the launch");
}

// The device half of SelectionOps (optimized/common/host): the selection and
// row kernels of this build's code objects, one launch at a time.
struct HipSelectBackend : common::host::DeviceBuffers<DeviceBuffer> {
  int capacity() const { return kSelectCapacity; }
  void require(const char* op) const {
    std::string why;
    if (!detail::runtime(&why)) throw Unsupported(fmt::format("gfx942: {}: {}", op, why));
  }
  template <class Source>
  void launch(const Source& src, const sel::TreePlan& plan, const sel::TreeOutput& out) {
    const char* kernel = std::is_same_v<Source, sel::DenseRows>     ? "decode_top_k"
                         : std::is_same_v<Source, sel::BlockScores> ? "select_candidates"
                                                                    : "candidate_top_k";
    const TreeParams<Source> p{src, plan, out};
    int resident = 1;
    std::string why = detail::resident_blocks(kernel, symbol(kernel).c_str(), kSelectThreads, &resident);
    const auto grid = uint32_t(std::clamp<int64_t>(src.rows() * plan.max_leaves, 1, resident));
    if (why.empty())
      why = detail::launch(kernel, symbol(kernel).c_str(), &p, sizeof(p), grid, 1, kSelectThreads, nullptr);
    require_launched({why.empty(), why});
  }
  void launch(const common::PackRows& p) { rows("pack_rows", p, int64_t(p.batch) * p.next_n, 0); }
  void launch(const common::UnpackTopk& p) { rows("unpack_topk", p, p.out_rows, 0); }
  int64_t mask_bitmap_words() const { return kMaskBitmapBytes / 4; }
  void launch(const common::CandidateMaskRows& p) {
    // A block per (row, part) item (candidate_mask.hpp), as the CUDA launch.
    rows("candidate_mask", p, p.items(), uint32_t(std::max<int64_t>(1, p.bitmap_words()) * 4));
  }

private:
  static std::string symbol(const char* kernel) { return std::string("dsa_gfx942_") + kernel; }
  // A row kernel: a block per row, at most 4096 blocks striding over the rest.
  template <class Params>
  void rows(const char* kernel, const Params& p, int64_t n, uint32_t lds_bytes) {
    if (n == 0) return;
    const std::string why = detail::launch(kernel, symbol(kernel).c_str(), &p, sizeof(p),
                                           uint32_t(std::clamp<int64_t>(n, 1, 4096)), 1, kRowThreads, nullptr,
                                           lds_bytes);
    require_launched({why.empty(), why});
  }
};

// The problem's tensors on the device, and the launchers' view of them.
struct DeviceStep {
  DeviceBuffer<uint8_t> q, cache;
  DeviceBuffer<float> weights;
  DeviceBuffer<int32_t> seq_lens, block_table;
  DecodeStep step;

  explicit DeviceStep(const DecodeProblem& p)
      : q(view(p.q)), cache(view(p.cache.bytes)), weights(view(p.weights)), seq_lens(view(p.seq_lens)),
        block_table(view(p.block_table)) {
    step.rows = {q.data(), weights.data(), seq_lens.data(), block_table.data(), cache.data(), p.cache.num_pages,
                 p.batch, p.next_n, p.max_pages, p.cache.block_size, p.seq_lens_2d ? 1 : 0};
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

// The logits launches here; topk, candidate_select, candidate_topk, the
// candidate mask, the padding pack/unpack and skip_decode_fill are the shared
// SelectionOps over the same selection kernels the design's launches run.
class Gfx942Ops final : public common::host::SelectionOps<HipSelectBackend> {
public:
  Gfx942Ops() : SelectionOps("hip_gfx942", HipSelectBackend{}) {}

  void decode_logits(const DecodeProblem& problem, const Profile& profile, Logits& out) override {
    problem.validate();
    require_output("logits", out, problem.rows(), problem.logits_width);
    require_gfx942_profile(profile);
    require_plain_decode(problem);
    DeviceStep d(problem);
    DeviceBuffer<float> logits(view(out.values));
    require_launched(paged_logits(d.step, logits.data(), out.width, out.width, nullptr));
    logits.download(std::span<float>(out.values));
  }

  void candidate_logits_top_k(const DecodeProblem& problem, const Profile& profile, const CandidateBlocks& candidates,
                              Logits& compact_out, TopkIndices& out) override {
    problem.validate();
    candidates.validate();
    require_output("compact_logits", compact_out, problem.rows(), int64_t(candidates.slots) * candidates.block_size);
    require_output("topk_indices", out, problem.rows());
    require_gfx942_profile(profile);
    require_plain_decode(problem);
    DeviceStep d(problem);
    const int64_t rows = problem.rows();
    const WorkspaceSize need =
        select_workspace_size(rows, int64_t(candidates.slots) * candidates.block_size, out.k, true);
    if (!need.why.empty()) throw Unsupported("gfx942: candidate_logits_top_k: " + need.why);
    DeviceBuffer<int32_t> blocks(view(candidates.blocks)), topk(view(out.indices));
    DeviceBuffer<float> compact(view(compact_out.values));
    DeviceBuffer<uint32_t> row_done{size_t(rows)}, counters{size_t(need.counters)};
    DeviceBuffer<uint64_t> slots{size_t(need.slot_pairs)};
    counters.zero();
    const SelectWorkspace ws{slots.data(), need.slot_pairs, counters.data(), need.counters};
    require_launched(gfx942::candidate_logits_top_k(d.step, blocks.data(), candidates.slots, candidates.block_size,
                                                    compact.data(), topk.data(), out.k, out.k, true, false,
                                                    row_done.data(), ws, nullptr));
    compact.download(std::span<float>(compact_out.values));
    topk.download(std::span<int32_t>(out.indices));
  }
};

}  // namespace

std::unique_ptr<IndexerOps> make_gfx942_ops() { return std::make_unique<Gfx942Ops>(); }

}  // namespace dsa::gfx942
