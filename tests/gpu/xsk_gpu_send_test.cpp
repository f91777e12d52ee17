// GPU-driven send (netdaq/gpu_xsk_send.h): a persistent kernel owns an afxdp queue's TX and
// completion rings on B's veth and cuts frames in GPU memory into packets; the GPU-driven
// receiver (or its CPU driver) on A's veth takes them: every frame byte-checked against what
// was queued, every packet accounted for (the scenarios of
// tests/integration/xsk_send_scenario.h, which CI runs with the CPU drivers).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "../integration/afxdp_util.h"
#include "../integration/xsk_frames_scenario.h"
#include "../integration/xsk_send_scenario.h"
#include "gpu_test_util.h"
#include "netdaq/gpu_xsk_send.h"

namespace ndqtest {
namespace {

using namespace netdaq;
using gpu::XskFrameReceiver;
using gpu::XskFrameSender;

XskSendScenario gpu_sender(XskFrameReceiver::Driver receiver) {
  XskSendScenario s;
  s.sender = XskFrameSender::Driver::gpu;
  s.sender_region = MemoryKind::mapped;
  s.receiver = receiver;
  s.receiver_region = receiver == XskFrameReceiver::Driver::gpu ? MemoryKind::mapped : MemoryKind::host;
  s.upload = [](const std::vector<std::byte>& b) -> std::shared_ptr<const void> {
    void* d = nullptr;
    EXPECT_EQ(cudaMalloc(&d, b.size()), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d, b.data(), b.size(), cudaMemcpyHostToDevice), cudaSuccess);
    return {d, [](void* p) { (void)cudaFree(p); }};
  };
  s.read_frame = [receiver](const gpu::Frame& f) {
    if (receiver != XskFrameReceiver::Driver::gpu) return read_host_frame(f);
    std::vector<std::byte> b(f.size_bytes());
    EXPECT_EQ(cudaMemcpy(b.data(), f.data(), b.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    return b;
  };
  return s;
}

TEST(XskGpuSend, GpuKernelSendsEveryFrameByteForByteToACpuReceiver) {
  NDQ_REQUIRE_GPU();
  xsk_send_round_trip(gpu_sender(XskFrameReceiver::Driver::cpu));
}

TEST(XskGpuSend, GpuKernelToGpuKernelEveryFrameByteForByte) {
  NDQ_REQUIRE_GPU();
  xsk_send_round_trip(gpu_sender(XskFrameReceiver::Driver::gpu));
}

TEST(XskGpuSend, GpuKernelSendsJumboFramesAcrossThreeBuffersToACpuReceiver) {
  NDQ_REQUIRE_GPU();
  xsk_send_jumbo_round_trip(gpu_sender(XskFrameReceiver::Driver::cpu));
}

TEST(XskGpuSend, GpuKernelToGpuKernelJumboFramesAcrossThreeBuffers) {
  NDQ_REQUIRE_GPU();
  xsk_send_jumbo_round_trip(gpu_sender(XskFrameReceiver::Driver::gpu));
}

TEST(XskGpuSend, GpuKernelSessionAfterSessionOnOneVeth) {
  NDQ_REQUIRE_GPU();
  xsk_send_session_after_session(gpu_sender(XskFrameReceiver::Driver::cpu));
}

// The old sender's session frees its mapped UMEM while the receiver's kernel runs: freed
// once no GPU driver runs (cudaFreeHost would wait for that kernel forever: this hung).
TEST(XskGpuSend, GpuSenderReplacedWhileAGpuReceiverRuns) {
  NDQ_REQUIRE_GPU();
  xsk_sender_replaced_while_receiving(gpu_sender(XskFrameReceiver::Driver::gpu));
}

TEST(XskGpuSend, UmemTheGpuCannotWriteIsRefusedBeforeTheRingsAreTaken) {
  NDQ_REQUIRE_GPU();
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  AfxdpIface iface{.dev = lab.b().veth, .tx_queue = 0, .destination = "udp://" + lab.a().ip4 + ":9",
                   .dst_mac = lab.mac(lab.a())};  // its UMEM: kind host
  auto session = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(iface.build()); });
  gpu::XskSendLayout l;
  l.payload_size = 64;
  l.packets_per_frame = 4;
  try {
    XskFrameSender tx(*session, "x0", 0, l, XskFrameSender::Driver::gpu);
    ADD_FAILURE() << "a host-memory UMEM was accepted for the GPU driver";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_config);
    EXPECT_NE(std::string(e.what()).find("kind mapped"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(session->tx_queue("x0").hand_over_rings(72, 16));  // still the queue's
}

}  // namespace
}  // namespace ndqtest
