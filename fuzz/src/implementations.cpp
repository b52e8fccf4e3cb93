#include "dsa/fuzz/implementations.hpp"

#include "dsa/error.hpp"
#include "dsa/fuzz/external.hpp"
#include "dsa/optimized/implementations.hpp"

namespace dsa::fuzz {

std::vector<std::string> implementation_names() {
  std::vector<std::string> names = optimized::implementation_names();
  names.push_back(std::string(kExternalPrefix) + "COMMAND");
  return names;
}

std::unique_ptr<IndexerOps> make_implementation(std::string_view name) {
  if (name.starts_with(kExternalPrefix)) return make_external_ops(std::string(name.substr(kExternalPrefix.size())));
  const optimized::Implementation& entry = optimized::find_implementation(name);
  if (!entry.available())
    throw InvalidInput("impl", entry.name + " is built but cannot run here (it runs on " +
                                   std::string(optimized::to_string(entry.device)) + ", and none is present)");
  return entry.make();
}

Contract implementation_contract(std::string_view name) {
  if (!name.starts_with(kExternalPrefix)) return optimized::find_implementation(name).contract;
  Contract any;
  for (const Op op : all_ops()) any.ops.insert(op);
  return any;
}

}  // namespace dsa::fuzz
