// libFuzzer: the golden-case validation (dataset/src/golden_case_*.cpp) on any
// safetensors file: as a kernel's inputs (`dsa-oracle reference`), as a golden
// file (`dsa-oracle check`), and a kernel's outputs against the golden case.
#include <span>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/dataset/safetensors.hpp"
#include "harness.hpp"

DSA_FUZZ_INIT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dsa::fuzz_harness::run([&] {
    const auto file = dsa::dataset::parse_safetensors(std::span(data, size), "input");
    dsa::fuzz_harness::run([&] { dsa::dataset::read_case_inputs(file); });
    const auto golden = dsa::dataset::read_golden_case(file);
    dsa::dataset::read_outputs(file, golden, false);
  });
}
