// What every libFuzzer harness shares: the only exception a reader may throw
// on bad input is dsa::InvalidInput; anything else (a crash, a sanitizer
// report, std::bad_alloc, another exception type escaping) is a finding.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>

#include "dsa/error.hpp"

namespace dsa::fuzz_harness {

// Readers refuse work past the memory bound; keep it well inside libFuzzer's
// own limit (-rss_limit_mb, 2 GB by default) so that a refusal is not an OOM finding.
inline void bound_memory(const char* limit = "256M") { setenv("DSA_MEMORY_LIMIT", limit, 0); }

inline int run(const std::function<void()>& read) {
  try {
    read();
  } catch (const InvalidInput&) {
  }
  return 0;
}

}  // namespace dsa::fuzz_harness

#define DSA_FUZZ_INIT_WITH(limit)                     \
  extern "C" int LLVMFuzzerInitialize(int*, char***) { \
    dsa::fuzz_harness::bound_memory(limit);            \
    return 0;                                          \
  }
#define DSA_FUZZ_INIT DSA_FUZZ_INIT_WITH("256M")
