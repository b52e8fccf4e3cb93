// Preset families of DeepSeek V4.1's candidate blocks: a source layer selects
// the blocks, consumer layers of the same step read them (SPEC 7). As in the
// model, the layers share the request lengths and the block table but have
// their own K cache, q and weights.
#include "dsa/error.hpp"
#include "presets_support.hpp"

namespace dsa::dataset::detail {
namespace {

constexpr int32_t kV41Topk = 512;
constexpr int32_t kCandidateBlockSize = 8;
constexpr int32_t kCandidateTopkBlocks = 2048;
// The small (committed) sets keep fewer candidate blocks so that a short
// context still has more blocks than slots: the selection really selects.
constexpr int32_t kSmallCandidateTopkBlocks = 96;

struct LayerPairSpec {
  ElementFormat element = ElementFormat::e4m3fn;
  int32_t heads = 64;
  int32_t next_n = 2;
};

// The source layer's case and the consumer layer's problem, built once.
class LayerPair {
public:
  LayerPair(std::shared_ptr<const PresetContext> ctx, LayerPairSpec spec, uint64_t seed)
      : ctx_(std::move(ctx)), spec_(spec), seed_(seed) {}

  int32_t slots() const { return ctx_->small ? kSmallCandidateTopkBlocks : kCandidateTopkBlocks; }

  const GoldenCase& source() {
    build();
    return *source_;
  }
  const DecodeProblem& consumer() {
    build();
    return *consumer_;
  }

private:
  void build() {
    if (source_) return;
    Rng rng(seed_);
    SyntheticDecodeConfig config = decode_config(*ctx_, spec_.element, spec_.next_n);
    config.heads = spec_.heads;
    config.compress_ratio = 4;  // page 256 tokens = 64 entries
    config.block_size = 64;
    config.batch = ctx_->batch;
    config.seq_lens = request_lengths(rng, ctx_->batch, ctx_->context);
    Rng source_rng = rng.split(), consumer_rng = rng.split();
    GoldenCase c = new_case(*ctx_, GoldenOp::candidate_select, "source");
    c.settings.topk = kV41Topk;
    c.settings.candidate_block_size = kCandidateBlockSize;
    c.settings.candidate_topk_blocks = slots();
    c.decode = make_decode_problem(config, source_rng);
    source_ = finish(std::move(c));
    consumer_ = make_decode_problem(config, consumer_rng);
    adopt_page_table(*consumer_, *source_->decode);
  }

  std::shared_ptr<const PresetContext> ctx_;
  LayerPairSpec spec_;
  uint64_t seed_;
  std::optional<GoldenCase> source_;
  std::optional<DecodeProblem> consumer_;
};

void add_consumer(Planner& planner, const std::shared_ptr<LayerPair>& pair, const std::string& name, GoldenOp op,
                  const std::string& source_file) {
  auto ctx = planner.shared();
  planner.add(name, op, [ctx, pair, name, op, source_file](uint64_t) {
    GoldenCase c = new_case(*ctx, op, name);
    c.settings.topk = kV41Topk;
    c.settings.candidate_block_size = kCandidateBlockSize;
    c.settings.candidate_topk_blocks = pair->slots();
    c.settings.info["candidate_source"] = source_file;
    c.decode = pair->consumer();
    c.candidate_blocks = *pair->source().expected.candidate_blocks;
    return finish(std::move(c));
  });
}

}  // namespace

void plan_v41_c4a(Planner& planner) {
  auto ctx = planner.shared();
  auto pair = std::make_shared<LayerPair>(ctx, LayerPairSpec{preset_fp8(*ctx), 64, 2}, planner.draw_seed());
  const std::string source = planner.add("source", GoldenOp::candidate_select, [pair](uint64_t) { return pair->source(); });
  add_consumer(planner, pair, "consumer", GoldenOp::consumer_step, source);
  add_consumer(planner, pair, "consumer_mask", GoldenOp::candidate_mask, source);
  add_consumer(planner, pair, "consumer_compact", GoldenOp::compact_candidate_logits, source);
}

void plan_mxfp4(Planner& planner) {
  auto ctx = planner.shared();
  ctx->profile->require(ElementFormat::mxfp4);
  // The SM100 sparse kernel takes one query per row and 32 heads (SPEC 1, 7).
  auto pair = std::make_shared<LayerPair>(ctx, LayerPairSpec{ElementFormat::mxfp4, 32, 1}, planner.draw_seed());
  const std::string source = planner.add("source", GoldenOp::candidate_select, [pair](uint64_t) { return pair->source(); });
  // The sparse form writes bf16 logits; a profile with fp32 logits gets the dense consumer step instead.
  if (ctx->profile->logits == Precision::bf16) add_consumer(planner, pair, "sparse", GoldenOp::sparse_sm100, source);
  else add_consumer(planner, pair, "consumer", GoldenOp::consumer_step, source);
}

}  // namespace dsa::dataset::detail
