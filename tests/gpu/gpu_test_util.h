// GPU tests skip, saying why, where no GPU is usable (CI); they run on the GPU machine.
#pragma once

#include <gtest/gtest.h>

#include "netdaq/gpu.h"

#define NDQ_REQUIRE_GPU()                                                            \
  do {                                                                               \
    if (::netdaq::gpu::device_count() == 0)                                          \
      GTEST_SKIP() << "GPU test skipped: " << ::netdaq::gpu::unavailable_reason();   \
  } while (0)
