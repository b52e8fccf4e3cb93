// What the preset families share: the resolved request, case seeds, and the
// small transformations of synthetic problems the presets need.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dsa/dataset/presets.hpp"
#include "dsa/rng.hpp"
#include "dsa/synthetic.hpp"

namespace dsa::dataset::detail {

struct PresetContext {
  PresetRequest request;
  const Profile* profile = nullptr;
  int32_t batch = 0;     // resolved size
  int64_t context = 0;   // tokens (prefill: keys)
  bool small = false;    // the committed (CI) size
  std::string generator;
};

// Plans cases in order: each gets the next seed of the request's stream.
class Planner {
public:
  explicit Planner(std::shared_ptr<const PresetContext> context)
      : context_(std::move(context)), seeds_(context_->request.seed) {}
  const PresetContext& context() const { return *context_; }
  std::shared_ptr<const PresetContext> shared() const { return context_; }
  // build receives the case's own seed. Returns the case's file name.
  std::string add(const std::string& name, GoldenOp op, std::function<GoldenCase(uint64_t seed)> build);
  // A seed for state that several cases share (drawn in plan order too).
  uint64_t draw_seed() { return seeds_.next_u64(); }
  std::vector<PlannedCase> take() { return std::move(cases_); }

private:
  std::shared_ptr<const PresetContext> context_;
  Rng seeds_;
  std::vector<PlannedCase> cases_;
};

// A case of the preset with its settings and metadata (profile, seed, generator, preset, case name).
GoldenCase new_case(const PresetContext& ctx, GoldenOp op, const std::string& name);
// e4m3fn when the profile takes it, else e4m3fnuz; InvalidInput("profile") when it takes neither.
ElementFormat preset_fp8(const PresetContext& ctx);
// A V3.2-like synthetic decode config (H 64, D 128, page 64, block-flat) for the profile.
SyntheticDecodeConfig decode_config(const PresetContext& ctx, ElementFormat element, int32_t next_n);
// Request lengths in tokens: the first is `longest`, the others uniform in [longest / 4, longest].
std::vector<int32_t> request_lengths(Rng& rng, int32_t batch, int64_t longest);
// 1-D lengths -> the equivalent 2-D per-row lengths in entries (what vLLM passes on C4A layers).
void use_2d_lengths(DecodeProblem& p);
// Moves `layer`'s pages so that it uses `source`'s page table (layers of one
// model share the block table); both must need the same pages per request.
void adopt_page_table(DecodeProblem& layer, const DecodeProblem& source);
// Every token of the used pages becomes a copy of one of `distinct` prototype
// tokens: logits then take few values and ties at the cut are certain.
void repeat_tokens(DecodeProblem& p, int distinct, Rng& rng);
// Computes the expected outputs (every output of the op; the top-k when `topk` is set).
GoldenCase finish(GoldenCase c);

// The families (presets_*.cpp).
void plan_v32_decode(Planner& planner, CacheLayout layout);
void plan_prefill(Planner& planner);
void plan_v41_c4a(Planner& planner);
void plan_mxfp4(Planner& planner);
void plan_edge(Planner& planner);

}  // namespace dsa::dataset::detail
