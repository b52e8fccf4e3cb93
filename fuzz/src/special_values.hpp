// The fuzzer's special floats, defined once: the library is compiled several sources to a translation
// unit (cmake/DsaUnity.cmake), where file-local copies of one name would collide.
#pragma once

#include <limits>

namespace dsa::fuzz::detail {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace dsa::fuzz::detail
