// The gfx942 kernels as an implementation under test (IndexerOps): the host
// problem is copied to the device, the caller's output buffers with it as they
// are (poison included), the launch runs, and the whole buffers come back
// (indexer_ops.hpp's device contract). Arithmetic: the profile dsa_gfx942 (or
// aiter_gfx942_gluon, the same). Ops: decode_logits, candidate_logits_top_k,
// topk (decode rows, k = 512), candidate_select, candidate_topk (k = 512),
// skip_decode_fill. A call a launch refuses, and every call on a machine
// without a gfx942 device, throws Unsupported with the launch's reason.
#pragma once

#include <memory>

#include "dsa/indexer_ops.hpp"

namespace dsa::gfx942 {

std::unique_ptr<IndexerOps> make_gfx942_ops();

}  // namespace dsa::gfx942
