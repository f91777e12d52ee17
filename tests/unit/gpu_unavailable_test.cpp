// Without a usable GPU (CI: no driver), the GPU entry points say why instead of failing oddly.
#include <gtest/gtest.h>

#include "netdaq/gpu.h"

namespace netdaq::gpu {
namespace {

TEST(GpuUnavailable, ReasonIsGivenWhenThereIsNoGpu) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is usable here; this test covers machines without one";
  const std::string why = unavailable_reason();
  EXPECT_FALSE(why.empty());
  EXPECT_TRUE(devices().empty());
}

}  // namespace
}  // namespace netdaq::gpu
