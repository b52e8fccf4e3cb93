// The selection kernel with each bug of select::Bug compiled in: only in a
// build with DSA_CUDA_MUTANTS (the GPU bundle), for the mutant catalog's
// CUDA entries (docs/mutants.md). The library's own kernels are Bug::none.
#include "dsa/error.hpp"
#include "dsa/optimized/cuda/select.hpp"
#include "select_launch.cuh"

namespace dsa::cuda {

using common::select::Bug;
using common::select::DenseRows;

bool select_mutants_built() { return true; }

void launch_select_mutant(Bug bug, const DenseRows& src, const common::select::TreePlan& plan,
                          const common::select::TreeOutput& out, void* stream) {
  namespace sk = select_kernels;
  switch (bug) {
    case Bug::none: return sk::launch<DenseRows, Bug::none>(src, plan, out, stream);
    case Bug::emit_coarse_twice: return sk::launch<DenseRows, Bug::emit_coarse_twice>(src, plan, out, stream);
    case Bug::list_drops_overflow: return sk::launch<DenseRows, Bug::list_drops_overflow>(src, plan, out, stream);
    case Bug::nan_ieee_ties: return sk::launch<DenseRows, Bug::nan_ieee_ties>(src, plan, out, stream);
    case Bug::ring_follows_selection: return sk::launch<DenseRows, Bug::ring_follows_selection>(src, plan, out, stream);
    case Bug::ties_by_arrival: return sk::launch<DenseRows, Bug::ties_by_arrival>(src, plan, out, stream);
  }
  throw InvalidInput("bug", "unknown selection bug " + std::to_string(int(bug)));
}

}  // namespace dsa::cuda
