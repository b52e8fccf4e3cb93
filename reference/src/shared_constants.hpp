// Constants that several of the reference's source files use, defined once: a unity batch
// (cmake/DsaUnity.cmake) compiles several of these files as one translation unit.
#pragma once

#include <cstdint>
#include <limits>

namespace dsa {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
// Below this many logits a parallel region over the rows costs more than the rows (and on a loaded
// machine far more: idle threads spin).
inline constexpr int64_t kParallelLogits = int64_t(1) << 16;

}  // namespace dsa
