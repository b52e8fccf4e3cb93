// Implementations under test by name, as `dsa-oracle fuzz --impl NAME` takes
// them: "reference", the CPU twins (optimized/cpu: cpu_radix_topk,
// cpu_persistent_topk, cpu_compact_candidates), and "external:COMMAND".
// Mutants are not here: only the fuzzer's --mutant option and the tests reach them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dsa/indexer_ops.hpp"

namespace dsa::fuzz {

inline constexpr std::string_view kExternalPrefix = "external:";

std::vector<std::string> implementation_names();  // the fixed names, then "external:COMMAND"
// Throws InvalidInput("impl", ...) listing the names for an unknown one.
std::unique_ptr<IndexerOps> make_implementation(std::string_view name);

}  // namespace dsa::fuzz
