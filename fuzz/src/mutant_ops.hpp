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

// Every op is the reference's unless a subclass overrides it, so that the
// properties of a whole step (logits, then top-k, then candidates) all run.
class ReferenceWithBug : public IndexerOps {
public:
  explicit ReferenceWithBug(std::string name) : name_(std::move(name)), reference_(make_reference_ops()) {}
  std::string name() const override { return name_; }

  void decode_logits(const DecodeProblem& p, const Profile& profile, Logits& out) override {
    reference_->decode_logits(p, profile, out);
  }
  void prefill_logits(const PrefillProblem& p, const Profile& profile, Logits& out) override {
    reference_->prefill_logits(p, profile, out);
  }
  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    reference_->topk(logits, bounds, out);
  }
  void candidate_select(const Logits& logits, const RowBounds& bounds, CandidateBlocks& out) override {
    reference_->candidate_select(logits, bounds, out);
  }
  void candidate_topk(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    reference_->candidate_topk(logits, bounds, candidates, out);
  }
  void compact_candidate_logits(const DecodeProblem& p, const Profile& profile, const CandidateBlocks& candidates,
                                Logits& out) override {
    reference_->compact_candidate_logits(p, profile, candidates, out);
  }

protected:
  IndexerOps& reference() { return *reference_; }

private:
  std::string name_;
  std::unique_ptr<IndexerOps> reference_;
};

inline Mutant make_mutant(std::string name, std::string bug, std::string killed_by,
                          std::function<std::unique_ptr<IndexerOps>()> make) {
  Mutant m;
  m.name = std::move(name);
  m.bug = std::move(bug);
  m.killed_by = std::move(killed_by);
  m.make = std::move(make);
  return m;
}

// The parts of the catalog, one file each.
std::vector<Mutant> topk_mutants();       // mutants_topk.cpp: the top-k twins with a defect
std::vector<Mutant> logits_mutants();     // mutants_logits.cpp
std::vector<Mutant> candidate_mutants();  // mutants_candidates.cpp
std::vector<Mutant> comparator_mutants(); // mutants_comparator.cpp

}  // namespace dsa::fuzz::detail
