// IndexerOps calls as golden cases (exchange.hpp): the request built with the
// golden-case writer, the answer read with the golden-case reader.
#include "dsa/fuzz/exchange.hpp"

#include <algorithm>
#include <limits>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/oracle/poison.hpp"

namespace dsa::fuzz {
namespace {

using dataset::GoldenCase;
using dataset::GoldenOp;
using dataset::GoldenOutputs;
using dataset::Safetensors;

GoldenCase new_case(GoldenOp op, const std::string& profile) {
  GoldenCase c;
  c.settings.op = op;
  c.settings.profile = profile;
  c.settings.info["generator"] = kExchangeGenerator;
  return c;
}

std::vector<int32_t> narrow(const std::vector<int64_t>& v, const char* what) {
  std::vector<int32_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] > std::numeric_limits<int32_t>::max())
      throw InvalidInput(what, "bound " + std::to_string(v[i]) + " does not fit the schema's I32");
    out[i] = int32_t(v[i]);
  }
  return out;
}

// Given logits with per-row ends [0, end): 2-D lengths, one row per request.
GoldenCase given_logits_case(GoldenOp op, const Logits& logits, const RowBounds& bounds) {
  check_row_bounds(logits, bounds);
  for (int64_t r = 0; r < bounds.rows(); ++r)
    if (bounds.start[size_t(r)] != 0)
      throw Unsupported("the exchange gives candidate ops rows that start at column 0 (row " + std::to_string(r) +
                        " starts at " + std::to_string(bounds.start[size_t(r)]) + ")");
  GoldenCase c = new_case(op, "exact");
  DecodeProblem p;
  p.batch = int32_t(logits.rows);
  p.next_n = 1;
  p.seq_lens_2d = true;
  p.seq_lens = narrow(bounds.end, "row_bounds");
  p.compress_ratio = 1;
  p.logits_width = logits.width;
  c.decode = std::move(p);
  c.given_logits = logits;
  return c;
}

// The candidate blocks an op reads, with the two settings the schema derives from their shape.
void with_candidates(GoldenCase& c, const CandidateBlocks& candidates) {
  c.candidate_blocks = candidates;
  c.settings.candidate_block_size = candidates.block_size;
  c.settings.candidate_topk_blocks = candidates.slots;
}

// An output buffer as the schema stores it. BF16 keeps each entry's upper
// half (the poison's own bf16 form), so a buffer the kernel never touched
// comes back recognisable.
void put_buffer(Safetensors& file, const char* name, Logits buffer, bool bf16) {
  // A caller that did not size its buffer gets one of poison (nothing to carry).
  if (buffer.values.size() != size_t(buffer.rows * buffer.width)) {
    buffer.values.assign(size_t(buffer.rows * buffer.width), 0.0f);
    oracle::fill_poison(buffer.values);
  }
  if (!bf16) {
    file.put_f32(name, {buffer.rows, buffer.width}, buffer.values);
    return;
  }
  std::vector<uint16_t> bits(buffer.values.size());
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = uint16_t(float_bits(buffer.values[i]) >> 16);
  file.put_bf16(name, {buffer.rows, buffer.width}, bits);
}

void put_buffers(Safetensors& file, const GoldenCase& c, const GoldenOutputs& o) {
  const bool bf16 = find_profile(c.settings.profile).logits == Precision::bf16;
  if (o.logits) put_buffer(file, dataset::out::logits, *o.logits, bf16);
  if (o.masked_logits) put_buffer(file, dataset::out::masked_logits, *o.masked_logits, bf16);
  if (o.compact_logits) put_buffer(file, dataset::out::compact_logits, *o.compact_logits, bf16);
  const auto sized = [](std::vector<int32_t> v, int64_t n) {
    if (v.size() != size_t(n)) v.assign(size_t(n), oracle::kPoisonI32);
    return v;
  };
  if (o.topk_indices)
    file.put_i32(dataset::out::topk_indices, {o.topk_indices->rows, o.topk_indices->k},
                 sized(o.topk_indices->indices, o.topk_indices->rows * o.topk_indices->k));
  if (o.candidate_blocks)
    file.put_i32(dataset::out::candidate_blocks, {o.candidate_blocks->rows, o.candidate_blocks->slots},
                 sized(o.candidate_blocks->blocks, o.candidate_blocks->rows * o.candidate_blocks->slots));
}

// Entries a bf16 kernel left as they came: the caller's own value (its fp32 poison).
void restore_untouched(const Logits& sent, Logits& received) {
  if (sent.values.size() != received.values.size()) return;
  for (size_t i = 0; i < received.values.size(); ++i)
    if (float_bits(received.values[i]) == (float_bits(sent.values[i]) & 0xFFFF0000u)) received.values[i] = sent.values[i];
}

class ExchangeOps final : public IndexerOps {
public:
  ExchangeOps(std::string name, ExchangeTransport transport) : name_(std::move(name)), transport_(std::move(transport)) {}
  std::string name() const override { return name_; }

  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    check_row_bounds(logits, bounds);
    GoldenCase c = new_case(GoldenOp::prefill_topk, "exact");
    PrefillProblem p;
    p.rows = int32_t(logits.rows);
    p.num_k = logits.width;
    p.ks = narrow(bounds.start, "row_bounds");
    p.ke = narrow(bounds.end, "row_bounds");
    c.prefill = std::move(p);
    c.given_logits = logits;
    c.settings.topk = out.k;
    c.expected.topk_indices = out;
    out = *call(c).topk_indices;
  }

  void candidate_select(const Logits& logits, const RowBounds& bounds, CandidateBlocks& out) override {
    GoldenCase c = given_logits_case(GoldenOp::candidate_select, logits, bounds);
    c.settings.candidate_block_size = out.block_size;
    c.settings.candidate_topk_blocks = out.slots;
    c.expected.candidate_blocks = out;
    out = *call(c).candidate_blocks;
  }

  void candidate_topk(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    GoldenCase c = given_logits_case(GoldenOp::candidate_topk, logits, bounds);
    with_candidates(c, candidates);
    c.settings.topk = out.k;
    c.expected.topk_indices = out;
    out = *call(c).topk_indices;
  }

  // In place: the buffer sent is the logits themselves (entries the kernel leaves keep their values).
  void candidate_mask(Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      CandidateMask variant) override {
    if (variant != CandidateMask::full)
      throw Unsupported("the golden schema's candidate_mask is vLLM's full mask; the strided variant has no exchange");
    GoldenCase c = given_logits_case(GoldenOp::candidate_mask, logits, bounds);
    with_candidates(c, candidates);
    c.expected.masked_logits = logits;
    const Logits sent = logits;
    logits = *call(c).masked_logits;
    restore_untouched(sent, logits);
  }

  // The gfx942 fused launch: compact_candidate_logits with its top-k (as positions).
  void candidate_logits_top_k(const DecodeProblem& problem, const Profile& profile, const CandidateBlocks& candidates,
                              Logits& compact_out, TopkIndices& out) override {
    GoldenCase c = new_case(GoldenOp::compact_candidate_logits, profile.name);
    c.decode = problem;
    with_candidates(c, candidates);
    c.settings.topk = out.k;
    c.expected.compact_logits = compact_out;
    c.expected.topk_indices = out;
    const Logits sent = compact_out;
    GoldenOutputs answer = call(c, {dataset::out::compact_logits, dataset::out::topk_indices});
    compact_out = *answer.compact_logits;
    restore_untouched(sent, compact_out);
    out = *answer.topk_indices;
  }

  void decode_logits(const DecodeProblem& problem, const Profile& profile, Logits& out) override {
    GoldenCase c = new_case(GoldenOp::decode_logits, profile.name);
    c.decode = problem;
    c.expected.logits = out;
    const Logits sent = out;
    out = *call(c).logits;
    restore_untouched(sent, out);
  }

  void prefill_logits(const PrefillProblem& problem, const Profile& profile, Logits& out) override {
    GoldenCase c = new_case(GoldenOp::prefill_logits, profile.name);
    c.prefill = problem;
    c.expected.logits = out;
    const Logits sent = out;
    out = *call(c).logits;
    restore_untouched(sent, out);
  }

  void compact_candidate_logits(const DecodeProblem& problem, const Profile& profile,
                                const CandidateBlocks& candidates, Logits& out) override {
    GoldenCase c = new_case(GoldenOp::compact_candidate_logits, profile.name);
    c.decode = problem;
    with_candidates(c, candidates);
    c.expected.compact_logits = out;
    const Logits sent = out;
    out = *call(c).compact_logits;
    restore_untouched(sent, out);
  }

private:
  // The request (metadata, inputs, the caller's buffers), the answer read
  // back: the op's primary output and every name in `required`.
  GoldenOutputs call(const GoldenCase& c, const std::vector<std::string>& required = {}) {
    Safetensors request;
    request.metadata = dataset::case_metadata(c);
    dataset::put_inputs(request, c);
    put_buffers(request, c, c.expected);
    const Safetensors answer = transport_(request);
    try {
      for (const auto& name : required)
        if (!answer.contains(name)) throw InvalidInput(name, "missing: the answer must hold it");
      return dataset::read_outputs(answer, c);
    } catch (const InvalidInput& e) {
      // The kernel's answer, not the user's input: a failure of this case.
      throw std::runtime_error("malformed answer to op " + std::string(dataset::to_string(c.settings.op)) + ": " + e.what());
    }
  }

  std::string name_;
  ExchangeTransport transport_;
};

}  // namespace

std::unique_ptr<IndexerOps> make_exchange_ops(std::string name, ExchangeTransport transport) {
  if (!transport) throw InvalidInput("impl", "an exchange needs a transport");
  return std::make_unique<ExchangeOps>(std::move(name), std::move(transport));
}

Safetensors answer_with_reference(const Safetensors& request) {
  GoldenCase c = dataset::read_case_inputs(request);
  std::vector<std::string> buffers;
  if (const auto it = request.metadata.find("outputs"); it != request.metadata.end()) {
    for (size_t begin = 0; begin <= it->second.size();) {
      const size_t comma = std::min(it->second.find(',', begin), it->second.size());
      if (comma > begin) buffers.push_back(it->second.substr(begin, comma - begin));
      begin = comma + 1;
    }
  }
  dataset::compute_expected(c, buffers);
  Safetensors answer;
  dataset::put_outputs(answer, c, c.expected);
  return answer;
}

}  // namespace dsa::fuzz
