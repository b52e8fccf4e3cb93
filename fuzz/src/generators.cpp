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
// A seed of a row, request or case. It never shrinks: another seed is other
// data, not simpler data, and each try would cost a whole evaluation.
rc::Gen<uint32_t> gen_seed() {
  return rc::gen::noShrink(rc::gen::resize(kFullSize, rc::gen::inRange<uint32_t>(0, 1u << 20)));
}

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

namespace {

// A length drawn before the sizes it refers to (k, the page) are known, so
// that the rows can be the first thing a case draws and the first thing it
// shrinks (RapidCheck shrinks an exec's picks in order).
struct LengthDraw {
  enum Class : uint8_t {
    zero, one, k_minus_1, k, k_plus_1, pages, pages_plus_1, pages_minus_1, around_k, landmark, any,
    exact,  // only as a shrink of a landmark: the value itself
  };
  Class cls = zero;
  int64_t value = 0;  // pages: the multiple; around_k: per mille of 2k + 64; landmark: the size; any: per 2^20 of cap

  int64_t resolve(int64_t k_, int64_t page, int64_t cap) const {
    page = std::max<int64_t>(page, 1);
    int64_t v = 0;
    switch (cls) {
      case zero: v = 0; break;
      case one: v = 1; break;
      case k_minus_1: v = k_ - 1; break;
      case k: v = k_; break;
      case k_plus_1: v = k_ + 1; break;
      case pages: v = value * page; break;
      case pages_plus_1: v = value * page + 1; break;
      case pages_minus_1: v = value * page - 1; break;
      case around_k: v = value * (2 * k_ + 64) / 1000; break;
      case landmark:
      case exact: v = value; break;
      case any: v = int64_t(double(value) / double(1 << 20) * double(cap)); break;
    }
    return std::clamp<int64_t>(v, 0, cap);
  }
};

rc::Gen<LengthDraw> gen_length_draw() {
  using L = LengthDraw;
  auto fixed = [](L::Class cls) { return rc::gen::just(L{cls, 0}); };
  auto with = [](L::Class cls, rc::Gen<int64_t> value) {
    return rc::gen::map(std::move(value), [cls](int64_t v) { return L{cls, v}; });
  };
  auto draw = pick_gen<L>({
      {2, fixed(L::zero)},
      {2, fixed(L::one)},
      {3, fixed(L::k_minus_1)},
      {3, fixed(L::k)},
      {3, fixed(L::k_plus_1)},
      {2, with(L::pages, rc::gen::inRange<int64_t>(1, 5))},
      {2, with(L::pages_plus_1, rc::gen::inRange<int64_t>(1, 5))},
      {1, with(L::pages_minus_1, rc::gen::inRange<int64_t>(1, 5))},
      {5, with(L::around_k, rc::gen::inRange<int64_t>(0, 1001))},
      {2, with(L::landmark, pick<int64_t>({2048, 2049, 4096, 16384, 16385, 32768, 65536, 131072, 131073, 262144}))},
      {2, with(L::any, rc::gen::inRange<int64_t>(0, (1 << 20) + 1))},
  });
  // A landmark (2049, 16385, ...) shrinks on to any smaller exact length: the
  // bug it found may need far fewer columns.
  return rc::gen::shrink(std::move(draw), [](const L& d) {
    if (d.cls != L::landmark) return rc::Seq<L>();
    return rc::seq::map(rc::shrink::towards<int64_t>(d.value, 0), [](int64_t v) { return L{L::exact, v}; });
  });
}

// The last polish of a shrink. RapidCheck shrinks the draws (a length class,
// a multiple of a page); once none of those fails any more, these shrink the
// case itself: drop a row or request, shorten one length towards 0, lower k.
// A value they produce shrinks only by them from then on.
template <class T>
std::vector<T> towards(T value, T target) {
  std::vector<T> out;
  rc::Seq<T> seq = rc::shrink::towards(value, target);
  while (auto v = seq.next()) out.push_back(*v);
  return out;
}

template <class Case, class Item>
void drop_each(const Case& c, std::vector<Item> Case::*items, std::vector<Case>& out) {
  if ((c.*items).size() < 2) return;
  for (size_t i = 0; i < (c.*items).size(); ++i) {
    Case d = c;
    (d.*items).erase((d.*items).begin() + int64_t(i));
    out.push_back(std::move(d));
  }
}

std::vector<TopkCase> polish(const TopkCase& c) {
  std::vector<TopkCase> out;
  drop_each(c, &TopkCase::rows, out);
  for (size_t i = 0; i < c.rows.size(); ++i)
    for (int64_t len : towards<int64_t>(c.rows[i].len, 0)) {
      TopkCase d = c;
      d.rows[i].len = len;
      out.push_back(std::move(d));
    }
  for (int32_t k : towards<int32_t>(c.k, 1)) {
    TopkCase d = c;
    d.k = k;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<CandidateCase> polish(const CandidateCase& c) {
  std::vector<CandidateCase> out;
  drop_each(c, &CandidateCase::requests, out);
  for (size_t i = 0; i < c.requests.size(); ++i) {
    for (int64_t len : towards<int64_t>(c.requests[i].len, 0)) {
      CandidateCase d = c;
      d.requests[i].len = len;
      out.push_back(std::move(d));
    }
    for (size_t j = 0; j < c.requests[i].row_lens.size(); ++j)
      for (int64_t len : towards<int64_t>(c.requests[i].row_lens[j], 0)) {
        CandidateCase d = c;
        d.requests[i].row_lens[j] = len;
        out.push_back(std::move(d));
      }
  }
  for (int32_t k : towards<int32_t>(c.k, 1)) {
    CandidateCase d = c;
    d.k = k;
    out.push_back(std::move(d));
  }
  // Fewer rows per request: 2-D lengths lose one row position in every request.
  for (int32_t j = 0; j < c.next_n && c.next_n > 1; ++j) {
    CandidateCase d = c;
    d.next_n = c.next_n - 1;
    if (c.lens_2d)
      for (auto& q : d.requests) q.row_lens.erase(q.row_lens.begin() + j);
    out.push_back(std::move(d));
    if (!c.lens_2d) break;
  }
  return out;
}

std::vector<DecodeCase> polish(const DecodeCase& c) {
  std::vector<DecodeCase> out;
  drop_each(c, &DecodeCase::requests, out);
  for (size_t i = 0; i < c.requests.size(); ++i) {
    for (int32_t tokens : towards<int32_t>(c.requests[i].tokens, 0)) {
      DecodeCase d = c;
      d.requests[i].tokens = tokens;
      out.push_back(std::move(d));
    }
    for (size_t j = 0; j < c.requests[i].row_lens.size(); ++j)
      for (int32_t len : towards<int32_t>(c.requests[i].row_lens[j], 0)) {
        DecodeCase d = c;
        d.requests[i].row_lens[j] = len;
        out.push_back(std::move(d));
      }
  }
  for (int32_t j = 0; j < c.next_n && c.next_n > (c.padded ? 2 : 1); ++j) {
    DecodeCase d = c;
    d.next_n = c.next_n - 1;
    for (auto& q : d.requests) {
      if (c.lens_2d) q.row_lens.erase(q.row_lens.begin() + j);
      q.decode_len = std::min(q.decode_len, d.next_n);
    }
    out.push_back(std::move(d));
    if (!c.lens_2d) break;
  }
  return out;
}

std::vector<PrefillCase> polish(const PrefillCase& c) {
  std::vector<PrefillCase> out;
  drop_each(c, &PrefillCase::rows, out);
  for (size_t i = 0; i < c.rows.size(); ++i)
    for (int64_t len : towards<int64_t>(c.rows[i].len, 0)) {
      PrefillCase d = c;
      d.rows[i].len = len;
      out.push_back(std::move(d));
    }
  return out;
}

template <class Case>
rc::Gen<Case> polished(rc::Gen<Case> gen) {
  return rc::gen::shrink(std::move(gen), [](const Case& c) { return rc::seq::fromContainer(polish(c)); });
}

// A row's window start: 0 for decode rows, an offset for prefill-like rows.
rc::Gen<int64_t> gen_start() { return pick<int64_t>({{6, 0}, {1, 1}, {1, 5}, {1, 100}, {1, 3000}}); }

}  // namespace

rc::Gen<int64_t> gen_length(int64_t k, int64_t page, int64_t cap) {
  return rc::gen::map(gen_length_draw(), [=](const LengthDraw& d) { return d.resolve(k, page, cap); });
}

rc::Gen<TopkCase> gen_topk_case(const GenLimits& limits) {
  struct RowDraw {
    LengthDraw len;
    ValueKind values;
    uint32_t seed;
    int64_t start;
  };
  auto row = rc::gen::build<RowDraw>(rc::gen::set(&RowDraw::len, gen_length_draw()),
                                     rc::gen::set(&RowDraw::values, gen_value_kind()),
                                     rc::gen::set(&RowDraw::seed, gen_seed()),
                                     rc::gen::set(&RowDraw::start, gen_start()));
  return polished<TopkCase>(rc::gen::exec([limits, row] {
    const std::vector<RowDraw> rows = *gen_list(row, limits.max_rows);
    TopkCase c;
    c.k = *gen_k();
    c.tail = *gen_tail();
    c.seed = *gen_seed();
    c.width_pad = *pick<int64_t>({0, 1, 7, 64, 300});
    for (const RowDraw& d : rows)
      c.rows.push_back({d.start, d.len.resolve(c.k, 2048, limits.logits_elements), d.values, d.seed});
    int64_t width = 0;
    for (const auto& r : c.rows) width = std::max(width, r.start + r.len);
    const int64_t elements = int64_t(c.rows.size()) * (width + c.width_pad);
    if (elements > limits.logits_elements) {
      const double f = double(limits.logits_elements) / double(elements);
      for (auto& r : c.rows) r.start = scaled(r.start, f), r.len = scaled(r.len, f);
    }
    return c;
  }));
}

rc::Gen<CandidateCase> gen_candidate_case(const GenLimits& limits) {
  static constexpr int kMaxNextN = 8;
  struct RequestDraw {
    bool against_capacity;  // lengths around S * C (the columns the candidates hold) rather than k
    LengthDraw len;
    std::vector<LengthDraw> row_lens;  // kMaxNextN; the first next_n are used
    ValueKind values;
    uint32_t seed;
  };
  auto request = rc::gen::build<RequestDraw>(
      rc::gen::set(&RequestDraw::against_capacity, pick<bool>({{3, false}, {2, true}})),
      rc::gen::set(&RequestDraw::len, gen_length_draw()),
      rc::gen::set(&RequestDraw::row_lens, rc::gen::container<std::vector<LengthDraw>>(kMaxNextN, gen_length_draw())),
      rc::gen::set(&RequestDraw::values, gen_value_kind()), rc::gen::set(&RequestDraw::seed, gen_seed()));
  return polished<CandidateCase>(rc::gen::exec([limits, request] {
    const std::vector<RequestDraw> requests = *gen_list(request, limits.max_rows);
    CandidateCase c;
    c.next_n = *pick<int32_t>({{4, 1}, {3, 2}, {1, 3}, {1, 4}, {1, kMaxNextN}});
    c.lens_2d = *pick<bool>({false, true});
    c.block_size = *pick<int32_t>({{4, 8}, {2, 1}, {1, 2}, {2, 4}, {2, 16}, {1, 3}});
    c.slots = *pick<int32_t>({{3, 4}, {2, 1}, {2, 2}, {2, 8}, {2, 16}, {1, 64}, {1, 2048}});
    c.k = *pick_gen<int32_t>({{5, pick<int32_t>({4, 1, 2, 8, 16, 64, 512})}, {1, rc::gen::inRange<int32_t>(1, 600)}});
    c.tail = *gen_tail();
    c.source = *pick<CandidateSource>({{2, CandidateSource::selected}, {1, CandidateSource::drawn}});
    c.seed = *gen_seed();
    c.width_pad = *pick<int64_t>({0, 1, 8, 100});
    const int64_t capacity = int64_t(c.block_size) * c.slots;
    const int64_t cap = limits.logits_elements;
    for (size_t b = 0; b < requests.size() && int64_t(b) * c.next_n < limits.max_rows; ++b) {
      const RequestDraw& d = requests[b];
      const int64_t around = d.against_capacity ? capacity : c.k;
      CandidateRequest q;
      if (c.lens_2d)
        for (int32_t j = 0; j < c.next_n; ++j) q.row_lens.push_back(d.row_lens[size_t(j)].resolve(around, c.block_size, cap));
      else
        q.len = d.len.resolve(around, c.block_size, cap);
      q.values = d.values;
      q.seed = d.seed;
      c.requests.push_back(std::move(q));
    }
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
  }));
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
