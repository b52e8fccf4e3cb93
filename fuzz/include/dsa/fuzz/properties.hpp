// The properties the fuzzer checks on an implementation under test, named by
// the dsa::fuzz::property constants (mutants.hpp):
//   - agreement with the reference under the oracle's rules (logits bitwise,
//     top-k with ties at the cut, candidate sets, compact logits);
//   - metamorphic relations that need no reference (page permutation,
//     compact = dense, padded = unpadded, columns past the row ignored,
//     mask-then-top-k = candidate top-k);
//   - determinism and "every entry written" (poisoned outputs).
// An implementation that answers Unsupported for every op a case needs gives
// the verdict `unsupported`: counted apart, never a pass.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dsa/fuzz/cases.hpp"
#include "dsa/fuzz/generators.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::fuzz {

enum class Verdict : uint8_t { pass, fail, unsupported };

struct Outcome {
  Verdict verdict = Verdict::pass;
  std::string message;  // on failure: what broke, with the oracle's table
};

// Case kinds as bits (the index of the kind in FuzzCase): the kinds a
// property draws, narrowed to those an implementation takes.
using KindMask = uint8_t;
inline constexpr KindMask kAllKinds = 0xF;
inline KindMask kind_bit(const FuzzCase& c) { return KindMask(1u << c.index()); }

struct Property {
  std::string name;
  std::string description;
  KindMask kinds = 0;  // the case kinds it takes
  // The cases it draws, of the kinds in `kinds & mask` (mask never empty there).
  std::function<rc::Gen<FuzzCase>(const GenLimits&, KindMask mask)> gen;
  std::function<Outcome(IndexerOps&, const FuzzCase&)> check;  // runs the implementation on one case
  // Small cases, one per kind it takes: an implementation that answers
  // Unsupported on a kind's probe is never given that kind.
  std::function<std::vector<FuzzCase>()> probes;
  // Run only when asked for by name: a rule that only some implementations
  // promise (clean logits rows), not part of "every property".
  bool opt_in = false;
};

// Every property, in a fixed order.
const std::vector<Property>& properties();
// The names a campaign runs by default: every property that is not opt-in.
std::vector<std::string> default_property_names();
// Throws InvalidInput("property", ...) listing the names for an unknown one.
const Property& find_property(std::string_view name);
std::vector<std::string> property_names();

// Runs one property on one case. A case of a kind the property does not take
// throws InvalidInput("replay", ...). Exceptions of the implementation other
// than Unsupported are failures (their message is the outcome's).
Outcome check_case(const Property& property, IndexerOps& impl, const FuzzCase& c);

// The kinds of `property` that `impl` takes (its probes not Unsupported); 0: none.
KindMask supported_kinds(const Property& property, IndexerOps& impl);
// The same inside a contract: each probe moved inside it (generators.hpp,
// fitted); a kind whose probe cannot be (or cannot be built there) is never drawn.
KindMask supported_kinds(const Property& property, IndexerOps& impl, const Contract& contract);
// The property's probes inside the contract (those that fit and build).
std::vector<FuzzCase> contract_probes(const Property& property, const Contract& contract);

}  // namespace dsa::fuzz
