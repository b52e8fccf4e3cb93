// gfx942: the design's topk.select_candidates (the source layer): the best
// candidate blocks of each row, -1 in the empty slots.
// The shared TreeTopK over common::select::BlockScores (device/select/tree.hpp).
#include "../device/select/tree.hpp"

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kSelectThreads)
    dsa_gfx942_select_candidates(dsa::gfx942::TreeParams<dsa::common::select::BlockScores> p) {
  dsa::gfx942::select_tree(p);
}
