// gfx942: the design's topk.decode_top_k (and the topk op): the top k of each
// row's columns, -1 tail.
// The shared TreeTopK over common::select::DenseRows (device/select/tree.hpp).
#include "../device/select/tree.hpp"

extern "C" __global__ void __launch_bounds__(dsa::gfx942::kSelectThreads)
    dsa_gfx942_decode_top_k(dsa::gfx942::TreeParams<dsa::common::select::DenseRows> p) {
  dsa::gfx942::select_tree(p);
}
