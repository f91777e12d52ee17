// The GPUs netdaq sees, and the clear errors when one is missing.
#include <gtest/gtest.h>

#include "gpu/cuda_check.h"
#include "gpu_test_util.h"

namespace netdaq::gpu {
namespace {

TEST(GpuDevices, ListsEveryDeviceWithItsCapabilities) {
  NDQ_REQUIRE_GPU();
  const auto devs = devices();
  ASSERT_EQ(static_cast<int>(devs.size()), device_count());
  for (const auto& d : devs) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.compute_major, 7);
    EXPECT_GT(d.memory_bytes, 1ull << 30);
    EXPECT_GT(d.multiprocessors, 0);
    std::printf("gpu %d: %s cc %d.%d, %d SMs, %.1f GiB, pci %s, dma-buf %s, peermem %s\n", d.index, d.name.c_str(),
                d.compute_major, d.compute_minor, d.multiprocessors, d.memory_bytes / double(1ull << 30),
                d.pci_bus_id.c_str(), d.dmabuf ? "yes" : "no", d.peermem ? "yes" : "no");
  }
  EXPECT_EQ(unavailable_reason(), "");
}

TEST(GpuDevices, WrongIndexNamesTheGpusThatExist) {
  NDQ_REQUIRE_GPU();
  try {
    use_device(device_count() + 3, "test");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_config);
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(devices()[0].name), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace netdaq::gpu
