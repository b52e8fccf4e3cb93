// A golden case as safetensors: metadata, input tensors, expected outputs.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/error.hpp"
#include "golden_case_tensors.hpp"

namespace dsa::dataset {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

void put_decode(Safetensors& file, const DecodeProblem& p, bool bf16_weights) {
  const bool mxfp4 = p.element == ElementFormat::mxfp4;
  const int64_t B = p.batch, N = p.next_n, H = p.heads, D = p.head_dim;
  detail::put_codes(file, "q", p.element, {B, N, H, mxfp4 ? D / 2 : D}, p.q);
  if (mxfp4) file.put_u8("q_scales", {B, N, H, D / 32}, p.q_block_scales);
  const int64_t token_bytes = int64_t(p.cache.value_bytes_per_token()) + 4;
  file.put_u8("kv_cache", {p.cache.num_pages, p.cache.block_size, 1, token_bytes}, p.cache.bytes);
  detail::put_weights(file, "weights", {p.rows(), H}, p.weights, bf16_weights);
  file.put_i32("block_table", {B, p.max_pages}, p.block_table);
}

void put_lengths(Safetensors& file, const DecodeProblem& p) {
  if (p.seq_lens_2d) file.put_i32("seq_lens", {p.batch, p.next_n}, p.seq_lens);
  else file.put_i32("seq_lens", {p.batch}, p.seq_lens);
  if (!p.decode_lens.empty()) file.put_i32("decode_lens", {p.batch}, p.decode_lens);
}

}  // namespace

std::map<std::string, std::string> case_metadata(const GoldenCase& c) {
  std::map<std::string, std::string> m = c.settings.info;
  m["schema"] = std::string(kGoldenSchema);
  m["op"] = std::string(to_string(c.settings.op));
  m["profile"] = c.settings.profile;
  m["outputs"] = fmt::to_string(fmt::join(c.expected.names(), ","));
  if (c.settings.topk > 0) m["topk"] = str(c.settings.topk);
  if (c.settings.candidate_block_size > 0) {
    m["candidate_block_size"] = str(c.settings.candidate_block_size);
    m["candidate_topk_blocks"] = str(c.settings.candidate_topk_blocks);
  }
  if (c.decode) {
    const DecodeProblem& p = *c.decode;
    m["next_n"] = str(p.next_n);
    m["compress_ratio"] = str(p.compress_ratio);
    m["max_model_len"] = str(p.logits_width * p.compress_ratio);
    if (!p.decode_lens.empty()) m["padded_lengths"] = std::string(to_string(p.padded_lengths));
    if (!c.logits_given()) {
      m["layout"] = std::string(to_string(p.cache.layout));
      if (is_fp8(p.element)) m["fp8"] = std::string(to_string(p.element));
      m["page_size"] = str(p.cache.block_size);
      m["heads"] = str(p.heads);
      m["head_dim"] = str(p.head_dim);
    }
  }
  if (c.prefill && !c.logits_given()) {
    m["fp8"] = std::string(to_string(c.prefill->element));
    m["heads"] = str(c.prefill->heads);
    m["head_dim"] = str(c.prefill->head_dim);
  }
  return m;
}

void put_inputs(Safetensors& file, const GoldenCase& c) {
  const Profile& profile = find_profile(c.settings.profile);
  const bool bf16 = profile.logits == Precision::bf16;
  if (c.given_logits) put_logits(file, "logits", *c.given_logits, bf16);
  if (c.decode) {
    if (!c.logits_given()) put_decode(file, *c.decode, profile.weights == Precision::bf16);
    put_lengths(file, *c.decode);
  }
  if (c.prefill) {
    const PrefillProblem& p = *c.prefill;
    if (!c.logits_given()) {
      detail::put_codes(file, "q", p.element, {p.rows, p.heads, p.head_dim}, p.q);
      detail::put_codes(file, "k", p.element, {p.num_k, p.head_dim}, p.k);
      file.put_f32("k_scales", {p.num_k}, p.k_scales);
      detail::put_weights(file, "weights", {p.rows, p.heads}, p.weights, profile.weights == Precision::bf16);
    }
    file.put_i32("ks", {p.rows}, p.ks);
    file.put_i32("ke", {p.rows}, p.ke);
  }
  if (c.candidate_blocks)
    file.put_i32("candidate_blocks", {c.candidate_blocks->rows, c.candidate_blocks->slots}, c.candidate_blocks->blocks);
}

void put_outputs(Safetensors& file, const GoldenCase& c, const GoldenOutputs& o) {
  const bool bf16 = find_profile(c.settings.profile).logits == Precision::bf16;
  if (o.logits) put_logits(file, out::logits, *o.logits, bf16);
  if (o.masked_logits) put_logits(file, out::masked_logits, *o.masked_logits, bf16);
  if (o.topk_indices) file.put_i32(out::topk_indices, {o.topk_indices->rows, o.topk_indices->k}, o.topk_indices->indices);
  if (o.candidate_blocks)
    file.put_i32(out::candidate_blocks, {o.candidate_blocks->rows, o.candidate_blocks->slots}, o.candidate_blocks->blocks);
  if (o.compact_logits) put_logits(file, out::compact_logits, *o.compact_logits, bf16);
  if (o.sparse_blocks) {
    file.put_i32(out::sparse_block_ids, {o.sparse_blocks->rows, o.sparse_blocks->num_sparse}, o.sparse_blocks->ids);
    file.put_i32(out::sparse_end, {o.sparse_blocks->rows}, o.sparse_blocks->end);
  }
  if (o.sparse_logits) put_logits(file, out::sparse_logits, *o.sparse_logits, true);
}

Safetensors to_safetensors(const GoldenCase& c) {
  Safetensors file;
  file.metadata = case_metadata(c);
  put_inputs(file, c);
  put_outputs(file, c, c.expected);
  return file;
}

}  // namespace dsa::dataset
