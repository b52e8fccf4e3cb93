// libFuzzer: the safetensors container reader (dataset/src/safetensors_io.cpp).
#include <span>

#include "dsa/dataset/safetensors.hpp"
#include "harness.hpp"

DSA_FUZZ_INIT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dsa::fuzz_harness::run([&] {
    const auto st = dsa::dataset::parse_safetensors(std::span(data, size), "input");
    // What the reader accepted must write back and read again to the same content.
    const auto again = dsa::dataset::parse_safetensors(dsa::dataset::serialize_safetensors(st), "again");
    if (again.names() != st.names() || again.metadata != st.metadata) std::abort();
  });
}
