// gfx942: the design's topk.candidate_top_k (the consumer layers): the top k
// among the candidate blocks' columns, no mask pass over the dense row.
// The shared TreeTopK over common::select::CandidateColumns (device/select/tree.hpp).
#include "../device/select/tree.hpp"

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kSelectThreads)
    dsa_gfx942_candidate_top_k(dsa::gfx942::TreeParams<dsa::common::select::CandidateColumns> p) {
  dsa::gfx942::select_tree(p);
}
