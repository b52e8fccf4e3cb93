// cuda_select: the selection launches behind IndexerOps (select_ops.hpp).
#include "dsa/optimized/cuda/select_ops.hpp"

#include <cuda_runtime.h>

#include <span>
#include <string>
#include <type_traits>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "dsa/common/host/device_buffers.hpp"
#include "dsa/common/host/selection_ops.hpp"
#include "dsa/error.hpp"
#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/select.hpp"

namespace dsa::cuda {
namespace {

using common::select::Bug;

// The device side of SelectionOps: DeviceBuffer copies and the select.hpp launches.
struct CudaSelectBackend : common::host::DeviceBuffers<DeviceBuffer> {
  int capacity() const { return select_capacity(); }
  // cuda_select_tree and the mutants (the tree's bugs) run the tree kernel.
  bool grouped() const { return !tree; }
  int32_t group_of(int64_t rows, int64_t widest) const { return select_group_size(rows, widest); }
  template <class Source>
  common::select::GroupPlan group_plan(const Source& src, int64_t widest, int32_t k) const {
    return select_group_plan(src.rows(), widest, k, "top-k", select_source_of<Source>());
  }
  template <class Source>
  void launch(const Source& src, const common::select::GroupPlan& plan, int32_t* out) {
    if (plan.group * src.rows() > int64_t(INT32_MAX))
      throw Unsupported("cuda_select: at most 2^31 - 1 blocks, got " + std::to_string(src.rows()) + " rows of " +
                        std::to_string(plan.group) + " blocks");
    launch_select(src, plan, out, nullptr);
    DSA_CUDA_CHECK(cudaDeviceSynchronize());
  }
  // The kernels are built for sm_90a and sm_100a only.
  void require(const char* op) const {
    const DeviceInfo& d = device_info();
    if (d.present && (d.major == 9 || d.major == 10) && d.minor == 0 && (!mutant || select_mutants_built())) return;
    if (mutant) throw Unsupported(std::string("cuda_select mutant: ") + op + ": not in this build (DSA_CUDA_MUTANTS)");
    throw Unsupported(std::string("cuda_select: ") + op + " needs an sm_90 or sm_100 GPU; " +
                      (d.present ? "found " + d.name : d.why_absent));
  }
  template <class Source>
  void launch(const Source& src, const common::select::TreePlan& plan, const common::select::TreeOutput& out) {
    if constexpr (std::is_same_v<Source, common::select::DenseRows>) {
      if (mutant) launch_select_mutant(bug, src, plan, out, nullptr);
      else launch_select(src, plan, out, nullptr);
    } else {
      if (mutant) throw Unsupported("cuda_select mutant: only the top-k kernel carries the bug");
      launch_select(src, plan, out, nullptr);
    }
    DSA_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void launch(const common::PackRows& p) {
    launch_pack_rows(p, nullptr);
    DSA_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void launch(const common::UnpackTopk& p) {
    launch_unpack_topk(p, nullptr);
    DSA_CUDA_CHECK(cudaDeviceSynchronize());
  }
  int64_t mask_bitmap_words() const { return candidate_mask_bitmap_words(); }
  void launch(const common::CandidateMaskRows& p) {
    launch_candidate_mask(p, nullptr);
    DSA_CUDA_CHECK(cudaDeviceSynchronize());
  }

  bool tree = false;  // TreeTopK, the kernel the gfx942 build launches at wave 64
  bool mutant = false;
  Bug bug = Bug::none;
};

}  // namespace

std::unique_ptr<IndexerOps> make_cuda_select_ops() {
  return std::make_unique<common::host::SelectionOps<CudaSelectBackend>>("cuda_select", CudaSelectBackend{});
}

std::unique_ptr<IndexerOps> make_cuda_select_tree_ops() {
  CudaSelectBackend backend;
  backend.tree = true;
  return std::make_unique<common::host::SelectionOps<CudaSelectBackend>>("cuda_select_tree", backend);
}

std::unique_ptr<IndexerOps> make_cuda_select_mutant(Bug bug) {
  CudaSelectBackend backend;
  backend.tree = true;
  backend.mutant = true;
  backend.bug = bug;
  return std::make_unique<common::host::SelectionOps<CudaSelectBackend>>("cuda_select_mutant", backend);
}

}  // namespace dsa::cuda
