// The preset registry, sizes, and the helpers the preset families share.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "dsa/checked.hpp"
#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "golden_case_metadata.hpp"
#include "presets_support.hpp"

namespace dsa::dataset {
namespace {

struct Dims {
  int32_t batch;
  int64_t context;
};
struct SizeTable {
  Dims small, medium, large;
};

SizeTable size_table(std::string_view preset) {
  if (preset == "v41_c4a" || preset == "mxfp4") return {{2, 4800}, {4, 81920}, {8, 131072}};
  if (preset == "prefill") return {{8, 3000}, {64, 16384}, {256, 131072}};
  if (preset == "edge") return {{0, 0}, {0, 0}, {0, 0}};  // fixed cases
  return {{2, 2150}, {4, 16384}, {8, 131072}};           // v32_decode, gfx942
}

constexpr int64_t kMaxContext = int64_t(1) << 24;
constexpr int32_t kMaxBatch = 4096;

// One case of the preset at its largest (cases are built one at a time): its
// logits (up to two rows per request, the reference's working copies) and its
// K caches (a consumer layer keeps its source's beside its own).
void require_preset_memory(const std::string& preset, const detail::PresetContext& ctx, const std::string& size) {
  const double batch = std::max(ctx.batch, 1), context = double(std::max<int64_t>(ctx.context, 1));
  const double token_bytes = 128 + 4;
  const double bytes = preset == "prefill" ? batch * context * 4 * 4 + context * token_bytes * 2
                                           : 2 * batch * context * 4 * 4 + batch * context * token_bytes * 3;
  require_memory("size", bytes,
                 "preset " + preset + " at size " + excerpt(size) + " (" + std::to_string(ctx.batch) + " requests of up to " +
                     std::to_string(ctx.context) + " tokens)");
}

}  // namespace

const std::vector<PresetInfo>& golden_presets() {
  static const std::vector<PresetInfo> presets = {
      {"v32_decode", "deepgemm_sm90",
       "DeepSeek V3.2 decode: H 64, D 128, k 2048, page 64; next_n 1, next_n 2, next_n 2 with 2-D lengths"},
      {"v41_c4a", "deepgemm_sm90",
       "DeepSeek V4.1 C4A decode: ratio 4, k 512, page 256 tokens = 64 entries, candidate blocks of 8; the "
       "source layer, then a consumer layer fed by its candidate blocks (dense, masked and compact forms)"},
      {"prefill", "exact", "Chunked prefill, H 64, D 128, k 2048: two sequences packed in one call (ks > 0)"},
      {"gfx942", "aiter_gfx942_gluon", "V3.2 decode on the gfx942 preshuffle cache with e4m3fnuz; next_n 1 and 2"},
      {"mxfp4", "deepgemm_sm100_bf16",
       "V4.1 on SM100: MXFP4 cache, H 32, bf16 weights and logits; a source layer, then the sparse form of a "
       "consumer layer"},
      {"edge", "exact",
       "Short rows (L < k, L = 0), ties at the cut, -inf- and NaN-heavy rows, padded requests, candidate rows "
       "with no block and drawn candidate blocks"},
  };
  return presets;
}

const PresetInfo& find_preset(std::string_view name) {
  std::string known;
  for (const auto& p : golden_presets()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw InvalidInput("preset", "unknown preset '" + std::string(name) + "' (known: " + known + ")");
}

PresetSize parse_preset_size(std::string_view text) {
  PresetSize size;
  size.label = std::string(text);
  if (text == "small" || text == "medium" || text == "large") return size;
  const std::string s(text);
  const size_t x = s.find('x');
  const auto batch = x == std::string::npos ? std::optional<int64_t>(0) : detail::parse_integer(s.substr(0, x));
  const auto context = detail::parse_integer(x == std::string::npos ? s : s.substr(x + 1));
  if (!batch || !context || *context < 1 || *context > kMaxContext || *batch < 0 || *batch > kMaxBatch ||
      (x != std::string::npos && *batch < 1))
    throw InvalidInput("size", "'" + excerpt(s) + "' is not small, medium, large, a context length N in [1, " +
                                   std::to_string(kMaxContext) + "] or BxN (batch B in [1, " + std::to_string(kMaxBatch) +
                                   "])");
  size.batch = int32_t(*batch);
  size.context = *context;
  return size;
}

std::string generator_string(const PresetRequest& r) {
  // No version or commit: a release that does not change the reference's
  // output must regenerate the committed sets byte for byte.
  return "dsa-oracle golden --preset " + r.preset + " --size " + r.size;
}

std::vector<PlannedCase> plan_preset(const PresetRequest& request) {
  const PresetInfo& info = find_preset(request.preset);
  auto ctx = std::make_shared<detail::PresetContext>();
  ctx->request = request;
  if (ctx->request.profile.empty()) ctx->request.profile = info.default_profile;
  ctx->profile = &find_profile(ctx->request.profile);
  const PresetSize size = parse_preset_size(request.size);
  const SizeTable table = size_table(info.name);
  const Dims dims = size.label == "medium" ? table.medium : size.label == "large" ? table.large : table.small;
  ctx->small = size.label == "small";
  ctx->batch = size.batch > 0 ? size.batch : dims.batch;
  ctx->context = size.context > 0 ? size.context : dims.context;
  ctx->generator = generator_string(request);
  require_preset_memory(info.name, *ctx, request.size);

  detail::Planner planner(ctx);
  try {
    if (info.name == "v32_decode") detail::plan_v32_decode(planner, CacheLayout::block_flat);
    else if (info.name == "gfx942") detail::plan_v32_decode(planner, CacheLayout::preshuffle);
    else if (info.name == "prefill") detail::plan_prefill(planner);
    else if (info.name == "v41_c4a") detail::plan_v41_c4a(planner);
    else if (info.name == "mxfp4") detail::plan_mxfp4(planner);
    else detail::plan_edge(planner);
  } catch (const InvalidInput& e) {
    // Say which preset asked for the format the profile does not take.
    if (e.argument() != "profile") throw;
    const std::string what = e.what();
    throw InvalidInput("profile", "preset " + info.name + ": " + what.substr(e.argument().size() + 2));
  }
  return planner.take();
}

namespace detail {

std::string Planner::add(const std::string& name, GoldenOp op, std::function<GoldenCase(uint64_t)> build) {
  const uint64_t seed = seeds_.next_u64();
  char index[8];
  std::snprintf(index, sizeof index, "%02zu", cases_.size());
  cases_.push_back({context_->request.preset + "_" + index + "_" + name + ".safetensors", op,
                    [build = std::move(build), seed] { return build(seed); }});
  return cases_.back().file;
}

GoldenCase new_case(const PresetContext& ctx, GoldenOp op, const std::string& name) {
  GoldenCase c;
  c.settings.op = op;
  c.settings.profile = ctx.profile->name;
  c.settings.info = {{"seed", std::to_string(ctx.request.seed)},
                     {"generator", ctx.generator},
                     {"preset", ctx.request.preset},
                     {"case", name}};
  return c;
}

ElementFormat preset_fp8(const PresetContext& ctx) {
  for (ElementFormat e : {ElementFormat::e4m3fn, ElementFormat::e4m3fnuz})
    if (ctx.profile->accepts(e)) return e;
  throw InvalidInput("profile", ctx.profile->name + " takes no fp8 format; preset " + ctx.request.preset +
                                    " needs e4m3fn or e4m3fnuz");
}

SyntheticDecodeConfig decode_config(const PresetContext& ctx, ElementFormat element, int32_t next_n) {
  ctx.profile->require(element);
  SyntheticDecodeConfig c;
  c.next_n = next_n;
  c.heads = 64;
  c.head_dim = 128;
  c.element = element;
  c.layout = element == ElementFormat::mxfp4 ? CacheLayout::mxfp4 : CacheLayout::block_flat;
  c.block_size = 64;
  c.bf16_weights = ctx.profile->weights == Precision::bf16;
  return c;
}

std::vector<int32_t> request_lengths(Rng& rng, int32_t batch, int64_t longest) {
  std::vector<int32_t> lens(static_cast<size_t>(batch));
  for (int32_t b = 0; b < batch; ++b)
    lens[size_t(b)] = int32_t(b == 0 ? longest : rng.uniform_int(std::max<int64_t>(1, longest / 4), longest));
  return lens;
}

void use_2d_lengths(DecodeProblem& p) {
  std::vector<int32_t> rows(size_t(p.rows()));
  for (int64_t r = 0; r < p.rows(); ++r) rows[size_t(r)] = int32_t(visible_len(p, r));
  p.seq_lens = std::move(rows);
  p.seq_lens_2d = true;
  p.compress_ratio = 1;  // 2-D lengths are entries already
}

void adopt_page_table(DecodeProblem& layer, const DecodeProblem& source) {
  const size_t page_bytes = layer.cache.page_bytes();
  std::vector<uint8_t> moved(layer.cache.bytes.size());
  std::vector<char> taken(size_t(layer.cache.num_pages), 0), filled(size_t(layer.cache.num_pages), 0);
  for (int32_t b = 0; b < layer.batch; ++b) {
    int64_t entries = 0;  // table slots past a request's pages hold junk (0): not moved
    for (int64_t r = int64_t(b) * layer.next_n; r < int64_t(b + 1) * layer.next_n; ++r)
      entries = std::max({entries, visible_len(layer, r), candidate_row_end(layer, r)});
    const int64_t pages = (entries + layer.cache.block_size - 1) / layer.cache.block_size;
    for (int64_t i = 0; i < pages; ++i) {
      const size_t slot = size_t(b) * size_t(layer.max_pages) + size_t(i);
      const int32_t from = layer.block_table[slot], to = source.block_table[slot];
      if (filled[size_t(to)] || taken[size_t(from)])
        throw InvalidInput("block_table", "adopt_page_table: a page used twice");
      std::memcpy(moved.data() + size_t(to) * page_bytes, layer.cache.bytes.data() + size_t(from) * page_bytes, page_bytes);
      filled[size_t(to)] = taken[size_t(from)] = 1;
    }
  }
  int32_t next_free = 0;
  for (int32_t to = 0; to < layer.cache.num_pages; ++to) {
    if (filled[size_t(to)]) continue;
    while (taken[size_t(next_free)]) ++next_free;
    std::memcpy(moved.data() + size_t(to) * page_bytes, layer.cache.bytes.data() + size_t(next_free) * page_bytes, page_bytes);
    taken[size_t(next_free)] = 1;
  }
  layer.cache.bytes = std::move(moved);
  layer.block_table = source.block_table;
}

void repeat_tokens(DecodeProblem& p, int distinct, Rng& rng) {
  PagedKCache& cache = p.cache;
  const size_t page_bytes = cache.page_bytes();
  const int32_t step = is_fp8(cache.element) ? 1 : 2;  // mxfp4: one byte holds a pair
  // The first `distinct` tokens of request 0 (which must hold that many).
  std::vector<std::pair<int32_t, int32_t>> prototypes;
  for (int i = 0; i < distinct; ++i)
    prototypes.emplace_back(p.block_table[size_t(i / cache.block_size)], i % cache.block_size);
  for (int32_t b = 0; b < p.batch; ++b) {
    const int64_t entries = p.seq_lens_2d ? *std::max_element(p.seq_lens.begin() + b * p.next_n,
                                                              p.seq_lens.begin() + (b + 1) * p.next_n)
                                          : p.seq_lens[size_t(b)] / p.compress_ratio;
    for (int64_t n = 0; n < entries; ++n) {
      const int32_t page = p.block_table[size_t(b) * size_t(p.max_pages) + size_t(n / cache.block_size)];
      const int32_t slot = int32_t(n % cache.block_size);
      if (b == 0 && n < distinct) continue;  // the prototypes themselves
      const auto [src_page, src_slot] = prototypes[size_t(rng.uniform_int(0, distinct - 1))];
      if (src_page == page && src_slot == slot) continue;
      uint8_t* dst = cache.bytes.data() + size_t(page) * page_bytes;
      const uint8_t* src = cache.bytes.data() + size_t(src_page) * page_bytes;
      for (int32_t d = 0; d < p.head_dim; d += step) dst[cache.value_offset(slot, d)] = src[cache.value_offset(src_slot, d)];
      std::memcpy(dst + cache.scale_offset(slot), src + cache.scale_offset(src_slot), 4);
    }
  }
}

GoldenCase finish(GoldenCase c) {
  std::vector<std::string> outputs;
  for (const auto& name : op_outputs(c.settings.op, c.logits_given()))
    if (name != out::topk_indices || c.settings.topk > 0) outputs.push_back(name);
  compute_expected(c, outputs);
  return c;
}

}  // namespace detail
}  // namespace dsa::dataset
