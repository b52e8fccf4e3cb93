// Cases as JSON (the replay string) and in a compact human form.
#include <algorithm>
#include <array>
#include <limits>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsa/dataset/json_input.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/cases.hpp"

namespace dsa::fuzz {
namespace {

using nlohmann::json;

template <class E>
struct EnumNames;
template <>
struct EnumNames<ValueKind> {
  static constexpr std::array<std::string_view, 10> names = {"normal",         "few_levels",     "constant",
                                                             "mostly_neg_inf", "one_coarse_bin", "nan_heavy",
                                                             "extremes",       "small_integers", "bf16_valued",
                                                             "below_fp16"};
};
template <>
struct EnumNames<TailKind> {
  static constexpr std::array<std::string_view, 2> names = {"neg_inf", "garbage"};
};
template <>
struct EnumNames<CandidateSource> {
  static constexpr std::array<std::string_view, 2> names = {"selected", "drawn"};
};
template <>
struct EnumNames<CodeKind> {
  static constexpr std::array<std::string_view, 6> names = {"quantized_normal", "few_levels",    "constant",
                                                            "random_codes",     "extreme_codes", "subnormal_codes"};
};
template <>
struct EnumNames<ScaleKind> {
  static constexpr std::array<std::string_view, 6> names = {"quantizer", "ue8m0", "tiny", "huge", "zero", "mixed"};
};
template <>
struct EnumNames<WeightKind> {
  static constexpr std::array<std::string_view, 4> names = {"normal", "extreme", "zero", "positive"};
};
template <>
struct EnumNames<PageTableKind> {
  static constexpr std::array<std::string_view, 4> names = {"contiguous", "shuffled", "shared", "non_contiguous"};
};

template <class E>
std::string name(E e) {
  return std::string(EnumNames<E>::names.at(size_t(e)));
}

template <class E>
E parse(const json& j, const char* field) {
  if (!j.is_string()) throw InvalidInput("replay", std::string(field) + ": " + dataset::json_excerpt(j) + " is not a name");
  const std::string& s = j.get_ref<const std::string&>();
  const auto& names = EnumNames<E>::names;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == s) return E(i);
  throw InvalidInput("replay", std::string(field) + ": unknown value '" + excerpt(s) + "'");
}

// One value, converted only when it fits: nlohmann would wrap 2^32 + 1 into
// an int32 1 and truncate 2.5 to 2, replaying another case than the one written.
template <class T>
T value_of(const json& v, const std::string& where) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) throw InvalidInput("replay", where + ": " + dataset::json_excerpt(v) + " is not true or false");
    return v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(std::numeric_limits<T>::max())
                      : v.is_number_integer() ? std::is_signed_v<T> && v.get<int64_t>() >= int64_t(std::numeric_limits<T>::min()) &&
                                                    v.get<int64_t>() <= int64_t(std::numeric_limits<T>::max())
                                              : false;
    if (!fits)
      throw InvalidInput("replay", where + ": " + dataset::json_excerpt(v) + " is not an integer in [" +
                                       std::to_string(std::numeric_limits<T>::min()) + ", " +
                                       std::to_string(std::numeric_limits<T>::max()) + "]");
    return v.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) throw InvalidInput("replay", where + ": " + dataset::json_excerpt(v) + " is not a string");
    return v.get<std::string>();
  } else if constexpr (std::is_same_v<T, json>) {
    return v;
  } else {
    if (!v.is_array()) throw InvalidInput("replay", where + ": " + dataset::json_excerpt(v) + " is not an array");
    T out;
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(value_of<typename T::value_type>(v[i], where + "[" + std::to_string(i) + "]"));
    return out;
  }
}

template <class T>
T field(const json& j, const char* key) {
  if (!j.contains(key)) throw InvalidInput("replay", std::string("missing field '") + key + "'");
  return value_of<T>(j.at(key), std::string("field '") + key + "'");
}

// A field added after replay strings were first printed: absent in old ones.
template <class T>
T field_or(const json& j, const char* key, T absent) {
  return j.contains(key) ? field<T>(j, key) : absent;
}

template <class E>
E enum_field(const json& j, const char* key) {
  if (!j.contains(key)) throw InvalidInput("replay", std::string("missing field '") + key + "'");
  return parse<E>(j.at(key), key);
}

json case_json(const TopkCase& c) {
  json rows = json::array();
  for (const auto& r : c.rows) rows.push_back({r.start, r.len, name(r.values), r.seed});
  return {{"kind", "topk"}, {"k", c.k}, {"width_pad", c.width_pad}, {"tail", name(c.tail)}, {"seed", c.seed},
          {"rows", rows}};
}

json case_json(const CandidateCase& c) {
  json reqs = json::array();
  for (const auto& q : c.requests) reqs.push_back({q.len, q.row_lens, name(q.values), q.seed});
  return {{"kind", "candidate"}, {"next_n", c.next_n}, {"lens_2d", c.lens_2d}, {"block_size", c.block_size},
          {"slots", c.slots},    {"k", c.k},           {"width_pad", c.width_pad}, {"tail", name(c.tail)},
          {"source", name(c.source)}, {"seed", c.seed}, {"requests", reqs}};
}

json case_json(const DecodeCase& c) {
  json reqs = json::array();
  for (const auto& q : c.requests) reqs.push_back({q.tokens, q.row_lens, q.decode_len, q.seed});
  return {{"kind", "decode"},
          {"next_n", c.next_n},
          {"heads", c.heads},
          {"head_dim", c.head_dim},
          {"element", std::string(to_string(c.element))},
          {"layout", std::string(to_string(c.layout))},
          {"block_size", c.block_size},
          {"compress_ratio", c.compress_ratio},
          {"lens_2d", c.lens_2d},
          {"padded", c.padded},
          {"page_table", name(c.page_table)},
          {"spare_pages", c.spare_pages},
          {"extra_table_pages", c.extra_table_pages},
          {"width_pad", c.width_pad},
          {"q_codes", name(c.q_codes)},
          {"k_codes", name(c.k_codes)},
          {"k_scales", name(c.k_scales)},
          {"weights", name(c.weights)},
          {"profile", c.profile},
          {"candidate_block_size", c.candidate_block_size},
          {"candidate_slots", c.candidate_slots},
          {"topk", c.topk},
          {"seed", c.seed},
          {"requests", reqs}};
}

json case_json(const PrefillCase& c) {
  json rows = json::array();
  for (const auto& r : c.rows) rows.push_back({r.ks, r.len, r.seed});
  return {{"kind", "prefill"},           {"heads", c.heads},
          {"head_dim", c.head_dim},      {"element", std::string(to_string(c.element))},
          {"num_k", c.num_k},            {"q_codes", name(c.q_codes)},
          {"k_codes", name(c.k_codes)},  {"k_scales", name(c.k_scales)},
          {"weights", name(c.weights)},  {"profile", c.profile},
          {"candidate_block_size", c.candidate_block_size},
          {"candidate_slots", c.candidate_slots},
          {"seed", c.seed},              {"rows", rows}};
}

const json& tuple_item(const json& t, size_t i, const char* what) {
  if (!t.is_array() || t.size() <= i) throw InvalidInput("replay", std::string("malformed ") + what + " entry");
  return t[i];
}

template <class T>
T tuple_get(const json& t, size_t i, const char* what) {
  return value_of<T>(tuple_item(t, i, what), std::string(what) + " entry item " + std::to_string(i));
}

const json& array_field(const json& j, const char* key) {
  if (!j.contains(key)) throw InvalidInput("replay", std::string("missing field '") + key + "'");
  const json& v = j.at(key);
  if (!v.is_array()) throw InvalidInput("replay", std::string("field '") + key + "': " + dataset::json_excerpt(v) + " is not an array");
  return v;
}

std::string values_text(const float* v, int64_t n) {
  std::string s;
  for (int64_t i = 0; i < n; ++i) s += (i ? " " : "") + fmt::format("{}", v[i]);
  return s;
}

constexpr int64_t kShownColumns = 64;
constexpr int64_t kShownRows = 8;

}  // namespace

std::string kind_name(const FuzzCase& c) {
  static constexpr const char* names[] = {"topk", "candidate", "decode", "prefill"};
  return names[c.index()];
}

nlohmann::json to_json(const FuzzCase& c) {
  return std::visit([](const auto& x) { return case_json(x); }, c);
}

namespace {

FuzzCase parse_case(const nlohmann::json& j) {
  if (!j.is_object()) throw InvalidInput("replay", "a case is a JSON object");
  const std::string kind = field<std::string>(j, "kind");
  if (kind == "topk") {
    TopkCase c;
    c.k = field<int32_t>(j, "k");
    c.width_pad = field<int64_t>(j, "width_pad");
    c.tail = enum_field<TailKind>(j, "tail");
    c.seed = field<uint64_t>(j, "seed");
    for (const auto& r : array_field(j, "rows"))
      c.rows.push_back({tuple_get<int64_t>(r, 0, "rows"), tuple_get<int64_t>(r, 1, "rows"),
                        parse<ValueKind>(tuple_item(r, 2, "rows"), "rows"), tuple_get<uint32_t>(r, 3, "rows")});
    return c;
  }
  if (kind == "candidate") {
    CandidateCase c;
    c.next_n = field<int32_t>(j, "next_n");
    c.lens_2d = field<bool>(j, "lens_2d");
    c.block_size = field<int32_t>(j, "block_size");
    c.slots = field<int32_t>(j, "slots");
    c.k = field<int32_t>(j, "k");
    c.width_pad = field<int64_t>(j, "width_pad");
    c.tail = enum_field<TailKind>(j, "tail");
    c.source = enum_field<CandidateSource>(j, "source");
    c.seed = field<uint64_t>(j, "seed");
    for (const auto& r : array_field(j, "requests"))
      c.requests.push_back({tuple_get<int64_t>(r, 0, "requests"), tuple_get<std::vector<int64_t>>(r, 1, "requests"),
                            parse<ValueKind>(tuple_item(r, 2, "requests"), "requests"),
                            tuple_get<uint32_t>(r, 3, "requests")});
    return c;
  }
  if (kind == "decode") {
    DecodeCase c;
    c.next_n = field<int32_t>(j, "next_n");
    c.heads = field<int32_t>(j, "heads");
    c.head_dim = field<int32_t>(j, "head_dim");
    c.element = parse_element_format(field<std::string>(j, "element"));
    c.layout = parse_cache_layout(field<std::string>(j, "layout"));
    c.block_size = field<int32_t>(j, "block_size");
    c.compress_ratio = field<int32_t>(j, "compress_ratio");
    c.lens_2d = field<bool>(j, "lens_2d");
    c.padded = field<bool>(j, "padded");
    c.page_table = enum_field<PageTableKind>(j, "page_table");
    c.spare_pages = field<int32_t>(j, "spare_pages");
    c.extra_table_pages = field<int32_t>(j, "extra_table_pages");
    c.width_pad = field<int64_t>(j, "width_pad");
    c.q_codes = enum_field<CodeKind>(j, "q_codes");
    c.k_codes = enum_field<CodeKind>(j, "k_codes");
    c.k_scales = enum_field<ScaleKind>(j, "k_scales");
    c.weights = enum_field<WeightKind>(j, "weights");
    c.profile = field<std::string>(j, "profile");
    c.candidate_block_size = field<int32_t>(j, "candidate_block_size");
    c.candidate_slots = field<int32_t>(j, "candidate_slots");
    c.topk = field_or<int32_t>(j, "topk", DecodeCase{}.topk);
    c.seed = field<uint64_t>(j, "seed");
    for (const auto& r : array_field(j, "requests"))
      c.requests.push_back({tuple_get<int32_t>(r, 0, "requests"), tuple_get<std::vector<int32_t>>(r, 1, "requests"),
                            tuple_get<int32_t>(r, 2, "requests"), tuple_get<uint32_t>(r, 3, "requests")});
    return c;
  }
  if (kind == "prefill") {
    PrefillCase c;
    c.heads = field<int32_t>(j, "heads");
    c.head_dim = field<int32_t>(j, "head_dim");
    c.element = parse_element_format(field<std::string>(j, "element"));
    c.num_k = field<int64_t>(j, "num_k");
    c.q_codes = enum_field<CodeKind>(j, "q_codes");
    c.k_codes = enum_field<CodeKind>(j, "k_codes");
    c.k_scales = enum_field<ScaleKind>(j, "k_scales");
    c.weights = enum_field<WeightKind>(j, "weights");
    c.profile = field<std::string>(j, "profile");
    c.candidate_block_size = field_or<int32_t>(j, "candidate_block_size", PrefillCase{}.candidate_block_size);
    c.candidate_slots = field_or<int32_t>(j, "candidate_slots", PrefillCase{}.candidate_slots);
    c.seed = field<uint64_t>(j, "seed");
    for (const auto& r : array_field(j, "rows"))
      c.rows.push_back({tuple_get<int64_t>(r, 0, "rows"), tuple_get<int64_t>(r, 1, "rows"),
                        tuple_get<uint32_t>(r, 2, "rows")});
    return c;
  }
  throw InvalidInput("replay", "unknown case kind '" + excerpt(kind) + "'");
}

}  // namespace

FuzzCase case_from_json(const nlohmann::json& j) {
  FuzzCase c;
  try {
    c = parse_case(j);
  } catch (const InvalidInput& e) {
    // Names parsed by the reference's own parsers (element, layout) come back under their own argument.
    if (e.argument() == "replay") throw;
    throw InvalidInput("replay", e.what());
  }
  validate_case(c);
  return c;
}

CaseSize case_size(const FuzzCase& fc) {
  CaseSize s;
  if (const auto* c = std::get_if<TopkCase>(&fc)) {
    s.rows = int64_t(c->rows.size());
    for (const auto& r : c->rows) s.max_visible = std::max(s.max_visible, r.len);
  } else if (const auto* c = std::get_if<CandidateCase>(&fc)) {
    const RowBounds b = candidate_bounds(*c);
    s.rows = b.rows();
    for (int64_t e : b.end) s.max_visible = std::max(s.max_visible, e);
  } else if (const auto* c = std::get_if<DecodeCase>(&fc)) {
    s.rows = int64_t(c->requests.size()) * c->next_n;
    for (const auto& q : c->requests) {
      s.max_visible = std::max<int64_t>(s.max_visible, c->lens_2d ? 0 : q.tokens / c->compress_ratio);
      for (int32_t l : q.row_lens) s.max_visible = std::max<int64_t>(s.max_visible, l);
    }
  } else if (const auto* c = std::get_if<PrefillCase>(&fc)) {
    s.rows = int64_t(c->rows.size());
    for (const auto& r : c->rows) s.max_visible = std::max(s.max_visible, r.len);
  }
  return s;
}

std::string summary(const FuzzCase& fc) {
  if (const auto* c = std::get_if<TopkCase>(&fc)) {
    std::vector<std::string> rows;
    for (const auto& r : c->rows)
      rows.push_back((r.start ? fmt::format("{}+", r.start) : "") + fmt::format("{}:{}", r.len, name(r.values)));
    return fmt::format("topk k={} rows={} [{}] tail={}", c->k, c->rows.size(), fmt::join(rows, " "), name(c->tail));
  }
  if (const auto* c = std::get_if<CandidateCase>(&fc)) {
    std::vector<std::string> reqs;
    for (const auto& q : c->requests)
      reqs.push_back(c->lens_2d ? fmt::format("{}:{}", fmt::join(q.row_lens, "/"), name(q.values))
                                : fmt::format("{}:{}", q.len, name(q.values)));
    return fmt::format("candidate next_n={} {} S={} C={} k={} {} [{}] tail={}", c->next_n, c->lens_2d ? "2-D" : "1-D",
                       c->block_size, c->slots, c->k, name(c->source), fmt::join(reqs, " "), name(c->tail));
  }
  if (const auto* c = std::get_if<DecodeCase>(&fc)) {
    std::vector<std::string> reqs;
    for (const auto& q : c->requests) {
      std::string s = c->lens_2d ? fmt::format("{}", fmt::join(q.row_lens, "/")) : fmt::format("{}", q.tokens);
      if (c->padded) s += fmt::format("(d={})", q.decode_len);
      reqs.push_back(s);
    }
    return fmt::format("decode B={} next_n={} H={} D={} {} {} page={} ratio={} {} lens=[{}] pages={} q={} k={} "
                       "scales={} w={} {} S={} C={} topk={}",
                       c->requests.size(), c->next_n, c->heads, c->head_dim, to_string(c->element),
                       to_string(c->layout), c->block_size, c->compress_ratio, c->lens_2d ? "2-D" : "1-D",
                       fmt::join(reqs, " "), name(c->page_table), name(c->q_codes), name(c->k_codes),
                       name(c->k_scales), name(c->weights), c->profile, c->candidate_block_size,
                       c->candidate_slots, c->topk);
  }
  const auto& c = std::get<PrefillCase>(fc);
  std::vector<std::string> rows;
  for (const auto& r : c.rows) rows.push_back(fmt::format("[{},{})", r.ks, r.ks + r.len));
  return fmt::format("prefill S={} N={} H={} D={} {} rows={} q={} k={} scales={} w={} {} candidate S={} C={}",
                     c.rows.size(), c.num_k, c.heads, c.head_dim, to_string(c.element), fmt::join(rows, " "),
                     name(c.q_codes), name(c.k_codes), name(c.k_scales), name(c.weights), c.profile,
                     c.candidate_block_size, c.candidate_slots);
}

namespace {

std::string describe_arrays(const FuzzCase& fc);

}  // namespace

std::string describe(const FuzzCase& fc) {
  std::string out = summary(fc) + "\n";
  try {
    return out + describe_arrays(fc);
  } catch (const std::exception& e) {
    return out + "  (its arrays cannot be built: " + e.what() + ")\n";
  }
}

namespace {

std::string describe_arrays(const FuzzCase& fc) {
  std::string out;
  if (const auto* c = std::get_if<TopkCase>(&fc)) {
    const Logits logits = make_logits(*c);
    for (int64_t r = 0; r < std::min<int64_t>(logits.rows, kShownRows); ++r) {
      const TopkRow& row = c->rows[size_t(r)];
      out += fmt::format("  row {}: window [{}, {}) of {} columns, {} (seed {})", r, row.start, row.start + row.len,
                         logits.width, name(row.values), row.seed);
      if (row.len <= kShownColumns) out += ": " + values_text(logits.row(r) + row.start, row.len);
      if (logits.width <= kShownColumns && logits.width > row.len) {
        // What a reader past the window would see.
        out += " | outside:";
        for (int64_t col = 0; col < logits.width; ++col)
          if (col < row.start || col >= row.start + row.len) out += fmt::format(" [{}]={}", col, logits.at(r, col));
      }
      out += "\n";
    }
    return out;
  }
  if (const auto* c = std::get_if<CandidateCase>(&fc)) {
    const Logits logits = make_logits(*c);
    const RowBounds cb = candidate_bounds(*c), tb = topk_bounds(*c);
    const CandidateBlocks blocks = make_candidates(*c, logits);
    for (int64_t r = 0; r < std::min<int64_t>(logits.rows, kShownRows); ++r) {
      const int64_t end = std::max(cb.end[size_t(r)], tb.end[size_t(r)]);
      out += fmt::format("  row {}: E={} L={} candidates [{}]", r, cb.end[size_t(r)], tb.end[size_t(r)],
                         fmt::join(blocks.row(r), blocks.row(r) + blocks.slots, " "));
      if (end <= kShownColumns) out += ": " + values_text(logits.row(r), end);
      out += "\n";
    }
    return out;
  }
  if (const auto* c = std::get_if<DecodeCase>(&fc)) {
    const DecodeProblem p = make_problem(*c);
    for (int64_t r = 0; r < std::min<int64_t>(p.rows(), kShownRows); ++r)
      out += fmt::format("  row {}: L={} E={}{} pages [{}]\n", r, visible_len(p, r), candidate_row_end(p, r),
                         p.is_padded_row(r) ? " (padded)" : "",
                         fmt::join(p.block_table.begin() + (r / p.next_n) * p.max_pages,
                                   p.block_table.begin() + (r / p.next_n + 1) * p.max_pages, " "));
    out += fmt::format("  {} cache pages, logits width {}\n", p.cache.num_pages, p.logits_width);
    return out;
  }
  return out;
}

}  // namespace

}  // namespace dsa::fuzz
