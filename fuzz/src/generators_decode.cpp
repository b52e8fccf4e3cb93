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

std::vector<int32_t> or_default(const std::vector<int32_t>& list, std::vector<int32_t> fallback) {
  return list.empty() ? fallback : list;
}

// (H, D) pairs inside the contract that the profile takes for this format.
std::vector<std::pair<int, std::pair<int32_t, int32_t>>> shapes_of(const Contract& contract, const std::string& profile,
                                                                    ElementFormat element, CacheLayout layout) {
  std::vector<std::pair<int, std::pair<int32_t, int32_t>>> shapes;
  for (int32_t d : or_default(contract.head_dims, {64, 128}))
    for (int32_t h : or_default(contract.heads, {8, 16, 32, 64}))
      if (h >= 1 && d >= 32 && d % 32 == 0 && (layout != CacheLayout::preshuffle || d == 128) &&
          profile_takes(profile, element, layout, h, d))
        shapes.emplace_back(1, std::make_pair(h, d));
  return shapes;
}

// The profiles (the contract's one, or all) that take the format with some (H, D) of the contract.
std::vector<std::string> profiles_for(const Contract& contract, ElementFormat element, CacheLayout layout) {
  std::vector<std::string> out;
  for (const std::string& name : contract.profile.empty() ? profile_names() : std::vector<std::string>{contract.profile})
    if (find_profile(name).accepts(element) && !shapes_of(contract, name, element, layout).empty()) out.push_back(name);
  return out;
}

// `exact` first (the simplest, and three times as likely), then the others.
std::vector<std::pair<int, std::string>> weighted_profiles(const std::vector<std::string>& names) {
  std::vector<std::pair<int, std::string>> out;
  for (const std::string& name : names) out.emplace_back(name == "exact" ? 3 : 1, name);
  std::stable_partition(out.begin(), out.end(), [](const auto& p) { return p.second == "exact"; });
  return out;
}

struct DecodeFormat {
  ElementFormat element;
  CacheLayout layout;
  std::vector<int32_t> page_sizes;    // the contract's page sizes this layout can hold (empty: any)
  std::vector<std::string> profiles;  // the profiles inside the contract that take it
};

std::vector<DecodeFormat> decode_formats(const Contract& contract) {
  std::vector<DecodeFormat> out;
  for (const auto& [element, layout] : {std::pair{ElementFormat::e4m3fn, CacheLayout::block_flat},
                                        std::pair{ElementFormat::e4m3fnuz, CacheLayout::block_flat},
                                        std::pair{ElementFormat::e4m3fnuz, CacheLayout::preshuffle},
                                        std::pair{ElementFormat::mxfp4, CacheLayout::mxfp4}}) {
    const auto& layouts = contract.cache_layouts;
    if (!layouts.empty() && std::find(layouts.begin(), layouts.end(), layout) == layouts.end()) continue;
    DecodeFormat f{element, layout, contract.page_sizes, {}};
    std::erase_if(f.page_sizes, [&](int32_t p) { return p < 1 || (layout == CacheLayout::preshuffle && p % 16 != 0); });
    if (!contract.page_sizes.empty() && f.page_sizes.empty()) continue;
    f.profiles = profiles_for(contract, element, layout);
    if (!f.profiles.empty()) out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::pair<int, ElementFormat>> prefill_elements(const Contract& contract) {
  std::vector<std::pair<int, ElementFormat>> out;
  for (const auto& [weight, element] : {std::pair{2, ElementFormat::e4m3fn}, std::pair{1, ElementFormat::e4m3fnuz}})
    if (!profiles_for(contract, element, CacheLayout::block_flat).empty()) out.emplace_back(weight, element);
  return out;
}

std::vector<std::string> prefill_profiles(const Contract& contract, ElementFormat element) {
  return profiles_for(contract, element, CacheLayout::block_flat);
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
    const Contract& contract = limits.draw;
    const std::vector<RequestDraw> requests = *gen_list(request, limits.max_rows);
    DecodeCase c;
    // The formats the contract's layouts, page sizes and profile leave (decode_formats), weighted.
    // The sparse form is MXFP4 under a profile with bf16 logits.
    std::vector<DecodeFormat> formats = decode_formats(contract);
    if (options.sparse_form) {
      std::erase_if(formats, [](const DecodeFormat& f) { return f.layout != CacheLayout::mxfp4; });
      for (DecodeFormat& f : formats)
        std::erase_if(f.profiles, [](const std::string& p) { return find_profile(p).logits != Precision::bf16; });
      std::erase_if(formats, [](const DecodeFormat& f) { return f.profiles.empty(); });
    }
    if (formats.empty()) throw std::logic_error("no decode format inside the contract " + describe(contract));
    std::vector<std::pair<int, size_t>> format_options;
    for (size_t i = 0; i < formats.size(); ++i)
      format_options.emplace_back(formats[i].element == ElementFormat::e4m3fn && formats[i].layout == CacheLayout::block_flat ? 2 : 1, i);
    const DecodeFormat& format = formats[*pick(format_options)];
    c.element = format.element;
    c.layout = format.layout;
    c.block_size = *pick(allowed(format.layout == CacheLayout::preshuffle
                                     ? std::vector<std::pair<int, int32_t>>{{1, 16}, {1, 32}, {1, 64}, {1, 256}}
                                     : std::vector<std::pair<int, int32_t>>{{3, 16}, {2, 1}, {1, 2}, {1, 32}, {3, 64}, {1, 256}},
                                 format.page_sizes));
    c.compress_ratio = *pick<int32_t>({{2, 1}, {1, 4}});
    c.next_n = std::min<int32_t>(
        *pick<int32_t>(next_n_within({{4, 1}, {3, 2}, {1, 3}, {1, 4}, {1, 6}, {1, 8}}, contract)), kMaxNextN);
    const bool can_pad = contract.lens_1d && contract.max_next_n >= 2;
    c.padded = can_pad && (options.padded_only || (c.next_n > 1 && *pick<int>({{3, 0}, {1, 1}}) == 1));
    if (c.padded && c.next_n == 1) c.next_n = 2;
    c.lens_2d = !c.padded && (!contract.lens_1d || (contract.lens_2d && *pick<bool>({{3, false}, {1, true}})));
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
    c.profile = *pick<std::string>(weighted_profiles(format.profiles));
    std::tie(c.heads, c.head_dim) = *pick(shapes_of(contract, c.profile, c.element, c.layout));
    c.candidate_block_size = *pick(allowed<int32_t>(options.sparse_form
                                                         ? std::vector<std::pair<int, int32_t>>{{1, 8}, {1, 16}, {1, 32}, {1, 64}}
                                                         : std::vector<std::pair<int, int32_t>>{{1, 8}, {1, 1}, {1, 4}, {1, 16}},
                                                     contract.candidate_block_sizes));
    c.candidate_slots = *pick<int32_t>({4, 1, 2, 16, 64});
    c.topk = *pick<int32_t>(allowed<int32_t>({{3, 8}, {1, 1}, {1, 3}, {2, 32}, {1, 512}}, contract.k_values));
    c.seed = *gen_seed();

    const int64_t cap = decode_product_limit(c, limits) / (int64_t(c.heads) * c.head_dim);  // entries of one row
    for (const RequestDraw& d : requests) {
      DecodeRequest q;
      if (c.lens_2d) {
        for (int32_t j = 0; j < c.next_n; ++j)
          q.row_lens.push_back(int32_t(d.row_lens[size_t(j)].resolve(c.next_n, c.block_size, cap)));
        rise(q.row_lens, contract);
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
  }), limits.draw);
}

rc::Gen<PrefillCase> gen_prefill_case(const GenLimits& limits) {
  return polished<PrefillCase>(rc::gen::exec([limits] {
    const Contract& contract = limits.draw;
    PrefillCase c;
    const std::vector<std::pair<int, ElementFormat>> elements = prefill_elements(contract);
    if (elements.empty()) throw std::logic_error("no prefill format inside the contract " + describe(contract));
    c.element = *pick(elements);
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
    c.profile = *pick<std::string>(weighted_profiles(prefill_profiles(contract, c.element)));
    std::tie(c.heads, c.head_dim) = *pick(shapes_of(contract, c.profile, c.element, CacheLayout::block_flat));
    c.seed = *gen_seed();
    const bool model = c.profile != "exact";
    const int64_t cap =
        (model ? limits.model_products : limits.exact_products) / (int64_t(c.heads) * c.head_dim);
    auto row = rc::gen::exec([=] {
      PrefillRow r;
      r.ks = contract.row_starts
                 ? *pick_gen<int64_t>({{3, rc::gen::just<int64_t>(0)}, {1, rc::gen::inRange<int64_t>(0, 300)}})
                 : 0;
      r.len = *gen_length(64, 64, cap);
      r.seed = *gen_seed();
      return r;
    });
    c.rows = *gen_list(row, 16);
    // After the rows, so that a shrink drops rows before it tries these (each try runs the whole case).
    c.candidate_block_size = *pick(allowed<int32_t>({{1, 8}, {1, 1}, {1, 4}, {1, 16}}, contract.candidate_block_sizes));
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
  }), limits.draw);
}

}  // namespace dsa::fuzz
