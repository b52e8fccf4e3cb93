// Preset families of plain decode and prefill steps: DeepSeek V3.2 (CUDA
// block-flat and gfx942 preshuffle) and chunked prefill.
#include <algorithm>

#include "dsa/error.hpp"
#include "presets_support.hpp"

namespace dsa::dataset::detail {
namespace {

constexpr int32_t kV32Topk = 2048;

GoldenCase v32_case(const PresetContext& ctx, uint64_t seed, const std::string& name, int32_t next_n, bool lens_2d,
                    CacheLayout layout) {
  Rng rng(seed);
  const ElementFormat element = layout == CacheLayout::preshuffle ? ElementFormat::e4m3fnuz : preset_fp8(ctx);
  SyntheticDecodeConfig config = decode_config(ctx, element, next_n);
  config.layout = layout;
  config.batch = ctx.batch;
  config.seq_lens = request_lengths(rng, ctx.batch, ctx.context);
  GoldenCase c = new_case(ctx, GoldenOp::decode_topk, name);
  c.settings.topk = kV32Topk;
  c.decode = make_decode_problem(config, rng);
  if (lens_2d) use_2d_lengths(*c.decode);
  return finish(std::move(c));
}

}  // namespace

void plan_v32_decode(Planner& planner, CacheLayout layout) {
  auto ctx = planner.shared();
  if (layout == CacheLayout::preshuffle) ctx->profile->require(ElementFormat::e4m3fnuz);
  else preset_fp8(*ctx);
  planner.add("nn1", GoldenOp::decode_topk, [ctx, layout](uint64_t s) { return v32_case(*ctx, s, "nn1", 1, false, layout); });
  planner.add("nn2", GoldenOp::decode_topk, [ctx, layout](uint64_t s) { return v32_case(*ctx, s, "nn2", 2, false, layout); });
  if (layout == CacheLayout::block_flat)  // DeepGEMM and vLLM's CUDA path also take per-row lengths
    planner.add("nn2_2d", GoldenOp::decode_topk,
                [ctx, layout](uint64_t s) { return v32_case(*ctx, s, "nn2_2d", 2, true, layout); });
}

void plan_prefill(Planner& planner) {
  auto ctx = planner.shared();
  const ElementFormat element = preset_fp8(*ctx);
  planner.add("chunk", GoldenOp::prefill_topk, [ctx, element](uint64_t seed) {
    Rng rng(seed);
    SyntheticPrefillConfig config;
    config.rows = std::max(2, ctx->batch);
    config.num_k = std::max<int64_t>(config.rows * 2, ctx->context);
    config.element = element;
    GoldenCase c = new_case(*ctx, GoldenOp::prefill_topk, "chunk");
    c.settings.topk = 2048;
    c.prefill = make_prefill_problem(config, rng);
    PrefillProblem& p = *c.prefill;
    if (ctx->profile->weights == Precision::bf16)
      for (auto& w : p.weights) w = round_to_bf16(w);
    // Two sequences packed in one call, as vLLM's chunked prefill does: the
    // first rows attend causally to keys [0, first), the rest to [first, N).
    const int32_t rows_a = p.rows / 2;
    const int64_t first = p.num_k * 3 / 4;
    for (int32_t r = 0; r < p.rows; ++r) {
      const bool a = r < rows_a;
      const int64_t begin = a ? 0 : first, len = a ? first : p.num_k - first;
      const int64_t rows = a ? rows_a : p.rows - rows_a, j = a ? r : r - rows_a;
      p.ks[size_t(r)] = int32_t(begin);
      p.ke[size_t(r)] = int32_t(begin + std::max<int64_t>(0, len - rows + j + 1));
    }
    return finish(std::move(c));
  });
}

}  // namespace dsa::dataset::detail
