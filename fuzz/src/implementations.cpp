#include "dsa/fuzz/implementations.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsa/error.hpp"
#include "dsa/fuzz/external.hpp"
#include "dsa/optimized/cpu_twins.hpp"

namespace dsa::fuzz {

std::vector<std::string> implementation_names() {
  std::vector<std::string> names = {"reference"};
  for (const std::string& twin : optimized::cpu_twin_names()) names.push_back(twin);
  names.push_back(std::string(kExternalPrefix) + "COMMAND");
  return names;
}

std::unique_ptr<IndexerOps> make_implementation(std::string_view name) {
  if (name == "reference") return make_reference_ops();
  if (name.starts_with(kExternalPrefix)) return make_external_ops(std::string(name.substr(kExternalPrefix.size())));
  for (const std::string& twin : optimized::cpu_twin_names())
    if (name == twin) return optimized::make_cpu_twin(name);
  throw InvalidInput("impl", fmt::format("unknown implementation '{}' (known: {})", name,
                                         fmt::join(implementation_names(), ", ")));
}

}  // namespace dsa::fuzz
