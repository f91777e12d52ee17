// The GPU-driven sender's scenarios (netdaq/gpu_xsk_send.h), shared by the CPU-driver tests in
// CI (xsk_frame_sender_test.cpp) and the GPU-driver tests on the GPU machine
// (tests/gpu/xsk_gpu_send_test.cpp): an afxdp tx queue on namespace B's veth whose rings are
// handed to the sender, an XskFrameReceiver on A's veth taking what arrives; every frame's
// bytes checked against what was queued, every packet accounted for on both sides.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "netdaq/gpu_xsk.h"
#include "netdaq/gpu_xsk_send.h"
#include "netns_lab.h"

namespace ndqtest {

struct XskSendScenario {
  netdaq::gpu::XskFrameSender::Driver sender = netdaq::gpu::XskFrameSender::Driver::cpu;
  netdaq::gpu::XskFrameReceiver::Driver receiver = netdaq::gpu::XskFrameReceiver::Driver::cpu;
  netdaq::MemoryKind sender_region = netdaq::MemoryKind::host;    // B's UMEM (mapped for the GPU sender)
  netdaq::MemoryKind receiver_region = netdaq::MemoryKind::host;  // A's UMEM (mapped for the GPU receiver)
  // Frame bytes where the sender reads them (device memory for the GPU sender), kept alive by
  // the returned owner.
  std::function<std::shared_ptr<const void>(const std::vector<std::byte>&)> upload;
  // A received frame's bytes as host memory.
  std::function<std::vector<std::byte>(const netdaq::gpu::Frame&)> read_frame;
};

// 120 frames of 8 packets (1,000 sample bytes each) sent and received: every frame in order,
// complete and byte-identical; posted == completed == received, no bad completion.
void xsk_send_round_trip(const XskSendScenario& s);
// The same with 8,192 sample bytes a packet at MTU 9000 over 4096-byte UMEM buffers: each
// packet written across three buffers (XDP_PKT_CONTD) and received as three descriptors.
void xsk_send_jumbo_round_trip(const XskSendScenario& s);
// Three sender sessions one after another on the same veth (stopped, or only destroyed):
// each one's frames arrive.
void xsk_send_session_after_session(const XskSendScenario& s);
// One receiver; a sender sends 8 frames and is destroyed, twice replaced by a new session's
// sender while the receiver runs (a GPU receiver's kernel never stops meanwhile): 24 frames in
// order, byte-identical.
void xsk_sender_replaced_while_receiving(const XskSendScenario& s);

}  // namespace ndqtest
