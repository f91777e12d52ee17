// The GPU-driven receiver's scenarios (netdaq/gpu_xsk.h), shared by the CPU-driver tests in
// CI (xsk_frame_receiver_test.cpp) and the GPU-driver tests on the GPU machine
// (tests/gpu/xsk_gpu_receive_test.cpp): an afxdp rx queue on a veth in namespace A whose
// rings are handed to the receiver, a plain UDP socket in namespace B sending sequenced
// packets; every frame's bytes checked against what was sent, every packet's fate counted.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "netdaq/config.h"
#include "netdaq/gpu_xsk.h"
#include "netdaq/session.h"
#include "netns_lab.h"

// The GPU-driven drivers are part of the GPU data plane: built only with CUDA.
#define NDQ_REQUIRE_GPU_BUILD()                                                                       \
  NDQ_REQUIRE(::netdaq::gpu::built_in(), "netdaq was built without CUDA: the GPU-driven AF_XDP drivers are " \
                                         "part of the GPU data plane")

namespace ndqtest {

struct XskScenario {
  netdaq::gpu::XskFrameReceiver::Driver driver = netdaq::gpu::XskFrameReceiver::Driver::cpu;
  netdaq::MemoryKind region = netdaq::MemoryKind::host;  // the UMEM's memory (mapped for the GPU)
  // A frame's bytes as host memory (the GPU driver's frames are in device memory).
  std::function<std::vector<std::byte>(const netdaq::gpu::Frame&)> read_frame;
};

// A frame in host memory (the CPU driver's) as bytes.
std::vector<std::byte> read_host_frame(const netdaq::gpu::Frame& f);

// The scenarios' rx.reorder: 8 packets a frame of 1,000 sample bytes after an 8-byte header
// (the sequence, 32 bits big endian), `buffers` frame buffers.
netdaq::ReorderConfig xsk_scenario_reorder(uint32_t buffers);
// afxdp interface "x0" on `veth`: rx queue 0 (direct) takes UDP port `port`; its UMEM a
// region of kind `region`.
netdaq::Config afxdp_port_config(const std::string& veth, uint16_t port, netdaq::MemoryKind region,
                                 uint32_t buf_size = 2048);
// A session in namespace A with afxdp interface "x0" on A's veth: rx queue 0 (direct) takes
// UDP port `port`; its UMEM is a region of kind `region` (GPU 0 where that matters).
std::unique_ptr<netdaq::Session> afxdp_port_session(NetnsLab& lab, uint16_t port, netdaq::MemoryKind region,
                                                    uint32_t buf_size = 2048);
// A session in namespace A with afxdp interface "x0" on A's veth: rx queue 0 in `mode`.
std::unique_ptr<netdaq::Session> afxdp_rx_session(NetnsLab& lab, netdaq::PollMode mode = netdaq::PollMode::direct);

// 40 frames of 8 packets (1,000 sample bytes each, the sequence at the payload's start) with
// three packets never sent, one sent twice, one malformed and one late: frames in order, the
// missing slots zero and flagged, and packets_in == placed + duplicate + late + malformed.
void xsk_every_fate(const XskScenario& s);
// The application holds every frame buffer: the packets of frames with no buffer are counted
// no_buffer (frames_dropped) and, once it releases them, frames are placed again.
void xsk_no_buffer(const XskScenario& s);
// Three sessions one after another on the same veth, each with a receiver (stopped, or only
// destroyed): each places its frames, and none leaves its XDP program behind.
void xsk_session_after_session(const XskScenario& s);
// A fill ring of 64 buffers (afxdp.fill_ring), and 400 packets before the receiver starts: the
// kernel places 64 and drops 336 for want of a fill entry (counted in the queue's stats); then
// every packet is placed: sent == taken + kernel drops, frames 0-7 and 50-57 byte-identical.
void xsk_fill_ring_starved(const XskScenario& s);
// A lossy link: a tc program on B's veth drops every 11th packet (sequence % 11 == 5) before it
// leaves B, unseen by the sender and by A's kernel: each of those packets is missing from its
// frame (flagged, zero-filled) and counted there, exactly as many as the link dropped; sent ==
// taken + kernel drops + dropped on the link; every frame byte-identical to a CPU reference.
void xsk_wire_loss(const XskScenario& s);
// Packets of 8,192 sample bytes from a kernel UDP socket at MTU 9000 over 4096-byte UMEM
// buffers (three descriptors each, multi-buffer): every frame placed byte-identical.
void xsk_jumbo_packets(const XskScenario& s);
// A receiver in another process (this test binary again) is killed (SIGKILL) while its driver
// runs and packets arrive: a new session on the same veth opens, places every frame
// byte-identical, and leaves no XDP program behind (xsk_killed_scenario.cpp).
void xsk_receiver_killed_then_reopened(const XskScenario& s);

}  // namespace ndqtest
