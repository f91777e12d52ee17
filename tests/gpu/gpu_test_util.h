// GPU tests skip, saying why, where no GPU is usable (CI); they run on the GPU machine.
// NETDAQ_REQUIRE_GPU=1 (set by scripts/gpu-check.sh) turns that skip into a failure, so a
// driver or visibility problem on the GPU machine cannot read as a green run.
#pragma once

#include <gtest/gtest.h>

#include "../require_env.h"
#include "netdaq/gpu.h"

#define NDQ_REQUIRE_GPU()                                                                        \
  do {                                                                                           \
    if (::netdaq::gpu::device_count() == 0) {                                                    \
      if (::ndqtest::gpu_required())                                                             \
        FAIL() << "no usable GPU (NETDAQ_REQUIRE_GPU=1: GPU tests must run): "                   \
               << ::netdaq::gpu::unavailable_reason();                                           \
      GTEST_SKIP() << "GPU test skipped: " << ::netdaq::gpu::unavailable_reason();               \
    }                                                                                            \
  } while (0)
