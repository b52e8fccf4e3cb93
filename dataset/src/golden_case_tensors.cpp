#include "golden_case_tensors.hpp"

#include <algorithm>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"

namespace dsa::dataset::detail {
namespace {

bool has(const std::vector<std::string>& names, const char* name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Logits of an output: the dtype the profile writes, exactly.
Logits read_output_logits(const Safetensors& file, const std::string& name, bool bf16, int64_t rows, int64_t width) {
  const Dtype want = bf16 ? Dtype::BF16 : Dtype::F32;
  if (file.at(name).dtype != want)
    throw InvalidInput(name, "dtype " + std::string(to_string(file.at(name).dtype)) + ", but the profile's logits are " +
                                 std::string(to_string(want)));
  return read_logits(file, name, rows, width);
}

}  // namespace

void check_codes_dtype(const Safetensors& file, const std::string& name, ElementFormat element) {
  const Dtype d = file.at(name).dtype;
  if (d == Dtype::U8 || (d == Dtype::F8_E4M3 && element == ElementFormat::e4m3fn)) return;
  if (d == Dtype::F8_E4M3)
    throw InvalidInput(name, std::string("dtype F8_E4M3 holds e4m3fn codes, but the case is ") +
                                 std::string(to_string(element)) + " (store those bytes as U8)");
  throw InvalidInput(name, "dtype " + std::string(to_string(d)) + ", expected " +
                               (element == ElementFormat::e4m3fn ? "F8_E4M3 or U8" : "U8") + " (" +
                               std::string(to_string(element)) + " codes)");
}

std::vector<uint8_t> read_codes(const Safetensors& file, const std::string& name, ElementFormat element,
                                const Shape& shape) {
  check_codes_dtype(file, name, element);
  return element == ElementFormat::e4m3fn ? file.fp8_bytes(name, shape) : file.u8(name, shape);
}

void put_codes(Safetensors& file, const std::string& name, ElementFormat element, const Shape& shape,
               const std::vector<uint8_t>& codes) {
  if (element == ElementFormat::e4m3fn) file.put_f8_e4m3(name, shape, codes);
  else file.put_u8(name, shape, codes);
}

std::vector<float> read_weights(const Safetensors& file, const std::string& name, const Shape& shape) {
  const Dtype d = file.at(name).dtype;
  if (d == Dtype::F32) return file.f32(name, shape);
  if (d != Dtype::BF16) throw InvalidInput(name, "dtype " + std::string(to_string(d)) + ", expected F32 or BF16");
  const auto bits = file.bf16(name, shape);
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) values[i] = bf16_to_float(bits[i]);
  return values;
}

void put_weights(Safetensors& file, const std::string& name, const Shape& shape, const std::vector<float>& weights,
                 bool bf16) {
  if (!bf16) {
    file.put_f32(name, shape, weights);
    return;
  }
  std::vector<uint16_t> bits(weights.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    bits[i] = float_to_bf16(weights[i]);
    if (bf16_to_float(bits[i]) != weights[i])
      throw InvalidInput(name, "weights[" + std::to_string(i) + "] is not a bf16 value");
  }
  file.put_bf16(name, shape, bits);
}

GoldenOutputs read_output_tensors(const Safetensors& file, const GoldenCase& c, const std::vector<std::string>& names) {
  GoldenOutputs o;
  const Profile& profile = find_profile(c.settings.profile);
  const bool bf16 = profile.logits == Precision::bf16;
  const int64_t R = c.rows(), W = c.logits_width();
  const int32_t S = c.settings.candidate_block_size, C = c.settings.candidate_topk_blocks;
  if (has(names, out::logits)) o.logits = read_output_logits(file, out::logits, bf16, R, W);
  if (has(names, out::masked_logits)) o.masked_logits = read_output_logits(file, out::masked_logits, bf16, R, W);
  if (has(names, out::topk_indices)) {
    if (c.settings.topk < 1) throw InvalidInput(out::topk_indices, "present but the case has no `topk`");
    o.topk_indices = TopkIndices{R, c.settings.topk, file.i32(out::topk_indices, {R, c.settings.topk})};
  }
  if (has(names, out::candidate_blocks))
    o.candidate_blocks = CandidateBlocks{R, C, S, file.i32(out::candidate_blocks, {R, C})};
  if (has(names, out::compact_logits))
    o.compact_logits = read_output_logits(file, out::compact_logits, bf16, R, int64_t(C) * S);
  const bool ids = has(names, out::sparse_block_ids), ends = has(names, out::sparse_end);
  if (ids != ends)
    throw InvalidInput(ids ? out::sparse_end : out::sparse_block_ids,
                       "missing: sparse_block_ids and sparse_end come together");
  const int32_t sbk = (ids || has(names, out::sparse_logits)) ? pick_sparse_block_kv(S) : 0;
  const int32_t num_sparse = sbk ? int32_t(int64_t(C) * S / sbk) : 0;
  if (ids) {
    SparseBlocks sb;
    sb.rows = R;
    sb.num_sparse = num_sparse;
    sb.sparse_block_kv = sbk;
    sb.ids = file.i32(out::sparse_block_ids, {R, num_sparse});
    sb.end = file.i32(out::sparse_end, {R});
    o.sparse_blocks = std::move(sb);
  }
  if (has(names, out::sparse_logits))
    o.sparse_logits = read_output_logits(file, out::sparse_logits, true, R, int64_t(num_sparse) * sbk);
  return o;
}

}  // namespace dsa::dataset::detail
