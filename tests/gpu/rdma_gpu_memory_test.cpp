// The rdma engine with GPU memory on the GPU machine, which has no RDMA device: the device
// region is allocated and exports its dma-buf (memory_region_test.cpp checks the export), and
// opening an rdma queue in it stops where the device is missing, with an error that says so
// and what to load. The registration itself (dma-buf, then nvidia-peermem) runs against a real
// RDMA device in the guest's Soft-RoCE lab (tests/integration/rdma/rdma_gpu_memory_test.cpp).
#include <unistd.h>

#include <string>

#include "core/memory_region.h"
#include "gpu_test_util.h"
#include "netdaq/engine_info.h"
#include "netdaq/engines/rdma.h"
#include "netdaq/session.h"

namespace netdaq::gpu {
namespace {

Config rdma_into_gpu(bool rx) {
  Config c;
  c.log.level = "off";
  c.memory_regions.push_back({.name = "gpu", .kind = MemoryKind::device, .buf_size = 4096, .num_bufs = 1024, .gpu = 0});
  InterfaceConfig i;
  i.name = rx ? "sensor" : "out";
  i.engine = kRdmaEngine;
  if (rx) {
    i.address = "rdma://127.0.0.1:7471";
    i.rx.queues.push_back({.id = 0, .batch_size = 32, .ring_depth = 16, .memory_regions = {"gpu"}});
  } else {
    i.tx.destination = "rdma://127.0.0.1:7471";
    i.tx.queues.push_back({.id = 0, .batch_size = 32, .ring_depth = 16, .memory_regions = {"gpu"}});
  }
  c.interfaces.push_back(i);
  return c;
}

TEST(RdmaGpuMemory, DeviceRegionIsValidAndItsDmaBufExportsForTheNic) {
  NDQ_REQUIRE_GPU();
  for (bool rx : {true, false}) EXPECT_TRUE(rdma_into_gpu(rx).validate().empty());
  auto r = detail::create_region(rdma_into_gpu(true).memory_regions[0]);
  // No dma-buf export here: the test did not run (a skip, which scripts/gpu-check.sh fails).
  if (std::string(r->gpudirect_path()) != "dmabuf")
    GTEST_SKIP() << "gpu 0: GPUDirect path '" << r->gpudirect_path()
                 << "', not dmabuf: the driver exports no dma-buf of device memory here (open kernel modules "
                    "and CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED needed)";
  const detail::DmaBuf buf = r->export_dmabuf();
  ASSERT_GE(buf.fd, 0);
  EXPECT_EQ(buf.size, r->size());
  std::printf("gpu 0: dma-buf fd of the %zu MiB device region exported\n", buf.size >> 20);
  close(buf.fd);
}

TEST(RdmaGpuMemory, NoRdmaDeviceStopsTheSessionWithWhatToLoad) {
  NDQ_REQUIRE_GPU();
  const auto info = engine_info(kRdmaEngine);
  ASSERT_TRUE(info.has_value());
  if (!info->built_in) GTEST_SKIP() << "the rdma engine is not built here (libibverbs-dev, librdmacm-dev)";
  for (bool rx : {true, false}) {
    try {
      Session s(rdma_into_gpu(rx));
      FAIL() << "an rdma session opened on a machine without RDMA devices";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(e.code(), Errc::not_found) << m;
      EXPECT_NE(m.find(std::string("rdma engine: interface '") + (rx ? "sensor" : "out") + "': no RDMA device on this host"),
                std::string::npos)
          << m;
      EXPECT_NE(m.find("mlx5_ib"), std::string::npos) << m;
      EXPECT_NE(m.find("rdma link add"), std::string::npos) << m;
      std::printf("%s: %s\n", rx ? "rx" : "tx", m.c_str());
    }
  }
}

}  // namespace
}  // namespace netdaq::gpu
