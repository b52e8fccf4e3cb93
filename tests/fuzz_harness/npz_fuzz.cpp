// libFuzzer: the .npz (zip) reader (dataset/src/npz.cpp).
#include <span>

#include "dsa/dataset/npz.hpp"
#include "harness.hpp"

DSA_FUZZ_INIT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dsa::fuzz_harness::run([&] {
    const auto npz = dsa::dataset::NpzFile::parse(std::span(data, size), "input.npz");
    for (const auto& name : npz.names()) dsa::fuzz_harness::run([&] { npz.at(name).integers(); });
  });
}
