// The reference as an implementation under test (make_reference_ops): every
// op of IndexerOps, each the free function it names, written into the
// caller's buffers after their shapes are checked.
#include <algorithm>

#include "dsa/error.hpp"
#include "dsa/indexer_ops.hpp"
#include "dsa/padding.hpp"

namespace dsa {
namespace {

template <class T>
void copy_into(std::vector<T>& dst, const std::vector<T>& src) {
  std::copy(src.begin(), src.end(), dst.begin());
}

int32_t rows_per_request(const char* buffer, int64_t rows, std::span<const int32_t> decode_lens) {
  if (decode_lens.empty()) throw InvalidInput("decode_lens", "a step needs at least one request");
  const int64_t batch = int64_t(decode_lens.size());
  if (rows % batch != 0 || rows / batch < 1)
    throw InvalidInput(buffer, std::to_string(rows) + " rows is not next_n >= 1 rows for each of the " +
                                   std::to_string(batch) + " requests");
  return int32_t(rows / batch);
}

class ReferenceOps final : public IndexerOps {
public:
  std::string name() const override { return "reference"; }

  void decode_logits(const DecodeProblem& problem, const Profile& profile, Logits& out) override {
    require_output("logits", out, problem.rows(), problem.logits_width);
    copy_into(out.values, dsa::decode_logits(problem, profile).logits.values);
  }
  void prefill_logits(const PrefillProblem& problem, const Profile& profile, Logits& out) override {
    require_output("logits", out, problem.rows, problem.num_k);
    copy_into(out.values, dsa::prefill_logits(problem, profile).logits.values);
  }

  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    require_output("topk_indices", out, logits.rows);
    check_row_bounds(logits, bounds);
    // Rows are independent: the thread count never changes a result.
#pragma omp parallel for schedule(dynamic) if (logits.rows * logits.width >= (int64_t(1) << 18))
    for (int64_t r = 0; r < logits.rows; ++r) {
      const int64_t start = bounds.start[size_t(r)], end = bounds.end[size_t(r)];
      topk_row(logits.row(r) + start, end - start, out.k, out.row(r));
    }
  }

  void candidate_select(const Logits& logits, const RowBounds& bounds, CandidateBlocks& out) override {
    require_output("candidate_blocks", out, logits.rows);
    copy_into(out.blocks, select_candidate_blocks(logits, bounds, out.block_size, out.slots).blocks);
  }
  void candidate_mask(Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      CandidateMask variant) override {
    apply_candidate_mask(logits, bounds, candidates, variant);
  }
  void candidate_topk(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    require_output("topk_indices", out, logits.rows);
    copy_into(out.indices, dsa::candidate_topk(logits, bounds, candidates, out.k).indices);
  }
  void compact_candidate_logits(const DecodeProblem& problem, const Profile& profile,
                                const CandidateBlocks& candidates, Logits& out) override {
    candidates.validate();
    require_output("compact_logits", out, problem.rows(), int64_t(candidates.slots) * candidates.block_size);
    copy_into(out.values, dsa::compact_candidate_logits(problem, profile, candidates).values);
  }
  void prefill_compact_candidate_logits(const PrefillProblem& problem, const Profile& profile,
                                        const CandidateBlocks& candidates, Logits& out) override {
    candidates.validate();
    require_output("compact_logits", out, problem.rows, int64_t(candidates.slots) * candidates.block_size);
    copy_into(out.values, dsa::prefill_compact_candidate_logits(problem, profile, candidates).values);
  }
  void candidate_logits_top_k(const DecodeProblem& problem, const Profile& profile, const CandidateBlocks& candidates,
                              Logits& compact_out, TopkIndices& out) override {
    candidates.validate();
    require_output("compact_logits", compact_out, problem.rows(), int64_t(candidates.slots) * candidates.block_size);
    require_output("topk_indices", out, problem.rows());
    const Logits compact = dsa::compact_candidate_logits(problem, profile, candidates);
    copy_into(out.indices, compact_candidate_topk(compact, candidates, visible_lens(problem), out.k).indices);
    copy_into(compact_out.values, compact.values);
  }

  void pack_rows(const ByteRows& ragged, std::span<const int32_t> decode_lens, uint8_t pad,
                 ByteRows& packed) override {
    const int32_t next_n = rows_per_request("packed", packed.rows, decode_lens);
    if (ragged.row_bytes < 0 || ragged.rows < 0 || ragged.bytes.size() != size_t(ragged.rows) * size_t(ragged.row_bytes))
      throw InvalidInput("rows", "[" + std::to_string(ragged.rows) + ", " + std::to_string(ragged.row_bytes) +
                                     "] rows hold " + std::to_string(ragged.bytes.size()) + " bytes");
    require_output("packed", packed, packed.rows, ragged.row_bytes);
    copy_into(packed.bytes, dsa::pack_rows<uint8_t>(ragged.bytes, decode_lens, next_n, size_t(ragged.row_bytes), pad));
  }
  void unpack_topk(const TopkIndices& padded, std::span<const int32_t> decode_lens, TopkIndices& out) override {
    const int32_t next_n = rows_per_request("topk_indices", padded.rows, decode_lens);
    const TopkIndices rows = dsa::unpack_topk(padded, decode_lens, next_n);
    if (out.k != padded.k)
      throw InvalidInput("topk_indices", "output buffer has k = " + std::to_string(out.k) + ", the padded rows " +
                                             std::to_string(padded.k));
    require_output("topk_indices", out, rows.rows);
    copy_into(out.indices, rows.indices);
  }
  bool skip_decode_fill(bool has_prefill_rows, int64_t num_decode_tokens, int64_t num_tokens,
                        bool requires_padding) override {
    return dsa::skip_decode_fill(has_prefill_rows, num_decode_tokens, num_tokens, requires_padding);
  }

  void expand_candidate_blocks(const CandidateBlocks& candidates, const RowBounds& bounds,
                               SparseBlocks& out) override {
    const SparseBlocks sparse = dsa::expand_candidate_blocks(candidates, bounds);
    require_output("sparse_block_ids", out, sparse.rows, sparse.num_sparse, sparse.sparse_block_kv);
    copy_into(out.ids, sparse.ids);
    copy_into(out.end, sparse.end);
  }
  void sparse_logits(const DecodeProblem& problem, const Profile& profile, const SparseBlocks& sparse,
                     Logits& out) override {
    const Logits values = dsa::sparse_logits(problem, profile, sparse);
    require_output("sparse_logits", out, values.rows, values.width);
    copy_into(out.values, values.values);
  }
  void sparse_topk(const Logits& sparse_logits, const SparseBlocks& sparse, std::span<const int64_t> row_ks,
                   TopkIndices& out) override {
    require_output("topk_indices", out, sparse_logits.rows);
    const TopkIndices columns = dsa::sparse_topk(sparse_logits, sparse, out.k);
    copy_into(out.indices, remap_sparse_topk(columns, sparse, row_ks).indices);
  }
};

}  // namespace

std::unique_ptr<IndexerOps> make_reference_ops() { return std::make_unique<ReferenceOps>(); }

}  // namespace dsa
