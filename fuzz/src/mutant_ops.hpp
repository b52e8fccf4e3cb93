// Mutants as implementations under test: the reference with one op replaced
// by a re-creation of a real bug. Internal to fuzz/.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dsa/fuzz/mutants.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::fuzz::detail {

inline Mutant make_mutant(std::string name, std::string bug, std::string killed_by,
                          std::function<std::unique_ptr<IndexerOps>()> make) {
  Mutant m;
  m.name = std::move(name);
  m.bug = std::move(bug);
  m.killed_by = std::move(killed_by);
  m.make = std::move(make);
  return m;
}

// A mutant whose implementation is `Bug` (a ForwardingOps over the reference
// with the buggy op overridden), built with the mutant's name.
template <class Bug>
Mutant mutant(std::string name, std::string bug, std::string killed_by) {
  return make_mutant(name, std::move(bug), std::move(killed_by), [name] { return std::make_unique<Bug>(name); });
}

// The parts of the catalog, one file each.
std::vector<Mutant> topk_mutants();       // mutants_topk.cpp: the top-k twins with a defect
std::vector<Mutant> logits_mutants();     // mutants_logits.cpp
std::vector<Mutant> candidate_mutants();  // mutants_candidates.cpp
std::vector<Mutant> comparator_mutants(); // mutants_comparator.cpp
std::vector<Mutant> cuda_mutants();       // mutants_cuda.cpp: the CUDA selection kernel with a bug (GPU bundle only)

}  // namespace dsa::fuzz::detail
