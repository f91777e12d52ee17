// GPU-driven receive (netdaq/gpu_xsk.h): a persistent kernel owns an afxdp queue's RX and fill
// rings on a veth between two namespaces; every frame byte-checked against what the sender
// sent, every packet's fate counted (the scenarios of tests/integration/xsk_frames_scenario.h,
// which CI runs with the CPU driver). Needs root, the afxdp engine and `ip` (scripts/gpu-check.sh
// carries libxdp, libbpf and iproute2 to the GPU machine).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "../integration/afxdp_util.h"
#include "../integration/xsk_frames_scenario.h"
#include "gpu_test_util.h"
#include "netdaq/gpu_xsk.h"

namespace ndqtest {
namespace {

using namespace netdaq;
using gpu::XskFrameReceiver;

XskScenario gpu_scenario() {
  XskScenario s;
  s.driver = XskFrameReceiver::Driver::gpu;
  s.region = MemoryKind::mapped;
  s.read_frame = [](const gpu::Frame& f) {
    std::vector<std::byte> b(f.size_bytes());
    EXPECT_EQ(cudaMemcpy(b.data(), f.data(), b.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    return b;
  };
  return s;
}

TEST(XskGpuReceive, GpuKernelPlacesEveryPacketAndCountsEveryFate) {
  NDQ_REQUIRE_GPU();
  xsk_every_fate(gpu_scenario());
}

TEST(XskGpuReceive, GpuKernelCountsPacketsWithNoFrameBufferAndRecovers) {
  NDQ_REQUIRE_GPU();
  xsk_no_buffer(gpu_scenario());
}

TEST(XskGpuReceive, GpuKernelCountsEveryPacketALossyLinkDroppedExactly) {
  NDQ_REQUIRE_GPU();
  xsk_wire_loss(gpu_scenario());
}

TEST(XskGpuReceive, GpuKernelCountsEveryPacketAStarvedFillRingCostExactly) {
  NDQ_REQUIRE_GPU();
  xsk_fill_ring_starved(gpu_scenario());
}

TEST(XskGpuReceive, GpuKernelPlacesJumboPacketsOfThreeBuffers) {
  NDQ_REQUIRE_GPU();
  xsk_jumbo_packets(gpu_scenario());
}

TEST(XskGpuReceive, GpuKernelKilledWithItsProcessLeavesAQueueANewSessionOpens) {
  NDQ_REQUIRE_GPU();
  xsk_receiver_killed_then_reopened(gpu_scenario());
}

TEST(XskGpuReceive, GpuKernelSessionAfterSessionOnOneVeth) {
  NDQ_REQUIRE_GPU();
  xsk_session_after_session(gpu_scenario());
}

TEST(XskGpuReceive, UmemTheGpuCannotReadIsRefusedBeforeTheRingsAreTaken) {
  NDQ_REQUIRE_GPU();
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  auto session = afxdp_rx_session(lab);  // its UMEM: kind host
  ReorderConfig r;
  r.payload_size = 64;
  r.packets_per_frame = 4;
  try {
    XskFrameReceiver rx(*session, "x0", r, XskFrameReceiver::Driver::gpu);
    ADD_FAILURE() << "a host-memory UMEM was accepted for the GPU driver";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_config);
    EXPECT_NE(std::string(e.what()).find("kind mapped"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(session->rx_queue("x0").hand_over_rings());  // still the queue's
}

}  // namespace
}  // namespace ndqtest
