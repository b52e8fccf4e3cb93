// libFuzzer: the .npy reader (dataset/src/npy.cpp) and its typed accessors.
#include <span>

#include "dsa/dataset/npz.hpp"
#include "harness.hpp"

DSA_FUZZ_INIT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dsa::fuzz_harness::run([&] {
    const auto a = dsa::dataset::parse_npy(std::span(data, size), "input");
    dsa::fuzz_harness::run([&] { a.integers(); });
    dsa::fuzz_harness::run([&] { a.f32(); });
    dsa::fuzz_harness::run([&] { a.text(); });
  });
}
