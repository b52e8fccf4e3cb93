// The mutant catalog (docs/mutants.md): every bug class of SPEC 10 and the
// classic ones, each a named implementation under test with one bug compiled in.
#include "dsa/fuzz/mutants.hpp"

#include "mutant_ops.hpp"

namespace dsa::fuzz {

const std::vector<Mutant>& mutant_catalog() {
  static const std::vector<Mutant> catalog = [] {
    std::vector<Mutant> all;
    for (auto part : {detail::topk_mutants, detail::logits_mutants, detail::candidate_mutants,
                      detail::comparator_mutants, detail::cuda_mutants}) {
      auto more = part();
      all.insert(all.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
    return all;
  }();
  return catalog;
}

}  // namespace dsa::fuzz
