// Implementations under test by name, as `dsa-oracle fuzz --impl NAME` takes
// them: the entries of the table (optimized/implementations.hpp), and
// "external:COMMAND", the one implementation made at run time.
// Mutants are not here: only the fuzzer's --mutant option and the tests reach them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dsa/contract.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::fuzz {

inline constexpr std::string_view kExternalPrefix = "external:";

std::vector<std::string> implementation_names();  // the table's names, then "external:COMMAND"
// Throws InvalidInput("impl", ...) listing the names for an unknown one, and
// for an entry that is built but cannot run on this machine (no GPU).
std::unique_ptr<IndexerOps> make_implementation(std::string_view name);
// What a harness may hand it: a table entry's contract; for an external
// command every op and any profile (the calls it does not take it answers
// with exit 3, which a harness counts as not run).
Contract implementation_contract(std::string_view name);

}  // namespace dsa::fuzz
