// What the GPU test files share: the skip where no sm_90 GPU is (the test reports skipped, never
// passed).
#pragma once

#include <gtest/gtest.h>

#include "dsa/optimized/cuda/runtime.hpp"

#define REQUIRE_SM90()                                                                                  \
  do {                                                                                                  \
    if (!::dsa::cuda::sm90_available())                                                                 \
      GTEST_SKIP() << "no sm_90 GPU: "                                                                  \
                   << (::dsa::cuda::device_info().present ? ::dsa::cuda::device_info().name             \
                                                          : ::dsa::cuda::device_info().why_absent);     \
  } while (0)
