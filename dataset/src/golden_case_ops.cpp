// The ops of the golden schema, what each reads and writes, and the logits
// tensors (F32, or BF16 for bf16 profiles).
#include <algorithm>
#include <array>
#include <cstring>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/error.hpp"
#include "dsa/formats.hpp"

namespace dsa::dataset {
namespace {

struct OpInfo {
  GoldenOp op;
  std::string_view name;
};

constexpr std::array<OpInfo, 10> kOps{{
    {GoldenOp::decode_logits, "decode_logits"},
    {GoldenOp::prefill_logits, "prefill_logits"},
    {GoldenOp::decode_topk, "decode_topk"},
    {GoldenOp::prefill_topk, "prefill_topk"},
    {GoldenOp::candidate_select, "candidate_select"},
    {GoldenOp::candidate_mask, "candidate_mask"},
    {GoldenOp::candidate_topk, "candidate_topk"},
    {GoldenOp::compact_candidate_logits, "compact_candidate_logits"},
    {GoldenOp::consumer_step, "consumer_step"},
    {GoldenOp::sparse_sm100, "sparse_sm100"},
}};

}  // namespace

std::string_view to_string(GoldenOp op) {
  for (const auto& info : kOps)
    if (info.op == op) return info.name;
  return "unknown";
}

GoldenOp parse_golden_op(std::string_view name) {
  std::string known;
  for (const auto& info : kOps) {
    if (info.name == name) return info.op;
    known += (known.empty() ? "" : ", ") + std::string(info.name);
  }
  throw InvalidInput("op", "unknown op '" + excerpt(name) + "' (known: " + known + ")");
}

std::vector<GoldenOp> golden_ops() {
  std::vector<GoldenOp> ops;
  for (const auto& info : kOps) ops.push_back(info.op);
  return ops;
}

bool is_prefill_op(GoldenOp op) { return op == GoldenOp::prefill_logits || op == GoldenOp::prefill_topk; }

bool may_take_logits(GoldenOp op) {
  switch (op) {
    case GoldenOp::decode_topk:
    case GoldenOp::prefill_topk:
    case GoldenOp::candidate_select:
    case GoldenOp::candidate_mask:
    case GoldenOp::candidate_topk: return true;
    default: return false;
  }
}

bool takes_candidate_blocks(GoldenOp op) {
  switch (op) {
    case GoldenOp::candidate_mask:
    case GoldenOp::candidate_topk:
    case GoldenOp::compact_candidate_logits:
    case GoldenOp::consumer_step:
    case GoldenOp::sparse_sm100: return true;
    default: return false;
  }
}

bool needs_topk(GoldenOp op) {
  switch (op) {
    case GoldenOp::decode_topk:
    case GoldenOp::prefill_topk:
    case GoldenOp::candidate_topk:
    case GoldenOp::consumer_step:
    case GoldenOp::sparse_sm100: return true;
    default: return false;  // candidate_mask: the mask alone, or mask then top-k when `topk` is given
  }
}

std::vector<std::string> op_outputs(GoldenOp op, bool logits_given) {
  std::vector<std::string> names;
  if (!logits_given && op != GoldenOp::compact_candidate_logits && op != GoldenOp::sparse_sm100)
    names.push_back(out::logits);
  switch (op) {
    case GoldenOp::decode_logits:
    case GoldenOp::prefill_logits: break;
    case GoldenOp::decode_topk:
    case GoldenOp::prefill_topk:
    case GoldenOp::candidate_topk:
    case GoldenOp::consumer_step: names.push_back(out::topk_indices); break;
    case GoldenOp::candidate_select:
      names.push_back(out::candidate_blocks);
      names.push_back(out::topk_indices);  // the source layer's own top-k, when `topk` is given
      break;
    case GoldenOp::candidate_mask:
      names.push_back(out::masked_logits);
      names.push_back(out::topk_indices);
      break;
    case GoldenOp::compact_candidate_logits:
      names.push_back(out::compact_logits);
      names.push_back(out::topk_indices);  // the compact rows' top-k as positions, when `topk` is given
      break;
    case GoldenOp::sparse_sm100:
      names.push_back(out::sparse_block_ids);
      names.push_back(out::sparse_end);
      names.push_back(out::sparse_logits);
      names.push_back(out::topk_indices);
      break;
  }
  return names;
}

std::string primary_output(GoldenOp op) {
  switch (op) {
    case GoldenOp::decode_logits:
    case GoldenOp::prefill_logits: return out::logits;
    case GoldenOp::candidate_select: return out::candidate_blocks;
    case GoldenOp::candidate_mask: return out::masked_logits;
    case GoldenOp::compact_candidate_logits: return out::compact_logits;
    default: return out::topk_indices;
  }
}

std::vector<std::string> GoldenOutputs::names() const {
  std::vector<std::string> held;
  if (logits) held.push_back(out::logits);
  if (topk_indices) held.push_back(out::topk_indices);
  if (candidate_blocks) held.push_back(out::candidate_blocks);
  if (masked_logits) held.push_back(out::masked_logits);
  if (compact_logits) held.push_back(out::compact_logits);
  if (sparse_blocks) {
    held.push_back(out::sparse_block_ids);
    held.push_back(out::sparse_end);
  }
  if (sparse_logits) held.push_back(out::sparse_logits);
  return held;
}

int64_t GoldenCase::rows() const { return decode ? decode->rows() : (prefill ? prefill->rows : 0); }

int64_t GoldenCase::logits_width() const { return decode ? decode->logits_width : (prefill ? prefill->num_k : 0); }

std::vector<int64_t> GoldenCase::window_begin() const {
  if (prefill) return {prefill->ks.begin(), prefill->ks.end()};
  return std::vector<int64_t>(size_t(rows()), 0);
}

std::vector<int64_t> GoldenCase::window_end() const {
  if (prefill) return {prefill->ke.begin(), prefill->ke.end()};
  return decode ? visible_lens(*decode) : std::vector<int64_t>{};
}

std::vector<int64_t> GoldenCase::candidate_ends() const {
  return decode ? candidate_row_ends(*decode) : std::vector<int64_t>{};
}

void put_logits(Safetensors& file, const std::string& name, const Logits& logits, bool bf16) {
  const Shape shape{logits.rows, logits.width};
  if (!bf16) {
    file.put_f32(name, shape, logits.values);
    return;
  }
  std::vector<uint16_t> bits(logits.values.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    const uint32_t b = float_bits(logits.values[i]);
    if ((b & 0xFFFFu) != 0)
      throw InvalidInput(name, "entry [" + std::to_string(int64_t(i) / std::max<int64_t>(1, logits.width)) + "][" +
                                   std::to_string(int64_t(i) % std::max<int64_t>(1, logits.width)) +
                                   "] is not a bf16 value (fp32 bits " + std::to_string(b) + ")");
    bits[i] = uint16_t(b >> 16);
  }
  file.put_bf16(name, shape, bits);
}

Logits read_logits(const Safetensors& file, const std::string& name, int64_t rows, int64_t width) {
  const Tensor& t = file.at(name);
  Logits logits{rows, width, {}};
  if (t.dtype == Dtype::BF16) {
    const auto bits = file.bf16(name, {rows, width});
    logits.values.resize(bits.size());
    for (size_t i = 0; i < bits.size(); ++i) logits.values[i] = float_from_bits(uint32_t(bits[i]) << 16);
  } else if (t.dtype == Dtype::F32) {
    logits.values = file.f32(name, {rows, width});
  } else {
    throw InvalidInput(name, "dtype " + std::string(to_string(t.dtype)) + ", expected F32 or BF16");
  }
  return logits;
}

}  // namespace dsa::dataset
