// Host launcher of the SM100 sparse backend's top-k over `end`: the shared selection kernel
// (select_launch.cuh, optimized/common/select) over the sparse columns of each row.
#include <string>

#include "dsa/common/select/sparse_columns.hpp"
#include "dsa/error.hpp"
#include "dsa/optimized/cuda/select.hpp"
#include "dsa/optimized/cuda/sm100_sparse.hpp"
#include "dsa/sparse_sm100.hpp"
#include "select_launch.cuh"

namespace dsa::cuda {
namespace {

common::select::TreePlan sparse_plan(const SparseRows& shape, int32_t k) {
  if (k < 1 || k > kDeepSelectMaxK)
    throw InvalidInput("topk", "DeepSelect takes k in [1, " + std::to_string(kDeepSelectMaxK) + "], got " +
                                   std::to_string(k));
  return select_plan(shape.width(), k, "sparse_topk");
}

}  // namespace

size_t sparse_topk_workspace_bytes(const SparseRows& shape, int32_t k) {
  const common::select::TreePlan plan = sparse_plan(shape, k);
  return size_t(plan.slot_pairs(shape.rows)) * sizeof(uint64_t) + size_t(plan.counters(shape.rows)) * sizeof(uint32_t);
}

void launch_sparse_topk(const SparseRows& shape, int32_t k, const uint16_t* logits_bf16, const int32_t* sparse_ids,
                        const int32_t* end, const int32_t* row_ks, void* workspace, int32_t* topk, void* stream) {
  const common::select::TreePlan plan = sparse_plan(shape, k);
  common::select::SparseColumns src;
  src.logits = logits_bf16;
  src.row_stride = shape.width();
  src.num_rows = shape.rows;
  src.end = end;
  src.sparse_ids = sparse_ids;
  src.row_ks = row_ks;
  src.num_sparse = shape.num_sparse();
  src.sbk = shape.sparse_block_kv;
  common::select::TreeOutput out;
  out.out = topk;
  out.slots = static_cast<uint64_t*>(workspace);
  out.counters = reinterpret_cast<uint32_t*>(out.slots + plan.slot_pairs(shape.rows));
  select_kernels::launch<common::select::SparseColumns, common::select::Bug::none>(src, plan, out, stream);
}

}  // namespace dsa::cuda
