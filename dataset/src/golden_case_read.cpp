// Reading a golden case's inputs from safetensors, validating every tensor
// and metadata key before any work.
#include <algorithm>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsa/checked.hpp"
#include "dsa/dataset/golden_case.hpp"
#include "dsa/error.hpp"
#include "golden_case_metadata.hpp"
#include "golden_case_tensors.hpp"

namespace dsa::dataset {
namespace {

using detail::MetadataReader;
constexpr int64_t kMaxExtent = std::numeric_limits<int32_t>::max();

// Keys the schema interprets; every other metadata key is kept as CaseSettings::info.
const std::set<std::string> kStructuralKeys = {
    "schema", "op", "profile", "outputs", "fp8", "layout", "page_size", "next_n", "heads", "head_dim", "topk",
    "compress_ratio", "max_model_len", "candidate_block_size", "candidate_topk_blocks", "padded_lengths"};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t begin = 0;
  while (begin <= text.size() && !text.empty()) {
    const size_t comma = text.find(',', begin);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    items.push_back(text.substr(begin, end - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return items;
}

// The inputs an op reads in the form the file uses.
struct InputNames {
  std::vector<std::string> required, optional;
  bool allows(const std::string& name) const {
    return std::count(required.begin(), required.end(), name) + std::count(optional.begin(), optional.end(), name) > 0;
  }
};

InputNames input_names(GoldenOp op, bool logits_given, bool mxfp4) {
  InputNames n;
  if (is_prefill_op(op)) {
    n.required = logits_given ? std::vector<std::string>{"logits", "ks", "ke"}
                              : std::vector<std::string>{"q", "k", "k_scales", "weights", "ks", "ke"};
    return n;
  }
  if (logits_given) {
    n.required = {"logits", "seq_lens"};
  } else {
    n.required = {"q", "kv_cache", "weights", "seq_lens", "block_table"};
    if (mxfp4) n.required.push_back("q_scales");
  }
  n.optional = {"decode_lens"};
  if (takes_candidate_blocks(op)) n.required.push_back("candidate_blocks");
  return n;
}

void check_tensor_names(const Safetensors& file, GoldenOp op, const InputNames& names,
                        const std::vector<std::string>& listed_outputs) {
  for (const auto& name : file.names()) {
    if (std::count(listed_outputs.begin(), listed_outputs.end(), name)) continue;
    if (!names.allows(name))
      throw InvalidInput(name, "is not an input of op " + std::string(to_string(op)) + " in this form (its inputs: " +
                                   fmt::to_string(fmt::join(names.required, ", ")) +
                                   (names.optional.empty() ? "" : ", optional " + fmt::to_string(fmt::join(names.optional, ", "))) +
                                   "; expected outputs are listed in the `outputs` metadata key)");
  }
  for (const auto& name : names.required)
    if (!file.contains(name)) throw InvalidInput(name, "missing tensor: op " + std::string(to_string(op)) + " needs it");
}

ElementFormat read_element(const MetadataReader& m, CacheLayout layout) {
  const auto fp8 = m.text("fp8");
  if (layout == CacheLayout::mxfp4) {
    if (fp8) throw InvalidInput("fp8", "'" + excerpt(*fp8) + "' given for an MXFP4 case (layout mxfp4 has no fp8 format)");
    return ElementFormat::mxfp4;
  }
  if (!fp8) throw InvalidInput("fp8", "missing metadata key (and no flag gives it): e4m3fn or e4m3fnuz");
  if (*fp8 != "e4m3fn" && *fp8 != "e4m3fnuz")
    throw InvalidInput("fp8", "'" + excerpt(*fp8) + "' is not an fp8 format (e4m3fn or e4m3fnuz)");
  return parse_element_format(*fp8);
}

// Lengths-only problems (given logits): the rules of validate() that concern lengths.
void validate_lengths(const DecodeProblem& p) {
  for (size_t i = 0; i < p.seq_lens.size(); ++i)
    if (p.seq_lens[i] < 0)
      throw InvalidInput("seq_lens", "seq_lens[" + std::to_string(i) + "] is negative (" + std::to_string(p.seq_lens[i]) + ")");
  for (size_t b = 0; b < p.decode_lens.size(); ++b)
    if (p.decode_lens[b] < 1 || p.decode_lens[b] > p.next_n)
      throw InvalidInput("decode_lens", "decode_lens[" + std::to_string(b) + "] = " + std::to_string(p.decode_lens[b]) +
                                            " is outside [1, next_n = " + std::to_string(p.next_n) + "]");
  for (int64_t row = 0; row < p.rows(); ++row) {
    const int64_t widest = std::max(visible_len(p, row), candidate_row_end(p, row));
    if (widest > p.logits_width)
      throw InvalidInput("seq_lens", "row " + std::to_string(row) + " sees " + std::to_string(widest) +
                                         " entries but the logits have " + std::to_string(p.logits_width) + " columns");
  }
}

void read_lengths(const Safetensors& file, const MetadataReader& m, DecodeProblem& p, int64_t batch) {
  const Shape& shape = file.at("seq_lens").shape;
  if (shape.size() == 2 && shape[0] == batch && shape[1] == p.next_n) {
    p.seq_lens_2d = true;
  } else if (!(shape.size() == 1 && shape[0] == batch)) {
    throw InvalidInput("seq_lens", "shape " + shape_string(shape) + ", expected [" + std::to_string(batch) + "] or [" +
                                       std::to_string(batch) + ", " + std::to_string(p.next_n) + "]");
  }
  p.seq_lens = file.i32("seq_lens", shape);
  if (file.contains("decode_lens")) {
    p.decode_lens = file.i32("decode_lens", {batch});
    if (const auto v = m.text("padded_lengths")) {
      if (*v == "causal") p.padded_lengths = PaddedLengths::causal;
      else if (*v == "vllm_padded") p.padded_lengths = PaddedLengths::vllm_padded;
      else throw InvalidInput("padded_lengths", "'" + excerpt(*v) + "' is not causal or vllm_padded");
    }
  } else if (m.text("padded_lengths")) {
    throw InvalidInput("padded_lengths", "given but the case has no decode_lens");
  }
}

void read_logits_width(const MetadataReader& m, DecodeProblem& p, std::optional<int64_t> given_width) {
  p.compress_ratio = int32_t(m.required_integer("compress_ratio", 1, 1 << 20, "1, or 4 on V4.1 C4A layers"));
  const auto max_model_len = m.integer("max_model_len", 0, kMaxExtent);
  if (given_width) {
    p.logits_width = *given_width;
    if (max_model_len && *max_model_len / p.compress_ratio != *given_width)
      throw InvalidInput("max_model_len", std::to_string(*max_model_len) + " / compress_ratio " +
                                              std::to_string(p.compress_ratio) + " disagrees with the " +
                                              std::to_string(*given_width) + " columns of logits");
  } else {
    if (!max_model_len) throw InvalidInput("max_model_len", "missing metadata key (and no flag gives it): the logits width times compress_ratio");
    p.logits_width = *max_model_len / p.compress_ratio;
  }
}

// DecodeProblem::validate with its errors under the schema's names
// (q_block_scales is the tensor q_scales, a page's block_size the key page_size).
void validate_in_schema_names(const DecodeProblem& p) {
  try {
    p.validate();
  } catch (const InvalidInput& e) {
    const std::string& arg = e.argument();
    const std::string renamed = arg == "q_block_scales" ? "q_scales" : arg == "block_size" ? "page_size" : "";
    if (renamed.empty()) throw;
    throw InvalidInput(renamed, std::string(e.what()).substr(arg.size() + 2));
  }
}

DecodeProblem read_decode_given(const Safetensors& file, const MetadataReader& m, int64_t& width_out) {
  DecodeProblem p;
  const Shape& ls = file.at("logits").shape;
  const Shape& ss = file.at("seq_lens").shape;
  if (ls.size() != 2) throw InvalidInput("logits", "shape " + shape_string(ls) + ", expected [rows, width]");
  if (ss.empty() || ss.size() > 2) throw InvalidInput("seq_lens", "shape " + shape_string(ss) + ", expected [B] or [B, next_n]");
  const int64_t batch = ss[0];
  if (batch < 1 || batch > kMaxExtent) throw InvalidInput("seq_lens", "batch " + std::to_string(batch) + " out of range");
  if (ss.size() == 2) m.agrees("next_n", ss[1], "seq_lens' shape " + shape_string(ss));
  p.next_n = int32_t(ss.size() == 2 ? ss[1] : m.required_integer("next_n", 1, 1 << 16, "rows per request"));
  if (ss.size() == 2 && p.next_n < 1) throw InvalidInput("seq_lens", "shape " + shape_string(ss) + " has no rows");
  p.batch = int32_t(batch);
  if (ls[0] != p.rows())
    throw InvalidInput("logits", "shape " + shape_string(ls) + " has " + std::to_string(ls[0]) + " rows, expected B * next_n = " +
                                     std::to_string(p.rows()));
  read_logits_width(m, p, ls[1]);
  read_lengths(file, m, p, batch);
  validate_lengths(p);
  width_out = ls[1];
  return p;
}

DecodeProblem read_decode(const Safetensors& file, const MetadataReader& m, const Profile& profile) {
  DecodeProblem p;
  const CacheLayout layout = parse_cache_layout(m.required_text("layout", "block_flat, preshuffle or mxfp4"));
  p.element = read_element(m, layout);
  const bool mxfp4 = p.element == ElementFormat::mxfp4;
  detail::check_codes_dtype(file, "q", p.element);
  const Shape& qs = file.at("q").shape;
  if (qs.size() != 4)
    throw InvalidInput("q", "shape " + shape_string(qs) + ", expected [B, next_n, H, " + (mxfp4 ? "D/2" : "D") + "]");
  for (int64_t e : qs)
    if (e < 1 || e > kMaxExtent / 2) throw InvalidInput("q", "shape " + shape_string(qs) + " has an empty or huge extent");
  p.batch = int32_t(qs[0]);
  p.next_n = int32_t(qs[1]);
  p.heads = int32_t(qs[2]);
  p.head_dim = int32_t(mxfp4 ? qs[3] * 2 : qs[3]);
  m.agrees("next_n", p.next_n, "q's shape " + shape_string(qs));
  m.agrees("heads", p.heads, "q's shape " + shape_string(qs));
  m.agrees("head_dim", p.head_dim, "q's shape " + shape_string(qs));
  p.q = detail::read_codes(file, "q", p.element, qs);
  if (mxfp4) p.q_block_scales = file.u8("q_scales", {qs[0], qs[1], qs[2], p.head_dim / 32});
  p.weights = detail::read_weights(file, "weights", {p.rows(), p.heads});

  const Shape& ks = file.at("kv_cache").shape;
  const int64_t token_bytes = (mxfp4 ? p.head_dim / 2 : p.head_dim) + 4;
  if (ks.size() != 4 || ks[2] != 1 || ks[3] != token_bytes || ks[0] < 1 || ks[1] < 1 || ks[0] > kMaxExtent ||
      ks[1] > kMaxExtent)
    throw InvalidInput("kv_cache", "shape " + shape_string(ks) + ", expected [pages, page_size, 1, " +
                                       std::to_string(token_bytes) + "] (" + (mxfp4 ? "D/2" : "D") + " value bytes + a 4-byte scale per entry)");
  m.agrees("page_size", ks[1], "kv_cache's shape " + shape_string(ks));
  p.cache.layout = layout;
  p.cache.element = p.element;
  p.cache.num_pages = int32_t(ks[0]);
  p.cache.block_size = int32_t(ks[1]);
  p.cache.head_dim = p.head_dim;
  p.cache.bytes = file.u8("kv_cache", ks);

  const Shape& bt = file.at("block_table").shape;
  if (bt.size() != 2 || bt[0] != p.batch || bt[1] > kMaxExtent)
    throw InvalidInput("block_table", "shape " + shape_string(bt) + ", expected [" + std::to_string(p.batch) + ", max_pages]");
  p.max_pages = int32_t(bt[1]);
  p.block_table = file.i32("block_table", bt);
  read_logits_width(m, p, std::nullopt);
  read_lengths(file, m, p, p.batch);
  validate_in_schema_names(p);
  profile.require(p.element);
  profile.require_weights(p.weights, p.heads);
  return p;
}

PrefillProblem read_prefill(const Safetensors& file, const MetadataReader& m, const Profile& profile) {
  PrefillProblem p;
  const std::string fp8 = m.required_text("fp8", "e4m3fn or e4m3fnuz");
  if (fp8 != "e4m3fn" && fp8 != "e4m3fnuz") throw InvalidInput("fp8", "'" + excerpt(fp8) + "' is not an fp8 format (e4m3fn or e4m3fnuz)");
  p.element = parse_element_format(fp8);
  detail::check_codes_dtype(file, "q", p.element);
  detail::check_codes_dtype(file, "k", p.element);
  const Shape& qs = file.at("q").shape;
  const Shape& kshape = file.at("k").shape;
  if (qs.size() != 3 || qs[0] > kMaxExtent || qs[1] < 1 || qs[2] < 1 || qs[1] > kMaxExtent || qs[2] > kMaxExtent)
    throw InvalidInput("q", "shape " + shape_string(qs) + ", expected [S, H, D]");
  if (kshape.size() != 2 || kshape[1] != qs[2])
    throw InvalidInput("k", "shape " + shape_string(kshape) + ", expected [N, " + std::to_string(qs[2]) + "]");
  p.rows = int32_t(qs[0]);
  p.heads = int32_t(qs[1]);
  p.head_dim = int32_t(qs[2]);
  m.agrees("heads", p.heads, "q's shape " + shape_string(qs));
  m.agrees("head_dim", p.head_dim, "q's shape " + shape_string(qs));
  p.num_k = kshape[0];
  p.q = detail::read_codes(file, "q", p.element, qs);
  p.k = detail::read_codes(file, "k", p.element, kshape);
  p.k_scales = file.f32("k_scales", {p.num_k});
  p.weights = detail::read_weights(file, "weights", {p.rows, p.heads});
  p.ks = file.i32("ks", {p.rows});
  p.ke = file.i32("ke", {p.rows});
  p.validate();
  profile.require(p.element);
  profile.require_weights(p.weights, p.heads);
  return p;
}

PrefillProblem read_prefill_given(const Safetensors& file, int64_t& width_out) {
  PrefillProblem p;
  const Shape& ls = file.at("logits").shape;
  if (ls.size() != 2 || ls[0] > kMaxExtent) throw InvalidInput("logits", "shape " + shape_string(ls) + ", expected [S, N]");
  p.rows = int32_t(ls[0]);
  p.num_k = ls[1];
  p.ks = file.i32("ks", {p.rows});
  p.ke = file.i32("ke", {p.rows});
  for (int32_t r = 0; r < p.rows; ++r)
    if (p.ks[size_t(r)] < 0 || p.ke[size_t(r)] < p.ks[size_t(r)] || p.ke[size_t(r)] > p.num_k)
      throw InvalidInput("ks", "row " + std::to_string(r) + " has [ks, ke) = [" + std::to_string(p.ks[size_t(r)]) + ", " +
                                   std::to_string(p.ke[size_t(r)]) + "), not inside [0, " + std::to_string(p.num_k) + "]");
  width_out = ls[1];
  return p;
}

CandidateBlocks read_candidate_input(const Safetensors& file, const MetadataReader& m, const GoldenCase& c) {
  const Shape& s = file.at("candidate_blocks").shape;
  if (s.size() != 2 || s[0] != c.rows() || s[1] < 1 || s[1] > kMaxExtent)
    throw InvalidInput("candidate_blocks", "shape " + shape_string(s) + ", expected [" + std::to_string(c.rows()) +
                                               ", candidate_topk_blocks]");
  m.agrees("candidate_topk_blocks", s[1], "candidate_blocks' shape " + shape_string(s));
  CandidateBlocks cand;
  cand.rows = s[0];
  cand.slots = int32_t(s[1]);
  cand.block_size = c.settings.candidate_block_size;
  cand.blocks = file.i32("candidate_blocks", s);
  cand.validate();
  const int64_t num_blocks = (c.logits_width() + cand.block_size - 1) / cand.block_size;
  for (int64_t r = 0; r < cand.rows; ++r)
    for (int32_t i = 0; i < cand.slots; ++i)
      if (cand.row(r)[i] >= num_blocks)
        throw InvalidInput("candidate_blocks", "row " + std::to_string(r) + " slot " + std::to_string(i) + " holds block " +
                                                   std::to_string(cand.row(r)[i]) + ", beyond the " + std::to_string(num_blocks) +
                                                   " blocks of " + std::to_string(cand.block_size) + " in the logits width");
  return cand;
}

// The outputs a case's op makes (and the reference's working copies) are
// sized by metadata, not by the file: refuse up front what cannot fit, naming
// the key that makes it big.
void require_case_memory(const GoldenCase& c) {
  const double R = double(c.rows()), W = double(c.logits_width()), k = c.settings.topk,
               C = c.settings.candidate_topk_blocks, S = c.settings.candidate_block_size;
  struct Term {
    const char* key;
    double bytes;
  };
  const Term terms[] = {{c.prefill ? "logits" : "max_model_len", R * W * 4 * 3},
                        {"topk", R * k * 4 * 2},
                        {"candidate_topk_blocks", R * C * 4 * 2},
                        {"candidate_block_size", R * C * S * 4 * 3}};
  double total = 0;
  const Term* largest = &terms[0];
  for (const Term& t : terms) {
    total += t.bytes;
    if (t.bytes > largest->bytes) largest = &t;
  }
  require_memory(largest->key, total,
                 "op " + std::string(to_string(c.settings.op)) + " on " + std::to_string(c.rows()) + " rows x " +
                     std::to_string(c.logits_width()) + " columns (topk " + std::to_string(c.settings.topk) +
                     (C > 0 ? ", " + std::to_string(c.settings.candidate_topk_blocks) + " candidate blocks of " +
                                  std::to_string(c.settings.candidate_block_size)
                            : std::string()) +
                     ")");
}

std::vector<std::string> listed_outputs(const Safetensors& file) {
  const auto it = file.metadata.find("outputs");
  return it == file.metadata.end() ? std::vector<std::string>{} : split_list(it->second);
}

}  // namespace

GoldenCase read_case_inputs(const Safetensors& file, const MetadataFlags& flags) {
  const MetadataReader m(file.metadata, flags);
  if (const auto schema = file.metadata.find("schema"); schema != file.metadata.end() && schema->second != kGoldenSchema)
    throw InvalidInput("schema", "'" + excerpt(schema->second) + "', this reader takes '" + std::string(kGoldenSchema) + "'");
  GoldenCase c;
  c.settings.op = parse_golden_op(m.required_text("op"));
  const GoldenOp op = c.settings.op;
  c.settings.profile = m.required_text("profile");
  const Profile& profile = find_profile(c.settings.profile);

  const auto outputs = listed_outputs(file);
  const bool logits_given = file.contains("logits") && !std::count(outputs.begin(), outputs.end(), "logits");
  if (logits_given && !may_take_logits(op))
    throw InvalidInput("logits", "is not an input of op " + std::string(to_string(op)) +
                                     " (it computes them from q and the cache); list it in the `outputs` key if it is an expected output");
  const auto layout = is_prefill_op(op) || logits_given ? std::nullopt : m.text("layout");
  check_tensor_names(file, op, input_names(op, logits_given, layout && *layout == "mxfp4"), outputs);

  int64_t width = 0;
  if (is_prefill_op(op)) {
    c.prefill = logits_given ? read_prefill_given(file, width) : read_prefill(file, m, profile);
  } else {
    c.decode = logits_given ? read_decode_given(file, m, width) : read_decode(file, m, profile);
  }
  if (logits_given) c.given_logits = read_logits(file, "logits", c.rows(), width);

  const auto topk = m.integer("topk", 1, op == GoldenOp::sparse_sm100 ? kDeepSelectMaxK : kMaxExtent);
  if (needs_topk(op) && !topk) throw InvalidInput("topk", "missing metadata key (and no flag gives it): op " +
                                                              std::string(to_string(op)) + " selects a top-k");
  c.settings.topk = int32_t(topk.value_or(0));
  const bool candidates = op == GoldenOp::candidate_select || takes_candidate_blocks(op);
  if (candidates) {
    c.settings.candidate_block_size = int32_t(m.required_integer("candidate_block_size", 1, kMaxExtent, "S, entries per candidate block"));
    if (op == GoldenOp::candidate_select) {
      c.settings.candidate_topk_blocks = int32_t(m.required_integer("candidate_topk_blocks", 1, kMaxExtent));
    } else {
      c.candidate_blocks = read_candidate_input(file, m, c);
      c.settings.candidate_topk_blocks = c.candidate_blocks->slots;
    }
  } else {
    for (const char* key : {"candidate_block_size", "candidate_topk_blocks"})
      if (m.text(key)) throw InvalidInput(key, "given but op " + std::string(to_string(op)) + " has no candidate blocks");
  }
  if (op == GoldenOp::sparse_sm100) {
    if (c.decode->element != ElementFormat::mxfp4)
      throw InvalidInput("layout", "op sparse_sm100 reads an MXFP4 cache (layout mxfp4), not " + std::string(to_string(c.decode->cache.layout)));
    if (profile.logits != Precision::bf16)
      throw InvalidInput("profile", profile.name + " writes fp32 logits; op sparse_sm100 is the bf16 SM100 path (deepgemm_sm100_bf16)");
    pick_sparse_block_kv(c.settings.candidate_block_size);
  }
  for (const auto& [key, value] : file.metadata)
    if (!kStructuralKeys.count(key)) c.settings.info[key] = value;
  require_case_memory(c);
  return c;
}

GoldenCase read_golden_case(const Safetensors& file) {
  // The list first: a wrong one would make expected outputs read as inputs.
  if (!file.metadata.count("outputs")) throw InvalidInput("outputs", "missing metadata key: a golden file lists its expected outputs");
  const auto listed = listed_outputs(file);
  const std::vector<std::string> known = {out::logits,       out::topk_indices,  out::candidate_blocks,
                                          out::compact_logits, out::masked_logits, out::sparse_logits,
                                          out::sparse_block_ids, out::sparse_end};
  for (const auto& name : listed) {
    if (!std::count(known.begin(), known.end(), name))
      throw InvalidInput("outputs", "lists '" + excerpt(name) + "', not an output name (" +
                                        fmt::to_string(fmt::join(known, ", ")) + ")");
    if (!file.contains(name)) throw InvalidInput(name, "listed in the `outputs` key but missing");
  }
  GoldenCase c = read_case_inputs(file);
  const auto possible = op_outputs(c.settings.op, c.logits_given());
  for (const auto& name : listed)
    if (!std::count(possible.begin(), possible.end(), name))
      throw InvalidInput("outputs", "lists '" + excerpt(name) + "', not an output of op " +
                                        std::string(to_string(c.settings.op)) +
                                        " (its outputs: " + fmt::to_string(fmt::join(possible, ", ")) + ")");
  c.expected = detail::read_output_tensors(file, c, listed);
  return c;
}

GoldenOutputs read_outputs(const Safetensors& file, const GoldenCase& golden, bool require_primary) {
  std::vector<std::string> present;
  for (const auto& name : op_outputs(golden.settings.op, golden.logits_given()))
    if (file.contains(name) && (name != out::topk_indices || golden.settings.topk > 0)) present.push_back(name);
  const std::string primary = primary_output(golden.settings.op);
  if (require_primary && !std::count(present.begin(), present.end(), primary))
    throw InvalidInput(primary, "missing: the outputs of op " + std::string(to_string(golden.settings.op)) + " must hold it");
  return detail::read_output_tensors(file, golden, present);
}

}  // namespace dsa::dataset
