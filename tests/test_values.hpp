// The special floats and a float's bits, defined once for every test file. Test files are compiled
// several to a translation unit (cmake/DsaUnity.cmake): the support headers' namespaces name these
// entities with `using`, so two files of one batch never define the same name twice.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace dsa::test {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

inline uint32_t bits_of(float v) { return std::bit_cast<uint32_t>(v); }

}  // namespace dsa::test
