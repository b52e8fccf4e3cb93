// libFuzzer: the replay parser of `dsa-oracle fuzz --replay` (fuzz/src/cases_json.cpp,
// cases_validate.cpp): JSON text in, a validated case whose arrays are built, or InvalidInput.
#include <string_view>

#include "dsa/dataset/json_input.hpp"
#include "dsa/fuzz/cases.hpp"
#include "harness.hpp"

// Cases are built: keep them small enough that each input runs in milliseconds.
DSA_FUZZ_INIT_WITH("64M")

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dsa::fuzz_harness::run([&] {
    const auto json = dsa::dataset::parse_json(std::string_view(reinterpret_cast<const char*>(data), size), "replay");
    const dsa::fuzz::FuzzCase c = dsa::fuzz::case_from_json(json);
    // What was accepted prints and round-trips.
    dsa::fuzz::describe(c);
    if (dsa::fuzz::to_json(dsa::fuzz::case_from_json(dsa::fuzz::to_json(c))) != dsa::fuzz::to_json(c)) std::abort();
  });
}
