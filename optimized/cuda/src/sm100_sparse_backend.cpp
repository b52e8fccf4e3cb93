// The SM100 sparse backend (sm100_sparse.hpp): the seed's builder checks, once, and the per-row
// scratch, allocated once and shared by every consumer layer of a step.
#include <cuda_runtime.h>

#include <string>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "dsa/error.hpp"
#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/sm100_sparse.hpp"
#include "dsa/sparse_sm100.hpp"

namespace dsa::cuda {

SparseLayout check_sparse_backend(const SparseBackendConfig& c) {
  const std::string prefix = "the SM100 sparse backend";
  if (c.candidate_block_size <= 0 || c.candidate_topk_blocks <= 0)
    throw InvalidInput("candidate_block_size", prefix + " requires a two-level (candidate block) indexer model such as "
                                               "DeepSeek-V4.1, got candidate blocks of " +
                                                   std::to_string(c.candidate_block_size) + " x " +
                                                   std::to_string(c.candidate_topk_blocks));
  if (c.cache_element != ElementFormat::mxfp4)
    throw InvalidInput("kv_cache", prefix + " requires the MXFP4 indexer cache (its kernels take ue8m0 scales per 32), "
                                            "got " + std::string(to_string(c.cache_element)));
  if (c.heads != 32 && c.heads != 64)
    throw InvalidInput("heads", prefix + " takes H 32 or 64, got " + std::to_string(c.heads));
  if (c.head_dim != 64 && c.head_dim != 128)
    throw InvalidInput("head_dim", prefix + " takes D 64 or 128, got " + std::to_string(c.head_dim));
  SparseLayout l;
  l.sparse_block_kv = pick_sparse_block_kv(c.candidate_block_size);  // InvalidInput("candidate_block_size")
  if (c.page_size <= 0 || c.page_size % l.sparse_block_kv != 0)
    throw InvalidInput("page_size", prefix + ": indexer cache pages (" + std::to_string(c.page_size) +
                                        " entries) must be a multiple of " + std::to_string(l.sparse_block_kv) +
                                        " entries");
  l.num_sparse_blocks = c.candidate_topk_blocks * (c.candidate_block_size / l.sparse_block_kv);
  l.num_sparse_columns = int64_t(l.num_sparse_blocks) * l.sparse_block_kv;
  if (c.candidate_topk_blocks > kExpandMaxSlots)
    throw InvalidInput("candidate_topk_blocks", prefix + " expands at most " + std::to_string(kExpandMaxSlots) +
                                                    " candidate blocks per row, got " +
                                                    std::to_string(c.candidate_topk_blocks));
  // DeepSelect's layout: k in [1, 4096] over rows at least k columns wide.
  if (c.topk_tokens < 1 || c.topk_tokens > kDeepSelectMaxK)
    throw InvalidInput("topk_tokens", prefix + " selects with DeepSelect, k in [1, " + std::to_string(kDeepSelectMaxK) +
                                          "], got " + std::to_string(c.topk_tokens));
  if (l.num_sparse_columns < c.topk_tokens)
    throw InvalidInput("topk_tokens", prefix + ": " + std::to_string(l.num_sparse_columns) +
                                          " sparse columns per row are fewer than k = " + std::to_string(c.topk_tokens));
  if (c.max_rows < 1) throw InvalidInput("max_rows", prefix + " needs at least one row, got " + std::to_string(c.max_rows));
  return l;
}

struct SparseBackend::Scratch {
  DeviceBuffer<int32_t> sparse_ids, end;
  DeviceBuffer<uint8_t> topk_workspace;  // zero between launches
};

namespace {

// The kernels' device, before any allocation: the logits are sm_100a code; the expansion and the
// top-k also run on sm_90.
void require_device(const SparseBackendConfig& c) {
  if (c.sparse_logits ? sm100_available() : sparse_select_available()) return;
  const DeviceInfo& d = device_info();
  throw Unsupported(std::string("the SM100 sparse backend requires ") +
                    (c.sparse_logits ? "an SM100-class GPU for its logits" : "an sm_90 or sm_100 GPU") + "; " +
                    (d.present ? "found " + d.name + " (sm_" + std::to_string(d.major) + std::to_string(d.minor) + ")"
                               : d.why_absent));
}

}  // namespace

SparseBackend::SparseBackend(const SparseBackendConfig& config)
    : config_(config), layout_(check_sparse_backend(config)), scratch_(std::make_unique<Scratch>()) {
  require_device(config);
  scratch_->sparse_ids = DeviceBuffer<int32_t>(size_t(config.max_rows) * size_t(layout_.num_sparse_blocks));
  scratch_->end = DeviceBuffer<int32_t>(size_t(config.max_rows));
  scratch_->topk_workspace = DeviceBuffer<uint8_t>(sparse_topk_workspace_bytes(step_shape(config.max_rows), config.topk_tokens));
  if (scratch_->topk_workspace.size() > 0)
    DSA_CUDA_CHECK(cudaMemset(scratch_->topk_workspace.data(), 0, scratch_->topk_workspace.size()));
}

SparseBackend::~SparseBackend() = default;

const SparseLayout& SparseBackend::layout() const { return layout_; }
const int32_t* SparseBackend::sparse_ids() const { return scratch_->sparse_ids.data(); }
const int32_t* SparseBackend::end() const { return scratch_->end.data(); }

void SparseBackend::expand(int64_t rows, const int32_t* candidates, const int32_t* row_ks, const int32_t* row_ke,
                           void* stream) {
  if (rows < 0 || rows > config_.max_rows)
    throw InvalidInput("rows", "a step of " + std::to_string(rows) + " rows; the backend holds scratch for " +
                                   std::to_string(config_.max_rows));
  launch_expand_candidates(step_shape(rows), candidates, row_ks, row_ke, scratch_->sparse_ids.data(),
                           scratch_->end.data(), stream);
  step_rows_ = rows;
}

void SparseBackend::logits(const SparseLogitsStep& step, uint16_t* out, void* stream) const {
  if (step_rows_ < 0 || step.rows != step_rows_)
    throw InvalidInput("rows", "the logits of " + std::to_string(step.rows) + " rows need this step's expansion (" +
                                   std::to_string(step_rows_) + " rows expanded)");
  if (step.heads != config_.heads || step.head_dim != config_.head_dim || step.element != config_.cache_element ||
      step.block_size != config_.page_size)
    throw InvalidInput("step", "H, D, the cache format and its pages must be the backend's");
  launch_sm100_sparse_logits(step, step_shape(step.rows), scratch_->sparse_ids.data(), scratch_->end.data(), out,
                             stream);
}

void SparseBackend::topk(int64_t rows, const uint16_t* logits, const int32_t* row_ks, int32_t* out, void* stream) {
  if (step_rows_ < 0 || rows != step_rows_)
    throw InvalidInput("rows", "the top-k of " + std::to_string(rows) + " rows needs this step's expansion (" +
                                   std::to_string(step_rows_) + " rows expanded)");
  launch_sparse_topk(step_shape(rows), config_.topk_tokens, logits, scratch_->sparse_ids.data(), scratch_->end.data(),
                     row_ks, scratch_->topk_workspace.data(), out, stream);
}

SparseRows SparseBackend::step_shape(int64_t rows) const {
  SparseRows shape;
  shape.rows = rows;
  shape.slots = config_.candidate_topk_blocks;
  shape.block_size = config_.candidate_block_size;
  shape.sparse_block_kv = layout_.sparse_block_kv;
  return shape;
}

}  // namespace dsa::cuda
