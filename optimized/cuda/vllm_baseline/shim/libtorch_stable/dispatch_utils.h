// Stand-in for vLLM's dispatch_utils.h (see ../cuda_compat.h): the one
// dispatch macro the fetched file uses, for float only.
#pragma once
#define VLLM_STABLE_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  [&] {                                                      \
    using scalar_t = float;                                  \
    return __VA_ARGS__();                                    \
  }()
