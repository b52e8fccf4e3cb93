// A kernel's contract, declared once (issue 11): the ops an implementation
// takes, the profile whose arithmetic it claims, and the shapes of the calls
// it takes. A harness runs (and a fuzzer draws) only inside it, instead of
// paying a launch for every call the kernel refuses, and judges the
// implementation against the claimed profile without being told.
//
// Every clause defaults to "anything": an empty list takes every value. The
// table of implementations (optimized/implementations.hpp) fills one per
// entry; an external command will declare one too.
#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "dsa/indexer_ops.hpp"
#include "dsa/kcache.hpp"
#include "dsa/problem.hpp"

namespace dsa {

struct Contract {
  std::set<Op> ops;  // the ops it implements; an op outside throws Unsupported
  // The profile whose arithmetic its logits copy; "" when it takes any
  // profile (the reference) or computes no logits (selection only).
  std::string profile;
  std::vector<CacheLayout> cache_layouts;  // decode K cache layouts
  std::vector<int32_t> page_sizes;         // entries per cache page (the cache's block_size)
  int32_t min_next_n = 1;                  // rows per decode request
  int32_t max_next_n = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> heads;      // H
  std::vector<int32_t> head_dims;  // D
  std::vector<int32_t> k_values;   // the top-k sizes k it takes (SGLang's indexer top-k: {2048})
  // Entries per candidate block of the candidate ops (the SM90 compact kernel stages 8 to 64).
  std::vector<int32_t> candidate_block_sizes;
  bool row_starts = true;          // prefill rows with ks > 0
  bool lens_1d = true;             // decode seq_lens [B] (one length per request)
  bool lens_2d = true;             // decode seq_lens [B, next_n] (one length per row)
  // 2-D lengths must not fall within a request (row j + 1 sees at least what
  // row j sees): DeepGEMM computes each request up to its last row's length,
  // as vLLM always arranges.
  bool rising_2d_lens = false;

  bool takes(Op op) const { return ops.contains(op); }
  // Whether its logits may be judged against `profile_name`: its own profile, or a registered one of the
  // same arithmetic (same_arithmetic: DeepGEMM's deepgemm_sm90 sets judge a kernel claiming dsa_sm90).
  bool claims_profile(const std::string& profile_name) const;

  // The first clause a call breaks, in words ("page size 16 (takes 64)");
  // empty when the call is inside the contract.
  std::string refusal(const DecodeProblem& problem) const;
  std::string refusal(const PrefillProblem& problem) const;
  std::string refusal_k(int32_t k) const;
  std::string refusal_candidate_block(int32_t block_size) const;
};

// "any" or the list, for reports.
std::string describe(const Contract& contract);

// The calls both contracts take (a differential run, `fuzz --against`, gives
// each case to two implementations): the shared ops, each list's common
// values, the tighter next_n range and flags. Throws InvalidInput("contract",
// ...) naming the clause when they share no value of it (`a_name` and
// `b_name` name the two in the message).
Contract both(const Contract& a, const Contract& b, const std::string& a_name, const std::string& b_name);

}  // namespace dsa
