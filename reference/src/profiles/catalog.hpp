// The named profiles, one definition per kernel family (internal to the
// registry). Each returns the profile as data; the registry owns the objects.
#pragma once

#include <string>

#include "dsa/profile.hpp"

namespace dsa::profiles {

Profile exact();
Profile deepgemm_sm90();
Profile deepgemm_sm100();
Profile deepgemm_sm100_bf16();
Profile aiter_gfx942_gluon();
Profile dsa_gfx942();
Profile vllm_triton_c4a();
Profile dsa_sm90();
Profile dsa_sm90_accurate();

// Throws InvalidInput("heads", ...) unless heads > 0 and heads % multiple == 0.
void require_heads_multiple(const char* profile, int heads, int multiple, const std::string& why);

}  // namespace dsa::profiles
