// The CPU twins by name, as `--impl NAME` selects them: cpu_radix_topk
// (vLLM top_k_per_row), cpu_persistent_topk (vLLM persistent_topk) and
// cpu_compact_candidates (the consumer layers' compact-candidate path). Each
// takes only its own ops and throws dsa::Unsupported for the others.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dsa/indexer_ops.hpp"

namespace dsa::optimized {

std::vector<std::string> cpu_twin_names();
// Throws InvalidInput("impl", ...) for an unknown name, listing the known ones.
std::unique_ptr<IndexerOps> make_cpu_twin(std::string_view name);

}  // namespace dsa::optimized
