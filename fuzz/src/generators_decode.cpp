// RapidCheck generators of whole decode steps and prefills.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "dsa/fuzz/generators.hpp"
#include "dsa/logits.hpp"
#include "dsa/profile.hpp"
#include "generator_draws.hpp"

namespace dsa::fuzz {

using namespace detail;

namespace {

// Whether the reference takes (profile, element, H, D): some profiles' reduction
// orders exist only for H a multiple of 32, some datapaths only for D = 128.
// Learned once per combination from a one-entry step.
bool profile_takes(const std::string& profile, ElementFormat element, CacheLayout layout, int32_t heads,
                   int32_t head_dim) {
  static std::map<std::tuple<std::string, ElementFormat, CacheLayout, int32_t, int32_t>, bool> known;
  const auto key = std::make_tuple(profile, element, layout, heads, head_dim);
  if (auto it = known.find(key); it != known.end()) return it->second;
  DecodeCase c;
  c.profile = profile;
  c.element = element;
  c.layout = layout;
  c.heads = heads;
  c.head_dim = head_dim;
  c.requests = {{1, {}, 0, 0}};
  bool ok = true;
  try {
    decode_logits(make_problem(c), find_profile(profile));
  } catch (const std::exception&) {
    ok = false;
  }
  return known[key] = ok;
}

}  // namespace

int64_t decode_products(const DecodeCase& c) {
  int64_t visible = 0;
  for (const auto& q : c.requests) {
    if (c.lens_2d) {
      for (int32_t l : q.row_lens) visible += l;
      continue;
    }
    const int32_t rows = c.padded ? q.decode_len : c.next_n;
    visible += int64_t(rows) * (q.tokens / c.compress_ratio);  // an upper bound: the newest row's length
  }
  return visible * c.heads * c.head_dim;
}

int64_t decode_product_limit(const DecodeCase& c, const GenLimits& limits) {
  return c.profile == "exact" ? limits.exact_products : limits.model_products;
}

rc::Gen<DecodeCase> gen_decode_case(const GenLimits& limits, DecodeGenOptions options) {
  static constexpr int kMaxNextN = 8;
  struct RequestDraw {
    LengthDraw entries;                // 1-D: entries (tokens / ratio), around next_n and the page
    int32_t extra_tokens;              // 1-D: tokens beyond entries * ratio (below ratio)
    std::vector<LengthDraw> row_lens;  // 2-D: kMaxNextN; the first next_n are used
    int32_t decode_len_per_mille;      // padded: d_b = 1 + this * next_n / 1001
    uint32_t seed;
  };
  auto request = rc::gen::build<RequestDraw>(
      rc::gen::set(&RequestDraw::entries, gen_length_draw()),
      rc::gen::set(&RequestDraw::extra_tokens, rc::gen::inRange<int32_t>(0, 4)),
      rc::gen::set(&RequestDraw::row_lens, rc::gen::container<std::vector<LengthDraw>>(kMaxNextN, gen_length_draw())),
      rc::gen::set(&RequestDraw::decode_len_per_mille, rc::gen::resize(kFullSize, rc::gen::inRange<int32_t>(0, 1001))),
      rc::gen::set(&RequestDraw::seed, gen_seed()));
  return polished<DecodeCase>(rc::gen::exec([limits, options, request] {
    const std::vector<RequestDraw> requests = *gen_list(request, limits.max_rows);
    DecodeCase c;
    enum Format { fn_flat, fnuz_flat, fnuz_preshuffle, mxfp4 };
    const Format format =
        options.sparse_form ? mxfp4 : *pick<Format>({{4, fn_flat}, {2, fnuz_flat}, {2, fnuz_preshuffle}, {2, mxfp4}});
    c.element = format == fn_flat ? ElementFormat::e4m3fn
                : format == mxfp4 ? ElementFormat::mxfp4
                                  : ElementFormat::e4m3fnuz;
    c.layout = format == fnuz_preshuffle ? CacheLayout::preshuffle
               : format == mxfp4         ? CacheLayout::mxfp4
                                         : CacheLayout::block_flat;
    c.block_size = format == fnuz_preshuffle ? *pick<int32_t>({16, 32, 64, 256})
                                             : *pick<int32_t>({{3, 16}, {2, 1}, {1, 2}, {1, 32}, {3, 64}, {1, 256}});
    c.compress_ratio = *pick<int32_t>({{2, 1}, {1, 4}});
    c.next_n = *pick<int32_t>({{4, 1}, {3, 2}, {1, 3}, {1, 4}, {1, 6}, {1, 8}});
    c.padded = options.padded_only || (c.next_n > 1 && *pick<int>({{3, 0}, {1, 1}}) == 1);
    if (c.padded && c.next_n == 1) c.next_n = 2;
    c.lens_2d = !c.padded && *pick<bool>({{3, false}, {1, true}});
    c.page_table = *pick<PageTableKind>({{1, PageTableKind::contiguous},
                                         {3, PageTableKind::shuffled},
                                         {1, PageTableKind::shared},
                                         {1, PageTableKind::non_contiguous}});
    c.spare_pages = *pick<int32_t>({0, 1, 3});
    c.extra_table_pages = *pick<int32_t>({0, 1, 2});
    c.width_pad = *pick<int64_t>({0, 1, 255});
    const auto codes = [] {
      return pick<CodeKind>({{5, CodeKind::quantized_normal},
                             {2, CodeKind::few_levels},
                             {1, CodeKind::constant},
                             {2, CodeKind::random_codes},
                             {1, CodeKind::extreme_codes},
                             {1, CodeKind::subnormal_codes}});
    };
    c.q_codes = *codes();
    c.k_codes = *codes();
    c.k_scales = *pick<ScaleKind>({{5, ScaleKind::quantizer},
                                   {2, ScaleKind::ue8m0},
                                   {1, ScaleKind::tiny},
                                   {1, ScaleKind::huge},
                                   {1, ScaleKind::zero},
                                   {1, ScaleKind::mixed}});
    c.weights = *pick<WeightKind>(
        {{5, WeightKind::normal}, {1, WeightKind::extreme}, {1, WeightKind::zero}, {2, WeightKind::positive}});
    std::vector<std::pair<int, std::string>> profiles;
    for (const std::string& name : profile_names()) {
      const Profile& profile = find_profile(name);
      if (profile.accepts(c.element) && (!options.sparse_form || profile.logits == Precision::bf16))
        profiles.emplace_back(name == "exact" ? 3 : 1, name);
    }
    std::stable_partition(profiles.begin(), profiles.end(), [](const auto& p) { return p.second == "exact"; });
    if (profiles.empty()) throw std::logic_error("no profile takes the sparse form's MXFP4 with bf16 logits");
    c.profile = *pick<std::string>(profiles);
    std::vector<std::pair<int, std::pair<int32_t, int32_t>>> shapes;  // (H, D) the profile takes
    for (int32_t d : {64, 128})
      for (int32_t h : {8, 16, 32, 64})
        if ((format != fnuz_preshuffle || d == 128) && profile_takes(c.profile, c.element, c.layout, h, d))
          shapes.emplace_back(1, std::make_pair(h, d));
    if (shapes.empty()) throw std::logic_error("profile " + c.profile + " takes no (H, D) of the fuzzer's");
    std::tie(c.heads, c.head_dim) = *pick(shapes);
    c.candidate_block_size = options.sparse_form ? *pick<int32_t>({8, 16, 32, 64}) : *pick<int32_t>({8, 1, 4, 16});
    c.candidate_slots = *pick<int32_t>({4, 1, 2, 16, 64});
    c.topk = *pick<int32_t>({{3, 8}, {1, 1}, {1, 3}, {2, 32}, {1, 512}});
    c.seed = *gen_seed();

    const int64_t cap = decode_product_limit(c, limits) / (int64_t(c.heads) * c.head_dim);  // entries of one row
    for (const RequestDraw& d : requests) {
      DecodeRequest q;
      if (c.lens_2d) {
        for (int32_t j = 0; j < c.next_n; ++j)
          q.row_lens.push_back(int32_t(d.row_lens[size_t(j)].resolve(c.next_n, c.block_size, cap)));
      } else {
        q.tokens = int32_t(d.entries.resolve(c.next_n, c.block_size, cap) * c.compress_ratio +
                           d.extra_tokens % c.compress_ratio);
      }
      if (c.padded) q.decode_len = 1 + d.decode_len_per_mille * c.next_n / 1001;
      q.seed = d.seed;
      c.requests.push_back(std::move(q));
    }
    const int64_t work = decode_products(c), limit = decode_product_limit(c, limits);
    if (work > limit) {
      const double f = double(limit) / double(work);
      for (auto& q : c.requests) {
        q.tokens = int32_t(scaled(q.tokens, f));
        for (auto& l : q.row_lens) l = int32_t(scaled(l, f));
      }
    }
    return c;
  }));
}

rc::Gen<PrefillCase> gen_prefill_case(const GenLimits& limits) {
  return polished<PrefillCase>(rc::gen::exec([limits] {
    PrefillCase c;
    c.element = *pick<ElementFormat>({{2, ElementFormat::e4m3fn}, {1, ElementFormat::e4m3fnuz}});
    c.q_codes = *pick<CodeKind>({{4, CodeKind::quantized_normal},
                                 {2, CodeKind::few_levels},
                                 {2, CodeKind::random_codes},
                                 {1, CodeKind::extreme_codes},
                                 {1, CodeKind::subnormal_codes}});
    c.k_codes = *pick<CodeKind>({{4, CodeKind::quantized_normal},
                                 {2, CodeKind::few_levels},
                                 {2, CodeKind::random_codes},
                                 {1, CodeKind::extreme_codes},
                                 {1, CodeKind::subnormal_codes}});
    c.k_scales = *pick<ScaleKind>({{4, ScaleKind::quantizer}, {1, ScaleKind::ue8m0}, {1, ScaleKind::tiny},
                                   {1, ScaleKind::huge}, {1, ScaleKind::zero}, {1, ScaleKind::mixed}});
    c.weights = *pick<WeightKind>({{4, WeightKind::normal}, {1, WeightKind::extreme}, {1, WeightKind::positive}});
    std::vector<std::pair<int, std::string>> profiles;
    for (const std::string& name : profile_names())
      if (find_profile(name).accepts(c.element)) profiles.emplace_back(name == "exact" ? 3 : 1, name);
    std::stable_partition(profiles.begin(), profiles.end(), [](const auto& p) { return p.second == "exact"; });
    c.profile = *pick<std::string>(profiles);
    std::vector<std::pair<int, std::pair<int32_t, int32_t>>> shapes;
    for (int32_t d : {64, 128})
      for (int32_t h : {8, 16, 32, 64})
        if (profile_takes(c.profile, c.element, CacheLayout::block_flat, h, d)) shapes.emplace_back(1, std::make_pair(h, d));
    if (shapes.empty()) throw std::logic_error("profile " + c.profile + " takes no (H, D) of the fuzzer's");
    std::tie(c.heads, c.head_dim) = *pick(shapes);
    c.seed = *gen_seed();
    const bool model = c.profile != "exact";
    const int64_t cap =
        (model ? limits.model_products : limits.exact_products) / (int64_t(c.heads) * c.head_dim);
    auto row = rc::gen::exec([=] {
      PrefillRow r;
      r.ks = *pick_gen<int64_t>({{3, rc::gen::just<int64_t>(0)}, {1, rc::gen::inRange<int64_t>(0, 300)}});
      r.len = *gen_length(64, 64, cap);
      r.seed = *gen_seed();
      return r;
    });
    c.rows = *gen_list(row, 16);
    // After the rows, so that a shrink drops rows before it tries these (each try runs the whole case).
    c.candidate_block_size = *pick<int32_t>({8, 1, 4, 16});
    c.candidate_slots = *pick<int32_t>({4, 1, 2, 16, 64});
    int64_t work = 0, num_k = 0;
    for (const auto& r : c.rows) work += r.len, num_k = std::max(num_k, r.ks + r.len);
    if (work > cap) {
      const double f = double(cap) / double(work);
      num_k = 0;
      for (auto& r : c.rows) r.len = scaled(r.len, f), num_k = std::max(num_k, r.ks + r.len);
    }
    c.num_k = num_k + *pick<int64_t>({0, 1, 37});
    return c;
  }));
}

}  // namespace dsa::fuzz
