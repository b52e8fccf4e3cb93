// Constants that several of the oracle's source files use, defined once: a unity batch
// (cmake/DsaUnity.cmake) compiles several of these files as one translation unit.
#pragma once

#include <limits>

namespace dsa::oracle {

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

}  // namespace dsa::oracle
