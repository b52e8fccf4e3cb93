// Helpers of the mutant tests: a mutant of the catalog by name, decode steps
// built by hand, and the oracle comparators each named property stands for.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "candidate_test_support.hpp"
#include "dsa/fuzz/mutants.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/report.hpp"
#include "twins_test_support.hpp"

namespace dsa::mutants_testing {

inline const fuzz::Mutant& mutant(const std::string& name) {
  for (const auto& m : fuzz::mutant_catalog())
    if (m.name == name) return m;
  throw std::runtime_error("no mutant " + name);
}

inline std::unique_ptr<IndexerOps> make(const std::string& name) { return mutant(name).make(); }

using oracle::poisoned_logits;

// An implementation's decode logits, into a poisoned buffer.
inline Logits run_decode(IndexerOps& ops, const DecodeProblem& p, const Profile& profile) {
  Logits out = poisoned_logits(p.rows(), p.logits_width);
  ops.decode_logits(p, profile, out);
  return out;
}

inline oracle::LogitsCheckOptions bitwise(bool clean = false) {
  oracle::LogitsCheckOptions o;
  o.poison_bits = oracle::kPoisonF32Bits;
  o.clean = clean;
  return o;
}

// logits_agree (clean: logits_agree_clean): the implementation's decode logits
// against the reference's, bit for bit over [0, L_r).
inline oracle::LogitsVerdict logits_verdict(IndexerOps& ops, const DecodeProblem& p, const Profile& profile,
                                            bool clean = false) {
  const Logits got = run_decode(ops, p, profile);
  const Logits want = decode_logits(p, profile).logits;
  return oracle::check_logits(got, want, visible_lens(p), bitwise(clean));
}

// A small decode step (bf16 weights, block-flat or the element's layout).
inline DecodeProblem step(ElementFormat element, int32_t heads, std::vector<int32_t> seq_lens, int32_t next_n,
                          uint64_t seed, int32_t block_size = 16) {
  return testing::small_decode_problem(element, heads, 64, std::move(seq_lens), next_n, seed, block_size);
}

}  // namespace dsa::mutants_testing
