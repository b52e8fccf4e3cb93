// An implementation of the indexer ops, as the fuzzer, the golden checker and
// the tests drive it: the reference, the CPU twins of the GPU algorithms, the
// GPU kernels, or an external command. Each is "one more implementation under
// test" behind this interface, and this interface reaches every op of the
// golden schema and of the seeds' launches (the V3.2/V4.1 decode and prefill
// logits, top-k, V4.1 candidates, the gfx942 fused launch, decode padding and
// the SM100 sparse form).
//
// The output contract, for every op and every implementation:
//   - Outputs are written into buffers the caller sized and poisoned
//     (oracle/poison.hpp); the oracle's "every entry written" check reads what
//     survives. An implementation never resizes or replaces a buffer: it
//     checks the shape first (InvalidInput naming the buffer, e.g.
//     "topk_indices", with both shapes) and then writes the entries it owns.
//   - A device implementation (CUDA, HIP) copies the inputs to the device AND
//     the caller's output buffers as they are, poison included, runs the
//     launch, and copies the whole buffers back. Allocating fresh device
//     buffers (or zeroing them) would turn an entry the kernel never wrote into
//     a zero or into whatever the allocator held, and "every entry written"
//     would lose its force.
//   - A call the implementation cannot take throws dsa::Unsupported (the
//     designs' launches "return False"); the default body of every op does,
//     with "<impl>: <op> is not implemented". Harnesses count those apart and
//     never as passes. Bad arguments throw dsa::InvalidInput.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/logits.hpp"
#include "dsa/problem.hpp"
#include "dsa/profile.hpp"
#include "dsa/sparse_sm100.hpp"
#include "dsa/topk.hpp"

namespace dsa {

// Every op of IndexerOps, by the name of its member function.
enum class Op : uint8_t {
  decode_logits,
  prefill_logits,
  topk,
  candidate_select,
  candidate_mask,
  candidate_topk,
  compact_candidate_logits,
  prefill_compact_candidate_logits,
  candidate_logits_top_k,
  pack_rows,
  unpack_topk,
  skip_decode_fill,
  expand_candidate_blocks,
  sparse_logits,
  sparse_topk,
};
std::string_view to_string(Op op);
// Throws InvalidInput("op", ...) naming the known ops.
Op parse_op(std::string_view name);
std::vector<Op> all_ops();  // in declaration order

// Rows of bytes: a request row's q codes of every head, its block scales, ...
struct ByteRows {
  int64_t rows = 0;
  int64_t row_bytes = 0;
  std::vector<uint8_t> bytes;  // [rows][row_bytes]
  const uint8_t* row(int64_t r) const { return bytes.data() + r * row_bytes; }
  uint8_t* row(int64_t r) { return bytes.data() + r * row_bytes; }
};

class IndexerOps {
public:
  virtual ~IndexerOps() = default;
  virtual std::string name() const = 0;

  // ---- Logits (SPEC 4).
  // out: [rows][logits_width]; entries at or beyond a row's visible length may be left as they are.
  virtual void decode_logits(const DecodeProblem& problem, const Profile& profile, Logits& out);
  // out: [rows][num_k]; entries outside [ks, ke) may be left as they are.
  virtual void prefill_logits(const PrefillProblem& problem, const Profile& profile, Logits& out);

  // ---- Top-k (SPEC 6).
  // Row r selects among columns [bounds.start[r], bounds.end[r]), indices
  // relative to the start; out.k slots. Decode rows are [0, L_r)
  // (topk_row_bounds), prefill rows [ks, ke) (prefill_row_bounds).
  virtual void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out);

  // ---- V4.1 candidate blocks (SPEC 7; the row bounds as in candidates.hpp).
  // The source layer's selection; out.rows, out.slots and out.block_size given.
  virtual void candidate_select(const Logits& logits, const RowBounds& candidate_bounds, CandidateBlocks& out);
  // In place: vLLM's apply_candidate_mask (full) or the gfx942 launch's strided mask.
  virtual void candidate_mask(Logits& logits, const RowBounds& candidate_bounds, const CandidateBlocks& candidates,
                              CandidateMask variant);
  // The consumer top-k among the candidate blocks' columns, indices relative to the row start.
  virtual void candidate_topk(const Logits& logits, const RowBounds& topk_bounds, const CandidateBlocks& candidates,
                              TopkIndices& out);
  // Compact candidate logits of decode rows: out [rows][slots * block_size];
  // entries of -1 slots and at positions >= L_r may be left as they are.
  virtual void compact_candidate_logits(const DecodeProblem& problem, const Profile& profile,
                                        const CandidateBlocks& candidates, Logits& out);
  // The same for prefill rows: block c covers [ks + c*S, ks + (c+1)*S) clipped
  // to ke; entries of -1 slots and at ks + position >= ke may be left.
  virtual void prefill_compact_candidate_logits(const PrefillProblem& problem, const Profile& profile,
                                                const CandidateBlocks& candidates, Logits& out);
  // The gfx942 fused launch: the compact logits (as compact_candidate_logits)
  // and their top out.k (512 in the design) in one call, remapped to
  // positions (as compact_candidate_topk over [0, L_r)).
  virtual void candidate_logits_top_k(const DecodeProblem& problem, const Profile& profile,
                                      const CandidateBlocks& candidates, Logits& compact_out, TopkIndices& out);

  // ---- Decode padding (SPEC 5, padding.hpp).
  // vLLM's pack_seq_triton on byte rows: ragged [sum d_b][row_bytes] ->
  // packed [B][next_n][row_bytes] with next_n = packed.rows / B; the slots
  // j >= d_b get `pad` (q_pad_byte for a q).
  virtual void pack_rows(const ByteRows& ragged, std::span<const int32_t> decode_lens, uint8_t pad, ByteRows& packed);
  // unpack_seq_triton on indices: padded [B * next_n][k] -> out [sum d_b][k],
  // next_n = padded.rows / B.
  virtual void unpack_topk(const TopkIndices& padded, std::span<const int32_t> decode_lens, TopkIndices& out);
  // The gfx942 design's topk.skip_decode_fill (the rule in padding.hpp).
  virtual bool skip_decode_fill(bool has_prefill_rows, int64_t num_decode_tokens, int64_t num_tokens,
                                bool requires_padding);

  // ---- The SM100 sparse form (sparse_sm100.hpp).
  // Sparse block ids and `end`: out.rows, out.num_sparse and
  // out.sparse_block_kv given (pick_sparse_block_kv), ids and end sized.
  virtual void expand_candidate_blocks(const CandidateBlocks& candidates, const RowBounds& bounds, SparseBlocks& out);
  // bf16 values in fp32 storage, out [rows][sparse.width()]; columns at or
  // beyond end[r] may be left as they are.
  virtual void sparse_logits(const DecodeProblem& problem, const Profile& profile, const SparseBlocks& sparse,
                             Logits& out);
  // The top out.k over each row's columns [0, end[r]), remapped to entries
  // relative to row_ks[r].
  virtual void sparse_topk(const Logits& sparse_logits, const SparseBlocks& sparse, std::span<const int64_t> row_ks,
                           TopkIndices& out);
};

// The reference itself as an implementation under test: every op.
std::unique_ptr<IndexerOps> make_reference_ops();

// Forwards every op to an inner implementation (the reference by default). A
// mutant or a test's patched implementation derives from it and overrides
// only the ops it changes, so the properties of a whole step (logits, then
// top-k, then candidates) all run.
class ForwardingOps : public IndexerOps {
public:
  explicit ForwardingOps(std::string name, std::unique_ptr<IndexerOps> inner = make_reference_ops());
  std::string name() const override { return name_; }

  void decode_logits(const DecodeProblem& problem, const Profile& profile, Logits& out) override;
  void prefill_logits(const PrefillProblem& problem, const Profile& profile, Logits& out) override;
  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override;
  void candidate_select(const Logits& logits, const RowBounds& candidate_bounds, CandidateBlocks& out) override;
  void candidate_mask(Logits& logits, const RowBounds& candidate_bounds, const CandidateBlocks& candidates,
                      CandidateMask variant) override;
  void candidate_topk(const Logits& logits, const RowBounds& topk_bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override;
  void compact_candidate_logits(const DecodeProblem& problem, const Profile& profile,
                                const CandidateBlocks& candidates, Logits& out) override;
  void prefill_compact_candidate_logits(const PrefillProblem& problem, const Profile& profile,
                                        const CandidateBlocks& candidates, Logits& out) override;
  void candidate_logits_top_k(const DecodeProblem& problem, const Profile& profile, const CandidateBlocks& candidates,
                              Logits& compact_out, TopkIndices& out) override;
  void pack_rows(const ByteRows& ragged, std::span<const int32_t> decode_lens, uint8_t pad,
                 ByteRows& packed) override;
  void unpack_topk(const TopkIndices& padded, std::span<const int32_t> decode_lens, TopkIndices& out) override;
  bool skip_decode_fill(bool has_prefill_rows, int64_t num_decode_tokens, int64_t num_tokens,
                        bool requires_padding) override;
  void expand_candidate_blocks(const CandidateBlocks& candidates, const RowBounds& bounds,
                               SparseBlocks& out) override;
  void sparse_logits(const DecodeProblem& problem, const Profile& profile, const SparseBlocks& sparse,
                     Logits& out) override;
  void sparse_topk(const Logits& sparse_logits, const SparseBlocks& sparse, std::span<const int64_t> row_ks,
                   TopkIndices& out) override;

protected:
  IndexerOps& inner() { return *inner_; }

private:
  std::string name_;
  std::unique_ptr<IndexerOps> inner_;
};

// Checks of a caller-sized output buffer, shared by every implementation so
// that all raise the same message: InvalidInput(buffer) when the buffer's
// declared shape or its storage differs from the one the op writes.
void require_output(const char* buffer, const Logits& out, int64_t rows, int64_t width);
// Also InvalidInput("topk") for k < 1.
void require_output(const char* buffer, const TopkIndices& out, int64_t rows);
void require_output(const char* buffer, const CandidateBlocks& out, int64_t rows);
void require_output(const char* buffer, const ByteRows& out, int64_t rows, int64_t row_bytes);
void require_output(const char* buffer, const SparseBlocks& out, int64_t rows, int32_t num_sparse,
                    int32_t sparse_block_kv);

}  // namespace dsa
