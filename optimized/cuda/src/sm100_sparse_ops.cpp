// IndexerOps over the SM100 sparse backend's kernels (cuda_ops.hpp): cuda_sm100_sparse_select (the
// candidate expansion and the top-k over `end`, plain CUDA, run on sm_90 and sm_100) and
// cuda_sm100_sparse_logits (the block-scaled tcgen05 logits, sm_100 only).
#include <cuda_runtime.h>

#include <bit>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/optimized/cuda/cuda_ops.hpp"
#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/sm100_sparse.hpp"
#include "dsa/sparse_sm100.hpp"

namespace dsa::cuda {
namespace {

SparseRows sparse_rows(const CandidateBlocks& candidates) {
  candidates.validate();
  SparseRows shape;
  shape.rows = candidates.rows;
  shape.slots = candidates.slots;
  shape.block_size = candidates.block_size;
  shape.sparse_block_kv = pick_sparse_block_kv(candidates.block_size);  // InvalidInput when neither divides S
  return shape;
}

// The row bounds as the kernels' int32 [ks, ke).
struct RowRange {
  std::vector<int32_t> ks, ke;
};
RowRange row_range(const RowBounds& bounds, int64_t rows) {
  if (bounds.start.size() != size_t(rows) || bounds.end.size() != size_t(rows))
    throw InvalidInput("row_bounds", "need one [ks, ke) per candidate row (" + std::to_string(rows) + ")");
  RowRange r;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t ks = bounds.start[size_t(i)], ke = bounds.end[size_t(i)];
    if (ks < 0) throw InvalidInput("row_bounds", "row " + std::to_string(i) + " starts at " + std::to_string(ks));
    if (ks > INT32_MAX || ke > INT32_MAX)
      throw Unsupported("cuda_sm100_sparse_select: row bounds below 2^31, row " + std::to_string(i) + " ends at " +
                        std::to_string(ke));
    r.ks.push_back(int32_t(ks));
    r.ke.push_back(int32_t(ke < ks ? ks : ke));
  }
  return r;
}

class Sm100SparseOps final : public IndexerOps {
public:
  explicit Sm100SparseOps(Sm100SparseKernels kernels) : kernels_(kernels) {}

  std::string name() const override {
    return kernels_ == Sm100SparseKernels::select ? "cuda_sm100_sparse_select" : "cuda_sm100_sparse_logits";
  }

  void expand_candidate_blocks(const CandidateBlocks& candidates, const RowBounds& bounds, SparseBlocks& out) override {
    require_kernels(Sm100SparseKernels::select, "expand_candidate_blocks");
    const SparseRows shape = sparse_rows(candidates);
    require_output("sparse_block_ids", out, shape.rows, shape.num_sparse(), shape.sparse_block_kv);
    const RowRange range = row_range(bounds, shape.rows);
    require_select_device("expand_candidate_blocks");
    DeviceBuffer<int32_t> cand{std::span<const int32_t>(candidates.blocks)};
    DeviceBuffer<int32_t> ks{std::span<const int32_t>(range.ks)}, ke{std::span<const int32_t>(range.ke)};
    DeviceBuffer<int32_t> ids{std::span<const int32_t>(out.ids)}, end{std::span<const int32_t>(out.end)};  // poison in
    launch_expand_candidates(shape, cand.data(), ks.data(), ke.data(), ids.data(), end.data(), nullptr);
    DSA_CUDA_CHECK(cudaDeviceSynchronize());
    ids.download(std::span<int32_t>(out.ids));
    end.download(std::span<int32_t>(out.end));
  }

  void sparse_logits(const DecodeProblem& problem, const Profile& profile, const SparseBlocks& sparse,
                     Logits& out) override {
    require_kernels(Sm100SparseKernels::logits, "sparse_logits");
    problem.validate();
    if (profile.name != "deepgemm_sm100_bf16")
      throw Unsupported(name() + ": computes the arithmetic of deepgemm_sm100_bf16, not " + profile.name);
    // As the reference's op: the sparse form reads an MXFP4 cache (the kernel's e4m3 form is reached
    // through launch_sm100_sparse_logits only, as DeepGEMM's API takes fp8 too).
    if (problem.element != ElementFormat::mxfp4)
      throw InvalidInput("kv_cache", std::string("the SM100 sparse logits read an MXFP4 cache, not ") +
                                         std::string(to_string(problem.element)));
    profile.require(problem.element);
    profile.require_weights(problem.weights, problem.heads);
    const SparseRows shape = rows_of(sparse, problem.rows());
    require_output("sparse_logits", out, shape.rows, shape.width());
    if (!sm100_available()) {
      const DeviceInfo& d = device_info();
      throw Unsupported(name() + ": sparse_logits runs sm_100a code, only on an sm_100 GPU (B200); " +
                        (d.present ? "found " + d.name : d.why_absent));
    }
    // q's scales as one word per head (D / 32 ue8m0 bytes, the rest zero), the weights as bf16.
    const int32_t groups = problem.head_dim / 32;
    std::vector<uint32_t> q_words(size_t(problem.rows() * problem.heads), 0);
    if (problem.element == ElementFormat::mxfp4)
      for (size_t i = 0; i < q_words.size(); ++i)
        for (int32_t g = 0; g < groups; ++g) q_words[i] |= uint32_t(problem.q_block_scales[i * size_t(groups) + size_t(g)]) << (8 * g);
    std::vector<uint16_t> weights(problem.weights.size());
    for (size_t i = 0; i < weights.size(); ++i) weights[i] = float_to_bf16(problem.weights[i]);
    DeviceBuffer<uint8_t> q{std::span<const uint8_t>(problem.q)}, cache{std::span<const uint8_t>(problem.cache.bytes)};
    DeviceBuffer<uint32_t> q_scales{std::span<const uint32_t>(q_words)};
    DeviceBuffer<uint16_t> w{std::span<const uint16_t>(weights)};
    DeviceBuffer<int32_t> table{std::span<const int32_t>(problem.block_table)};
    DeviceBuffer<int32_t> ids{std::span<const int32_t>(sparse.ids)}, end{std::span<const int32_t>(sparse.end)};
    std::vector<uint16_t> bf16_out = narrow_bf16(out.values);  // the caller's poison goes in
    DeviceBuffer<uint16_t> logits{std::span<const uint16_t>(bf16_out)};
    SparseLogitsStep step;
    step.rows = problem.rows();
    step.next_n = problem.next_n;
    step.heads = problem.heads;
    step.head_dim = problem.head_dim;
    step.element = problem.element;
    step.q = q.data();
    step.q_scales = reinterpret_cast<const uint8_t*>(q_scales.data());
    step.weights = w.data();
    step.block_table = table.data();
    step.max_pages = problem.max_pages;
    step.cache = cache.data();
    step.num_pages = problem.cache.num_pages;
    step.block_size = problem.cache.block_size;
    launch_sm100_sparse_logits(step, shape, ids.data(), end.data(), logits.data(), nullptr);
    DSA_CUDA_CHECK(cudaDeviceSynchronize());
    logits.download(std::span<uint16_t>(bf16_out));
    for (size_t i = 0; i < bf16_out.size(); ++i) out.values[i] = bf16_to_float(bf16_out[i]);
  }

  void sparse_topk(const Logits& sparse_logits, const SparseBlocks& sparse, std::span<const int64_t> row_ks,
                   TopkIndices& out) override {
    require_kernels(Sm100SparseKernels::select, "sparse_topk");
    require_output("topk_indices", out, sparse_logits.rows);
    if (out.k > kDeepSelectMaxK)
      throw InvalidInput("topk", "DeepSelect takes k in [1, " + std::to_string(kDeepSelectMaxK) + "], got " +
                                     std::to_string(out.k));
    const SparseRows shape = rows_of(sparse, sparse_logits.rows);
    if (sparse_logits.width < shape.width())
      throw InvalidInput("sparse_logits", "width " + std::to_string(sparse_logits.width) + " below the " +
                                              std::to_string(shape.width()) + " sparse columns");
    if (row_ks.size() != size_t(shape.rows))
      throw InvalidInput("row_ks", std::to_string(row_ks.size()) + " starts for " + std::to_string(shape.rows) + " rows");
    // The kernel reads bf16 logits, as the backend writes them: a value of [0, end) that bf16 does not
    // hold is not an input of this op.
    std::vector<uint16_t> values(size_t(shape.rows * shape.width()));
    std::vector<int32_t> ks(size_t(shape.rows));
    for (int64_t r = 0; r < shape.rows; ++r) {
      if (row_ks[size_t(r)] < 0 || row_ks[size_t(r)] > INT32_MAX)
        throw InvalidInput("row_ks", "row " + std::to_string(r) + " starts at " + std::to_string(row_ks[size_t(r)]));
      ks[size_t(r)] = int32_t(row_ks[size_t(r)]);
      const float* row = sparse_logits.row(r);
      for (int64_t c = 0; c < shape.width(); ++c) {
        const uint32_t bits = std::bit_cast<uint32_t>(row[c]);
        if (c < sparse.end[size_t(r)] && (bits & 0xFFFFu) != 0 && row[c] == row[c])
          throw InvalidInput("sparse_logits", "row " + std::to_string(r) + " column " + std::to_string(c) + " holds " +
                                                  std::to_string(row[c]) + ", not a bf16 value");
        // A NaN stays a NaN (its payload may sit in the low half only).
        values[size_t(r * shape.width() + c)] = row[c] != row[c] ? uint16_t(0x7FC0) : uint16_t(bits >> 16);
      }
    }
    require_select_device("sparse_topk");
    DeviceBuffer<uint16_t> logits{std::span<const uint16_t>(values)};
    DeviceBuffer<int32_t> ids{std::span<const int32_t>(sparse.ids)}, end{std::span<const int32_t>(sparse.end)};
    DeviceBuffer<int32_t> starts{std::span<const int32_t>(ks)};
    DeviceBuffer<uint8_t> workspace(sparse_topk_workspace_bytes(shape, out.k));
    if (workspace.size() > 0) DSA_CUDA_CHECK(cudaMemset(workspace.data(), 0, workspace.size()));
    DeviceBuffer<int32_t> topk{std::span<const int32_t>(out.indices)};  // poison in
    launch_sparse_topk(shape, out.k, logits.data(), ids.data(), end.data(), starts.data(), workspace.data(), topk.data(),
                       nullptr);
    DSA_CUDA_CHECK(cudaDeviceSynchronize());
    topk.download(std::span<int32_t>(out.indices));
  }

private:
  // The shape of the sparse blocks, checked as the reference does (ids, ends within the width).
  static SparseRows rows_of(const SparseBlocks& sparse, int64_t rows) {
    if (sparse.rows != rows || sparse.end.size() != size_t(rows) ||
        sparse.ids.size() != size_t(rows) * size_t(sparse.num_sparse) ||
        (sparse.sparse_block_kv != 8 && sparse.sparse_block_kv != 16) || sparse.num_sparse < 1)
      throw InvalidInput("sparse_indices", "shape does not match the " + std::to_string(rows) + " rows");
    for (int64_t r = 0; r < rows; ++r)
      if (sparse.end[size_t(r)] < 0 || sparse.end[size_t(r)] > sparse.width())
        throw InvalidInput("end", "row " + std::to_string(r) + " has end " + std::to_string(sparse.end[size_t(r)]) +
                                      " outside [0, " + std::to_string(sparse.width()) + "]");
    SparseRows shape;
    shape.rows = rows;
    shape.slots = sparse.num_sparse;
    shape.block_size = sparse.sparse_block_kv;
    shape.sparse_block_kv = sparse.sparse_block_kv;
    return shape;
  }

  static std::vector<uint16_t> narrow_bf16(const std::vector<float>& values) {
    std::vector<uint16_t> out(values.size());
    for (size_t i = 0; i < values.size(); ++i) out[i] = uint16_t(std::bit_cast<uint32_t>(values[i]) >> 16);
    return out;
  }

  void require_kernels(Sm100SparseKernels kernels, const char* op) const {
    if (kernels_ != kernels) throw Unsupported(name() + ": " + op + " is not one of its kernels");
  }

  // The expansion and the top-k are built for sm_90a and sm_100a: either device runs them.
  void require_select_device(const char* op) const {
    if (sparse_select_available()) return;
    const DeviceInfo& d = device_info();
    throw Unsupported(name() + ": " + op + " needs an sm_90 or sm_100 GPU; " + (d.present ? "found " + d.name : d.why_absent));
  }

  Sm100SparseKernels kernels_;
};

}  // namespace

std::unique_ptr<IndexerOps> make_cuda_sm100_sparse_ops(Sm100SparseKernels kernels) {
  return std::make_unique<Sm100SparseOps>(kernels);
}

}  // namespace dsa::cuda
