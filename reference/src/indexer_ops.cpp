// The op names, the default bodies (Unsupported), the forwarding
// implementation and the output-buffer checks of indexer_ops.hpp.
#include "dsa/indexer_ops.hpp"

#include <array>

#include "dsa/error.hpp"

namespace dsa {
namespace {

struct OpName {
  Op op;
  std::string_view name;
};

constexpr std::array<OpName, 15> kOps{{
    {Op::decode_logits, "decode_logits"},
    {Op::prefill_logits, "prefill_logits"},
    {Op::topk, "topk"},
    {Op::candidate_select, "candidate_select"},
    {Op::candidate_mask, "candidate_mask"},
    {Op::candidate_topk, "candidate_topk"},
    {Op::compact_candidate_logits, "compact_candidate_logits"},
    {Op::prefill_compact_candidate_logits, "prefill_compact_candidate_logits"},
    {Op::candidate_logits_top_k, "candidate_logits_top_k"},
    {Op::pack_rows, "pack_rows"},
    {Op::unpack_topk, "unpack_topk"},
    {Op::skip_decode_fill, "skip_decode_fill"},
    {Op::expand_candidate_blocks, "expand_candidate_blocks"},
    {Op::sparse_logits, "sparse_logits"},
    {Op::sparse_topk, "sparse_topk"},
}};

[[noreturn]] void unsupported(const IndexerOps& impl, Op op) {
  throw Unsupported(impl.name() + ": " + std::string(to_string(op)) + " is not implemented");
}

std::string shape(int64_t rows, int64_t width) { return "[" + std::to_string(rows) + ", " + std::to_string(width) + "]"; }

void require_shape(const char* buffer, int64_t rows, int64_t width, size_t entries, int64_t want_rows,
                   int64_t want_width) {
  if (rows != want_rows || width != want_width)
    throw InvalidInput(buffer, "output buffer is " + shape(rows, width) + ", expected " + shape(want_rows, want_width));
  if (rows < 0 || width < 0 || entries != size_t(rows) * size_t(width))
    throw InvalidInput(buffer, "output buffer " + shape(rows, width) + " holds " + std::to_string(entries) +
                                   " entries, expected " + std::to_string(size_t(rows) * size_t(width)));
}

}  // namespace

std::string_view to_string(Op op) {
  for (const auto& entry : kOps)
    if (entry.op == op) return entry.name;
  return "unknown";
}

Op parse_op(std::string_view name) {
  std::string known;
  for (const auto& entry : kOps) {
    if (entry.name == name) return entry.op;
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  throw InvalidInput("op", "unknown op '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<Op> all_ops() {
  std::vector<Op> ops;
  for (const auto& entry : kOps) ops.push_back(entry.op);
  return ops;
}

// ---- Default bodies: the implementation does not take the op.

void IndexerOps::decode_logits(const DecodeProblem&, const Profile&, Logits&) { unsupported(*this, Op::decode_logits); }
void IndexerOps::prefill_logits(const PrefillProblem&, const Profile&, Logits&) {
  unsupported(*this, Op::prefill_logits);
}
void IndexerOps::topk(const Logits&, const RowBounds&, TopkIndices&) { unsupported(*this, Op::topk); }
void IndexerOps::candidate_select(const Logits&, const RowBounds&, CandidateBlocks&) {
  unsupported(*this, Op::candidate_select);
}
void IndexerOps::candidate_mask(Logits&, const RowBounds&, const CandidateBlocks&, CandidateMask) {
  unsupported(*this, Op::candidate_mask);
}
void IndexerOps::candidate_topk(const Logits&, const RowBounds&, const CandidateBlocks&, TopkIndices&) {
  unsupported(*this, Op::candidate_topk);
}
void IndexerOps::compact_candidate_logits(const DecodeProblem&, const Profile&, const CandidateBlocks&, Logits&) {
  unsupported(*this, Op::compact_candidate_logits);
}
void IndexerOps::prefill_compact_candidate_logits(const PrefillProblem&, const Profile&, const CandidateBlocks&,
                                                  Logits&) {
  unsupported(*this, Op::prefill_compact_candidate_logits);
}
void IndexerOps::candidate_logits_top_k(const DecodeProblem&, const Profile&, const CandidateBlocks&, Logits&,
                                        TopkIndices&) {
  unsupported(*this, Op::candidate_logits_top_k);
}
void IndexerOps::pack_rows(const ByteRows&, std::span<const int32_t>, uint8_t, ByteRows&) {
  unsupported(*this, Op::pack_rows);
}
void IndexerOps::unpack_topk(const TopkIndices&, std::span<const int32_t>, TopkIndices&) {
  unsupported(*this, Op::unpack_topk);
}
bool IndexerOps::skip_decode_fill(bool, int64_t, int64_t, bool) { unsupported(*this, Op::skip_decode_fill); }
void IndexerOps::expand_candidate_blocks(const CandidateBlocks&, const RowBounds&, SparseBlocks&) {
  unsupported(*this, Op::expand_candidate_blocks);
}
void IndexerOps::sparse_logits(const DecodeProblem&, const Profile&, const SparseBlocks&, Logits&) {
  unsupported(*this, Op::sparse_logits);
}
void IndexerOps::sparse_topk(const Logits&, const SparseBlocks&, std::span<const int64_t>, TopkIndices&) {
  unsupported(*this, Op::sparse_topk);
}

// ---- ForwardingOps.

ForwardingOps::ForwardingOps(std::string name, std::unique_ptr<IndexerOps> inner)
    : name_(std::move(name)), inner_(std::move(inner)) {
  if (!inner_) throw InvalidInput("impl", name_ + ": a forwarding implementation needs an inner one");
}

void ForwardingOps::decode_logits(const DecodeProblem& problem, const Profile& profile, Logits& out) {
  inner_->decode_logits(problem, profile, out);
}
void ForwardingOps::prefill_logits(const PrefillProblem& problem, const Profile& profile, Logits& out) {
  inner_->prefill_logits(problem, profile, out);
}
void ForwardingOps::topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) {
  inner_->topk(logits, bounds, out);
}
void ForwardingOps::candidate_select(const Logits& logits, const RowBounds& candidate_bounds, CandidateBlocks& out) {
  inner_->candidate_select(logits, candidate_bounds, out);
}
void ForwardingOps::candidate_mask(Logits& logits, const RowBounds& candidate_bounds,
                                   const CandidateBlocks& candidates, CandidateMask variant) {
  inner_->candidate_mask(logits, candidate_bounds, candidates, variant);
}
void ForwardingOps::candidate_topk(const Logits& logits, const RowBounds& topk_bounds,
                                   const CandidateBlocks& candidates, TopkIndices& out) {
  inner_->candidate_topk(logits, topk_bounds, candidates, out);
}
void ForwardingOps::compact_candidate_logits(const DecodeProblem& problem, const Profile& profile,
                                             const CandidateBlocks& candidates, Logits& out) {
  inner_->compact_candidate_logits(problem, profile, candidates, out);
}
void ForwardingOps::prefill_compact_candidate_logits(const PrefillProblem& problem, const Profile& profile,
                                                     const CandidateBlocks& candidates, Logits& out) {
  inner_->prefill_compact_candidate_logits(problem, profile, candidates, out);
}
void ForwardingOps::candidate_logits_top_k(const DecodeProblem& problem, const Profile& profile,
                                           const CandidateBlocks& candidates, Logits& compact_out,
                                           TopkIndices& out) {
  inner_->candidate_logits_top_k(problem, profile, candidates, compact_out, out);
}
void ForwardingOps::pack_rows(const ByteRows& ragged, std::span<const int32_t> decode_lens, uint8_t pad,
                              ByteRows& packed) {
  inner_->pack_rows(ragged, decode_lens, pad, packed);
}
void ForwardingOps::unpack_topk(const TopkIndices& padded, std::span<const int32_t> decode_lens, TopkIndices& out) {
  inner_->unpack_topk(padded, decode_lens, out);
}
bool ForwardingOps::skip_decode_fill(bool has_prefill_rows, int64_t num_decode_tokens, int64_t num_tokens,
                                     bool requires_padding) {
  return inner_->skip_decode_fill(has_prefill_rows, num_decode_tokens, num_tokens, requires_padding);
}
void ForwardingOps::expand_candidate_blocks(const CandidateBlocks& candidates, const RowBounds& bounds,
                                            SparseBlocks& out) {
  inner_->expand_candidate_blocks(candidates, bounds, out);
}
void ForwardingOps::sparse_logits(const DecodeProblem& problem, const Profile& profile, const SparseBlocks& sparse,
                                  Logits& out) {
  inner_->sparse_logits(problem, profile, sparse, out);
}
void ForwardingOps::sparse_topk(const Logits& sparse_logits, const SparseBlocks& sparse,
                                std::span<const int64_t> row_ks, TopkIndices& out) {
  inner_->sparse_topk(sparse_logits, sparse, row_ks, out);
}

// ---- Output buffers.

void require_output(const char* buffer, const Logits& out, int64_t rows, int64_t width) {
  require_shape(buffer, out.rows, out.width, out.values.size(), rows, width);
}

void require_output(const char* buffer, const TopkIndices& out, int64_t rows) {
  if (out.k < 1) throw InvalidInput("topk", "k must be at least 1, got " + std::to_string(out.k));
  require_shape(buffer, out.rows, out.k, out.indices.size(), rows, out.k);
}

void require_output(const char* buffer, const CandidateBlocks& out, int64_t rows) {
  if (out.slots < 1)
    throw InvalidInput("candidate_topk_blocks", "must be at least 1, got " + std::to_string(out.slots));
  if (out.block_size < 1)
    throw InvalidInput("candidate_block_size", "must be at least 1, got " + std::to_string(out.block_size));
  require_shape(buffer, out.rows, out.slots, out.blocks.size(), rows, out.slots);
}

void require_output(const char* buffer, const ByteRows& out, int64_t rows, int64_t row_bytes) {
  require_shape(buffer, out.rows, out.row_bytes, out.bytes.size(), rows, row_bytes);
}

void require_output(const char* buffer, const SparseBlocks& out, int64_t rows, int32_t num_sparse,
                    int32_t sparse_block_kv) {
  if (out.sparse_block_kv != sparse_block_kv)
    throw InvalidInput(buffer, "output buffer has sparse_block_kv " + std::to_string(out.sparse_block_kv) +
                                   ", expected " + std::to_string(sparse_block_kv));
  require_shape(buffer, out.rows, out.num_sparse, out.ids.size(), rows, num_sparse);
  if (out.end.size() != size_t(rows))
    throw InvalidInput(buffer, "output `end` holds " + std::to_string(out.end.size()) + " entries, expected " +
                                   std::to_string(rows));
}

}  // namespace dsa
