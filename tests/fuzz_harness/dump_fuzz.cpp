// libFuzzer: the matrix-unit dump reader of `dsa-oracle mma-check`
// (reference/src/mma/dump_check.cpp): with its own header, and headerless
// under a model. It reads files, so each input goes through one in /dev/shm.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "dsa/mma/dump_check.hpp"
#include "harness.hpp"

DSA_FUZZ_INIT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/dev/shm/dsa_dump_fuzz_" + std::to_string(getpid()) + ".bin";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  dsa::fuzz_harness::run([&] { dsa::mma::check_dump(path, std::nullopt, std::nullopt); });
  dsa::fuzz_harness::run([&] { dsa::mma::check_dump(path, dsa::mma::Model::sm90_mma_sync_e4m3, std::nullopt); });
  std::remove(path.c_str());
  return 0;
}
