// The CUDA mutants: the selection kernel (optimized/cuda, the shared code of
// optimized/common/select) with one bug of select::Bug compiled in, as the
// reference's top-k. They show the oracle seeing a real kernel's bugs on the
// GPU, not only a twin's. Present only in a build with DSA_CUDA_MUTANTS (the
// GPU bundle); elsewhere this part of the catalog is empty.
#include "mutant_ops.hpp"

#if defined(DSA_WITH_CUDA_MUTANTS)
#include "dsa/optimized/cuda/select_ops.hpp"
#include "dsa/optimized/implementations.hpp"
#endif

namespace dsa::fuzz::detail {

#if defined(DSA_WITH_CUDA_MUTANTS)
namespace {

using common::select::Bug;

class CudaTopk final : public ForwardingOps {
public:
  CudaTopk(std::string name, Bug bug) : ForwardingOps(std::move(name)), kernel_(cuda::make_cuda_select_mutant(bug)) {}
  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    kernel_->topk(logits, bounds, out);
  }

private:
  std::unique_ptr<IndexerOps> kernel_;
};

Mutant cuda_mutant(std::string name, Bug bug, std::string what, const char* killed_by) {
  Mutant m =
      make_mutant(name, std::move(what), killed_by, [name, bug] { return std::make_unique<CudaTopk>(name, bug); });
  m.runs_here = [] { return optimized::find_implementation("cuda_select").available(); };
  return m;
}

}  // namespace

std::vector<Mutant> cuda_mutants() {
  std::vector<Mutant> m;
  m.push_back(cuda_mutant("cuda_select_emit_coarse_twice", Bug::emit_coarse_twice,
                          "The class of vLLM top_k_per_row's duplicates (SPEC 10) in our CUDA kernel: the first "
                          "radix pass emits the entries above its threshold bin, and the final emit emits them "
                          "again, so a row needing more than one pass holds duplicates and misses entries.",
                          property::kTopkAgrees));
  m.push_back(cuda_mutant("cuda_select_list_drops_overflow", Bug::list_drops_overflow,
                          "The class of vLLM persistent_topk #51782 (SPEC 10) in our CUDA kernel: a first-pass "
                          "threshold bin larger than the list (1024 entries a block) is truncated to it instead of "
                          "being refined in registers: k distinct indices, the wrong ones.",
                          property::kTopkAgrees));
  m.push_back(cuda_mutant("cuda_select_nan_ieee_ties", Bug::nan_ieee_ties,
                          "The class of vLLM PR #50201 (SPEC 10) in our CUDA kernel: the entries at an exact cut "
                          "are found by float ==, which no NaN passes, so a NaN-dominated row emits fewer than k "
                          "indices.",
                          property::kTopkAgrees));
  m.push_back(cuda_mutant("cuda_select_ring_follows_selection", Bug::ring_follows_selection,
                          "The class of vLLM persistent_topk PR #49139 (SPEC 10) in our CUDA kernel: the ring of "
                          "three histograms moves on by three per selection, as if each ran three passes; after a "
                          "selection that stopped early the block's next one (a merge, or its next row) starts on "
                          "a slot still holding counts.",
                          property::kTopkAgrees));
  m.push_back(cuda_mutant("cuda_select_ties_by_arrival", Bug::ties_by_arrival,
                          "The class of AITER #4376 (SPEC 10) in our CUDA kernel: entries tied at the cut are taken "
                          "in the order they reach an atomic counter, and a leaf takes its slot in the merge by "
                          "arrival, so two runs choose different sets (each one a valid top-k).",
                          property::kDeterminism));
  return m;
}
#else
std::vector<Mutant> cuda_mutants() { return {}; }
#endif

}  // namespace dsa::fuzz::detail
