#include "code_objects.hpp"
#include "dsa/optimized/hip/launch.hpp"
#include "hip_runtime.hpp"

namespace dsa::gfx942 {

bool device_available() { return detail::runtime(nullptr) != nullptr; }

bool code_objects_built() { return detail::code_object_count() > 0; }

}  // namespace dsa::gfx942
