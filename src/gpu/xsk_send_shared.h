// What the XSK frame sender's driver (a persistent GPU kernel, or the same code on a CPU
// thread) shares with XskFrameSender's API thread: in mapped host memory, read and written by
// both sides with system-scope atomics. Plain C++ (both compilers see it).
#pragma once

#include <cstddef>
#include <cstdint>

namespace netdaq::gpu::detail {

// Written by the driver only.
struct XskSendCounters {
  uint64_t frames_sent = 0;
  uint64_t packets_posted = 0;
  uint64_t packets_completed = 0;  // whole packets: every buffer of theirs back
  uint64_t bad_completions = 0;
  uint64_t batches = 0;
};

// A queued frame.
struct XskSendEntry {
  uint64_t index = 0;
  const std::byte* data = nullptr;  // as the driver sees it
};

struct XskSendControl {
  uint32_t stop = 0;         // API: 1 send what is queued, wait for completions, exit; 2 exit now
  uint32_t exited = 0;       // driver: it has exited
  uint32_t queued = 0;       // API: frames queued (entries of queue[])
  uint32_t taken = 0;        // driver: frames whose packets are all posted
  XskSendCounters counters;
};

constexpr uint32_t kXskSendBatch = 64;       // packets one step posts
constexpr uint32_t kXskMaxHeaderBytes = 64;  // the queue's headers (42 for Ethernet/IPv4/UDP)

// Everything the driver reads: addresses as the driver sees them.
struct XskSendParams {
  uint32_t* tx_producer = nullptr;
  const uint32_t* tx_consumer = nullptr;
  void* tx_entries = nullptr;      // struct xdp_desc
  uint32_t tx_mask = 0;
  const uint32_t* comp_producer = nullptr;
  uint32_t* comp_consumer = nullptr;
  const uint64_t* comp_entries = nullptr;
  uint32_t comp_mask = 0;
  std::byte* umem = nullptr;
  const uint64_t* buffers = nullptr;  // UMEM offsets, used in turn (the kernel completes in order)
  uint32_t nbuffers = 0;
  // A packet larger than one buffer is written across buffers_per_packet buffers of
  // buffer_bytes each (a multiple of 8), all but the last descriptor marked XDP_PKT_CONTD.
  uint32_t buffer_bytes = 0;
  uint32_t buffers_per_packet = 1;
  // Packet layout: headers, then the UDP payload (sequence at seq_offset, samples at
  // payload_offset, the rest zero).
  unsigned char headers[kXskMaxHeaderBytes] = {};
  uint32_t header_bytes = 0;
  uint32_t seq_offset = 0;
  uint32_t seq_bytes = 4;
  bool seq_big = true;
  uint32_t payload_offset = 0;
  uint32_t payload_size = 0;
  uint32_t packets_per_frame = 0;
  // Frames queued by the API (mapped host memory), ring_mask + 1 entries.
  const XskSendEntry* queue = nullptr;
  uint32_t ring_mask = 0;
  XskSendControl* control = nullptr;
};

}  // namespace netdaq::gpu::detail
