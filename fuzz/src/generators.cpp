// RapidCheck generators of cases. Choices are drawn with `pick` (an index that
// shrinks towards the first, simplest option) rather than gen::element, whose
// choices never shrink; lists of rows and requests shrink by dropping any
// element; lengths shrink towards 0 through the simplest length class.
#include "dsa/fuzz/generators.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "dsa/logits.hpp"
#include "dsa/profile.hpp"

namespace dsa::fuzz {
namespace {

constexpr int kFullSize = 100;  // rapidcheck's nominal size: the whole range

// One of `options`, weighted; shrinks towards options[0].
template <class T>
rc::Gen<T> pick(std::vector<std::pair<int, T>> options) {
  std::vector<T> expanded;
  for (auto& [weight, value] : options)
    for (int i = 0; i < weight; ++i) expanded.push_back(value);
  const auto n = expanded.size();
  return rc::gen::map(rc::gen::resize(kFullSize, rc::gen::inRange<size_t>(0, n)),
                      [expanded = std::move(expanded)](size_t i) { return expanded[i]; });
}

template <class T>
rc::Gen<T> pick(std::initializer_list<T> options) {
  std::vector<std::pair<int, T>> weighted;
  for (const T& v : options) weighted.emplace_back(1, v);
  return pick(std::move(weighted));
}

// One of several generators, weighted; shrinks towards the first, then inside it.
template <class T>
rc::Gen<T> pick_gen(std::vector<std::pair<int, rc::Gen<T>>> options) {
  std::vector<rc::Gen<T>> expanded;
  for (auto& [weight, gen] : options)
    for (int i = 0; i < weight; ++i) expanded.push_back(gen);
  const auto n = expanded.size();
  return rc::gen::mapcat(rc::gen::resize(kFullSize, rc::gen::inRange<size_t>(0, n)),
                         [expanded = std::move(expanded)](size_t i) { return expanded[i]; });
}

// A seed of a row, request or case: shrinks towards 0.
rc::Gen<uint32_t> gen_seed() { return rc::gen::resize(kFullSize, rc::gen::inRange<uint32_t>(0, 1u << 20)); }

// A list of 1..max_count elements that shrinks by dropping any of them.
template <class T>
rc::Gen<std::vector<T>> gen_list(rc::Gen<T> element, int32_t max_count) {
  return rc::gen::map(rc::gen::nonEmpty(rc::gen::container<std::vector<T>>(std::move(element))),
                      [max_count](std::vector<T> v) {
                        if (int32_t(v.size()) > max_count) v.resize(size_t(max_count));
                        return v;
                      });
}

rc::Gen<ValueKind> gen_value_kind() {
  return pick<ValueKind>({{6, ValueKind::normal},
                          {4, ValueKind::few_levels},
                          {2, ValueKind::constant},
                          {3, ValueKind::mostly_neg_inf},
                          {3, ValueKind::one_coarse_bin},
                          {2, ValueKind::nan_heavy},
                          {2, ValueKind::extremes},
                          {3, ValueKind::small_integers},
                          {2, ValueKind::bf16_valued}});
}

rc::Gen<TailKind> gen_tail() { return pick<TailKind>({{3, TailKind::garbage}, {1, TailKind::neg_inf}}); }

rc::Gen<int32_t> gen_k() {
  return pick_gen<int32_t>({{8, pick<int32_t>({1, 2, 3, 4, 8, 16, 64, 100, 512, 2048})},
                            {2, rc::gen::inRange<int32_t>(1, 2049)}});
}

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

// Scales every length down by the same factor when a case is over its budget.
int64_t scaled(int64_t len, double factor) { return int64_t(std::floor(double(len) * factor)); }

}  // namespace

rc::Gen<int64_t> gen_length(int64_t k, int64_t page, int64_t cap) {
  page = std::max<int64_t>(page, 1);
  auto clamp = [cap](int64_t v) { return std::clamp<int64_t>(v, 0, cap); };
  auto at = [clamp](int64_t v) { return rc::gen::just(clamp(v)); };
  auto boundary = [=](int64_t delta) {
    return rc::gen::map(rc::gen::inRange<int64_t>(1, 5), [=](int64_t m) { return clamp(m * page + delta); });
  };
  return pick_gen<int64_t>({
      {2, at(0)},
      {2, at(1)},
      {3, at(k - 1)},
      {3, at(k)},
      {3, at(k + 1)},
      {2, boundary(0)},
      {2, boundary(1)},
      {1, boundary(-1)},
      {5, rc::gen::map(rc::gen::inRange<int64_t>(0, 2 * k + 65), clamp)},
      {2, pick<int64_t>({2048, 2049, 4096, 16384, 16385, 32768, 65536, 131072, 131073, 262144})},
      {2, rc::gen::map(rc::gen::inRange<int64_t>(0, cap + 1), clamp)},
  });
}

rc::Gen<TopkCase> gen_topk_case(const GenLimits& limits) {
  return rc::gen::exec([limits] {
    TopkCase c;
    c.k = *gen_k();
    c.tail = *gen_tail();
    c.seed = *gen_seed();
    c.width_pad = *pick<int64_t>({0, 1, 7, 64, 300});
    const bool offsets = *pick<bool>({{3, false}, {1, true}});
    const int64_t cap = limits.logits_elements;
    const int32_t k = c.k;
    auto row = rc::gen::exec([=] {
      TopkRow r;
      r.len = *gen_length(k, 2048, cap);
      r.values = *gen_value_kind();
      r.seed = *gen_seed();
      r.start = offsets ? *pick<int64_t>({0, 1, 5, 100, 3000}) : 0;
      return r;
    });
    c.rows = *gen_list(row, limits.max_rows);
    int64_t width = 0;
    for (const auto& r : c.rows) width = std::max(width, r.start + r.len);
    const int64_t elements = int64_t(c.rows.size()) * (width + c.width_pad);
    if (elements > limits.logits_elements) {
      const double f = double(limits.logits_elements) / double(elements);
      for (auto& r : c.rows) r.start = scaled(r.start, f), r.len = scaled(r.len, f);
    }
    return c;
  });
}

rc::Gen<CandidateCase> gen_candidate_case(const GenLimits& limits) {
  return rc::gen::exec([limits] {
    CandidateCase c;
    c.next_n = *pick<int32_t>({{4, 1}, {3, 2}, {1, 3}, {1, 4}, {1, 8}});
    c.lens_2d = *pick<bool>({false, true});
    c.block_size = *pick<int32_t>({{4, 8}, {2, 1}, {1, 2}, {2, 4}, {2, 16}, {1, 3}});
    c.slots = *pick<int32_t>({{3, 4}, {2, 1}, {2, 2}, {2, 8}, {2, 16}, {1, 64}, {1, 2048}});
    c.k = *pick_gen<int32_t>({{5, pick<int32_t>({4, 1, 2, 8, 16, 64, 512})}, {1, rc::gen::inRange<int32_t>(1, 600)}});
    c.tail = *gen_tail();
    c.source = *pick<CandidateSource>({{2, CandidateSource::selected}, {1, CandidateSource::drawn}});
    c.seed = *gen_seed();
    c.width_pad = *pick<int64_t>({0, 1, 8, 100});
    const int64_t capacity = int64_t(c.block_size) * c.slots;  // columns the candidates can hold
    const int32_t next_n = c.next_n, S = c.block_size;
    const bool lens_2d = c.lens_2d;
    const int64_t cap = limits.logits_elements;
    auto length = pick_gen<int64_t>({{3, gen_length(c.k, S, cap)}, {2, gen_length(capacity, S, cap)}});
    auto request = rc::gen::exec([=] {
      CandidateRequest q;
      if (lens_2d)
        q.row_lens = *rc::gen::container<std::vector<int64_t>>(size_t(next_n), length);
      else
        q.len = *length;
      q.values = *gen_value_kind();
      q.seed = *gen_seed();
      return q;
    });
    c.requests = *gen_list(request, std::max(1, limits.max_rows / c.next_n));
    int64_t width = 0;
    for (const auto& q : c.requests) {
      width = std::max(width, q.len);
      for (int64_t l : q.row_lens) width = std::max(width, l);
    }
    const int64_t elements = int64_t(c.requests.size()) * c.next_n * (width + c.width_pad);
    if (elements > limits.logits_elements) {
      const double f = double(limits.logits_elements) / double(elements);
      for (auto& q : c.requests) {
        q.len = scaled(q.len, f);
        for (auto& l : q.row_lens) l = scaled(l, f);
      }
    }
    return c;
  });
}

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
  return rc::gen::exec([limits, options] {
    DecodeCase c;
    enum Format { fn_flat, fnuz_flat, fnuz_preshuffle, mxfp4 };
    const Format format = *pick<Format>({{4, fn_flat}, {2, fnuz_flat}, {2, fnuz_preshuffle}, {2, mxfp4}});
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
    for (const std::string& name : profile_names())
      if (find_profile(name).accepts(c.element)) profiles.emplace_back(name == "exact" ? 3 : 1, name);
    std::stable_partition(profiles.begin(), profiles.end(), [](const auto& p) { return p.second == "exact"; });
    c.profile = *pick<std::string>(profiles);
    std::vector<std::pair<int, std::pair<int32_t, int32_t>>> shapes;  // (H, D) the profile takes
    for (int32_t d : {64, 128})
      for (int32_t h : {8, 16, 32, 64})
        if ((format != fnuz_preshuffle || d == 128) && profile_takes(c.profile, c.element, c.layout, h, d))
          shapes.emplace_back(1, std::make_pair(h, d));
    if (shapes.empty()) throw std::logic_error("profile " + c.profile + " takes no (H, D) of the fuzzer's");
    std::tie(c.heads, c.head_dim) = *pick(shapes);
    c.candidate_block_size = *pick<int32_t>({8, 1, 4, 16});
    c.candidate_slots = *pick<int32_t>({4, 1, 2, 16, 64});
    c.seed = *gen_seed();

    const int32_t next_n = c.next_n, page = c.block_size, ratio = c.compress_ratio;
    const bool lens_2d = c.lens_2d, padded = c.padded;
    const int64_t cap = decode_product_limit(c, limits) / (int64_t(c.heads) * c.head_dim);  // entries of one row
    auto entries = gen_length(next_n, page, cap);
    auto request = rc::gen::exec([=] {
      DecodeRequest q;
      if (lens_2d) {
        for (int64_t l : *rc::gen::container<std::vector<int64_t>>(size_t(next_n), entries))
          q.row_lens.push_back(int32_t(l));
      } else {
        q.tokens = int32_t(*entries * ratio + (ratio > 1 ? *rc::gen::inRange<int32_t>(0, ratio) : 0));
      }
      if (padded) q.decode_len = *rc::gen::inRange<int32_t>(1, next_n + 1);
      q.seed = *gen_seed();
      return q;
    });
    c.requests = *gen_list(request, limits.max_rows);
    const int64_t work = decode_products(c), limit = decode_product_limit(c, limits);
    if (work > limit) {
      const double f = double(limit) / double(work);
      for (auto& q : c.requests) {
        q.tokens = int32_t(scaled(q.tokens, f));
        for (auto& l : q.row_lens) l = int32_t(scaled(l, f));
      }
    }
    return c;
  });
}

rc::Gen<PrefillCase> gen_prefill_case(const GenLimits& limits) {
  return rc::gen::exec([limits] {
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
    int64_t work = 0, num_k = 0;
    for (const auto& r : c.rows) work += r.len, num_k = std::max(num_k, r.ks + r.len);
    if (work > cap) {
      const double f = double(cap) / double(work);
      num_k = 0;
      for (auto& r : c.rows) r.len = scaled(r.len, f), num_k = std::max(num_k, r.ks + r.len);
    }
    c.num_k = num_k + *pick<int64_t>({0, 1, 37});
    return c;
  });
}

}  // namespace dsa::fuzz
