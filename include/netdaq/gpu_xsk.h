// GPU-driven receive (docs/gpu-afxdp.md): a persistent GPU kernel owns an afxdp rx queue's
// rings. It takes descriptors from the RX ring, places each packet's samples into its frame in
// GPU memory (rx.reorder's mode sequence), gives the buffer straight back through the fill
// ring and publishes finished frames through a ring in mapped memory. The CPU does nothing per
// packet: next_frame() reads that ring and wakes the kernel's side of the socket when it asks
// (need_wakeup).
//
//   Session s(cfg);   // interface engine afxdp, rx queue mode direct, region kind mapped
//   gpu::XskFrameReceiver rx(s, "eth1", cfg.interfaces[0].rx.reorder[0]);
//   while (running) if (gpu::Frame f = rx.next_frame()) use(f.data(), f.size_bytes());
//
// Driver::cpu runs the same loop on a CPU thread into frames in host memory: the reference
// the GPU's frames are checked against, and a test of the ring protocol on machines without a
// GPU. No CUDA header is needed to use this.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "netdaq/gpu.h"

namespace netdaq {
class Session;
}

namespace netdaq::gpu {

class XskFrameReceiver final : public FrameSource {
 public:
  enum class Driver : uint8_t { gpu, cpu };

  // Takes rx queue cfg.queue of `interface` (RxQueue::hand_over_rings: an afxdp queue in
  // direct mode) and starts the driver. cfg: mode sequence, input and output raw,
  // max_open_frames <= 16, frame_buffers <= 256; the GPU driver needs the queue's region
  // to be kind mapped (the kernel reads the UMEM over the bus). A packet larger than one
  // UMEM buffer (an MTU above it: multi-buffer) comes as several descriptors and is placed
  // whole; its headers and sequence must lie in its first buffer. Throws ConfigError-style
  // Error (invalid_config) naming the key, or Error (unsupported, resource) for the rest.
  XskFrameReceiver(Session& session, std::string_view interface, const ReorderConfig& cfg, Driver driver = Driver::gpu);
  ~XskFrameReceiver();  // stop(); release every Frame before this
  XskFrameReceiver(const XskFrameReceiver&) = delete;
  XskFrameReceiver& operator=(const XskFrameReceiver&) = delete;

  // The next published frame, in frame order; empty when none. Frame::data() is device
  // memory (Driver::gpu) or host memory (Driver::cpu). Never throws.
  Frame next_frame() noexcept;
  // Takes what the RX ring holds, closes every open frame (they come out of next_frame())
  // and stops the driver. Idempotent; the rings stay the receiver's (the queue's poll() stays
  // empty).
  void stop() noexcept;

  // Every packet taken is in one of packets_placed, duplicate, late, malformed, no_buffer
  // (jobs: RX batches the driver took). What the kernel dropped before the ring (fill ring
  // empty, RX ring full) is in the queue's stats().
  PipelineStats stats() const noexcept;
  uint64_t wakeups() const noexcept;  // need_wakeup kicks (recvfrom) next_frame() made
  size_t frame_bytes() const noexcept;
  Driver driver() const noexcept;

 private:
  void release_frame(uint32_t buffer) noexcept override;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace netdaq::gpu
