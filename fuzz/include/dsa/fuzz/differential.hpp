// Differential fuzzing (`dsa-oracle fuzz --impl NEW --against OLD`): both
// implementations run on every drawn case, in process or external in any mix,
// and are held to each other by properties that need no reference:
//   - against_logits: every logits-like output (decode, compact, fused
//     compact, SM100 sparse, prefill, prefill compact) bit-identical to the
//     other's over each row's window, any NaN equal to any NaN;
//   - against_selections: every selection (top-k, candidate blocks,
//     candidate top-k, the fused launch's top-k, the SM100 sparse top-k)
//     obeying the oracle's rule on its own values on both sides, and the same
//     sets wherever the values the two read are identical; the sparse block
//     ids and unpacked rows equal.
// This is how a kernel with no profile is held to its previous version, and
// how two kernels that claim the same arithmetic are held to each other.
// An op only one of the two takes is not compared; a case where they share
// none is unsupported, never a pass. Shrinking and replay are the campaign's.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dsa/fuzz/properties.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::fuzz {

namespace property {
inline constexpr const char* kAgainstLogits = "against_logits";
inline constexpr const char* kAgainstSelections = "against_selections";
}  // namespace property

using MakeImpl = std::function<std::unique_ptr<IndexerOps>()>;

struct AgainstOptions {
  // Rows whose sets differ only among the ties at the cut fail by default
  // (the sets are not identical: tensor-parallel ranks running the two would
  // disagree); with ties_legal they pass (two kernels that break ties
  // differently on purpose, each obeying the rule).
  bool ties_legal = false;
};

// The differential properties, each bound to `make_against`: its check runs
// the implementation it is given and a fresh instance of the other on one case.
std::vector<Property> against_properties(MakeImpl make_against, AgainstOptions options = {});
std::vector<std::string> against_property_names();
// One of `properties` by name; InvalidInput("property", ...) listing them otherwise.
const Property& find_property_in(const std::vector<Property>& properties, std::string_view name);

}  // namespace dsa::fuzz
