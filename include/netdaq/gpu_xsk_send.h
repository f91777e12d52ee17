// GPU-driven send (docs/gpu-afxdp.md): a persistent GPU kernel owns an afxdp tx queue's TX and
// completion rings. The application queues frames in GPU memory; the kernel cuts each into
// packets (the queue's Ethernet/IPv4/UDP headers, a sequence number, the frame's samples)
// written straight into UMEM buffers, posts their TX descriptors and takes the buffers back
// from the completion ring. The CPU does nothing per packet: a thread of the sender calls
// sendto() when the kernel's side needs it (every batch in copy mode, need_wakeup in
// zero-copy mode).
//
//   Session s(cfg);   // interface engine afxdp, tx queue 0, tx.destination, region kind mapped
//   gpu::XskFrameSender tx(s, "eth1", 0, gpu::XskSendLayout::matching(reorder));
//   while (!tx.send(frame_on_gpu, index)) {}   // then reuse frame_on_gpu once frames_sent() > its turn
//
// The packets are those an XskFrameReceiver (or a FramePipeline) configured with the same
// ReorderConfig places back into frames. Driver::cpu runs the same loop on a CPU thread over
// frames in host memory: the reference, and CI's test of the ring protocol. No CUDA header
// is needed to use this.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "netdaq/config.h"

namespace netdaq {
class Session;
}

namespace netdaq::gpu {

// Where each packet's fields are, as rx.reorder describes them: the sequence number
// (index * packets_per_frame + k for packet k of frame `index`) at seq_offset of the UDP
// payload, the packet's payload_size sample bytes at payload_offset; other bytes zero.
struct XskSendLayout {
  uint32_t seq_offset = 0;
  uint32_t seq_bits = 32;       // 8, 16, 32 or 64
  ByteOrder seq_byte_order = ByteOrder::big;
  uint32_t payload_offset = 8;
  uint32_t payload_size = 0;    // sample bytes per packet (> 0)
  uint32_t packets_per_frame = 0;
  uint32_t frames_in_flight = 64;  // frames queued and not yet sent (1 to 1024)
  uint32_t buffers = 1024;         // UMEM buffers taken from the queue's pool (at most its TX ring);
                                   // a packet larger than one takes several (multi-buffer sockets)
  int gpu = 0;
  // The layout a receiver with rx.reorder r places.
  static XskSendLayout matching(const ReorderConfig& r) {
    XskSendLayout l;
    l.seq_offset = r.seq_offset;
    l.seq_bits = r.seq_bits;
    l.seq_byte_order = r.seq_byte_order;
    l.payload_offset = r.payload_offset;
    l.payload_size = r.payload_size;
    l.packets_per_frame = r.packets_per_frame;
    l.gpu = r.gpu;
    return l;
  }
  uint64_t frame_bytes() const noexcept { return uint64_t{payload_size} * packets_per_frame; }
  uint32_t udp_payload_bytes() const noexcept { return payload_offset + payload_size; }
};

struct XskSendStats {
  uint64_t frames_queued = 0;     // send() calls that returned true
  uint64_t frames_sent = 0;       // frames whose every packet is posted (their memory is free again)
  uint64_t packets_posted = 0;    // TX descriptors published to the kernel
  uint64_t packets_completed = 0; // packets whose buffers the kernel gave back (sent, or refused: see the queue's stats)
  uint64_t bad_completions = 0;   // a completion naming another buffer than the oldest in flight
  uint64_t batches = 0;           // steps that posted packets
  uint64_t kicks = 0;             // sendto() calls
  uint64_t kick_errors = 0;       // sendto() failures other than a busy device
};

class XskFrameSender {
 public:
  enum class Driver : uint8_t { gpu, cpu };

  // Takes tx queue `queue` of `interface` (TxQueue::hand_over_rings: an afxdp queue with
  // tx.destination) and starts the driver. The GPU driver needs the queue's region to be
  // kind mapped (the kernel writes the UMEM over the bus). Throws Error (invalid_config)
  // naming the field, or (unsupported, resource) for the rest.
  XskFrameSender(Session& session, std::string_view interface, uint16_t queue, const XskSendLayout& layout,
                 Driver driver = Driver::gpu);
  ~XskFrameSender();  // stop()
  XskFrameSender(const XskFrameSender&) = delete;
  XskFrameSender& operator=(const XskFrameSender&) = delete;

  // Queues frame `index`: frame_bytes() at data (device memory for Driver::gpu, host memory
  // for Driver::cpu), left unchanged until frames_sent() counts it (frames are sent in the
  // order queued). false: frames_in_flight frames wait already, or stopped. Never throws.
  bool send(const void* data, uint64_t index) noexcept;
  uint64_t frames_sent() const noexcept;
  // Sends every queued frame, waits (up to 10 s) for the kernel to give every buffer back
  // and stops the driver. Idempotent.
  void stop() noexcept;

  XskSendStats stats() const noexcept;
  uint64_t frame_bytes() const noexcept;
  Driver driver() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace netdaq::gpu
