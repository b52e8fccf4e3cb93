#include "dsa/optimized/cpu_twins.hpp"

#include "dsa/error.hpp"
#include "dsa/optimized/compact_candidates.hpp"
#include "dsa/optimized/persistent_topk.hpp"
#include "dsa/optimized/radix_topk.hpp"

namespace dsa::optimized {

std::vector<std::string> cpu_twin_names() { return {"cpu_radix_topk", "cpu_persistent_topk", "cpu_compact_candidates"}; }

std::unique_ptr<IndexerOps> make_cpu_twin(std::string_view name) {
  if (name == "cpu_radix_topk") return make_cpu_radix_topk();
  if (name == "cpu_persistent_topk") return make_cpu_persistent_topk();
  if (name == "cpu_compact_candidates") return make_cpu_compact_candidates();
  std::string known;
  for (const auto& n : cpu_twin_names()) known += (known.empty() ? "" : ", ") + n;
  throw InvalidInput("impl", "unknown CPU twin '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace dsa::optimized
