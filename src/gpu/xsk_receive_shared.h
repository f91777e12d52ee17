// What the XSK frame receiver's driver (a persistent GPU kernel, or the same code on a CPU
// thread) shares with XskFrameReceiver's API thread: in mapped host memory, read and written
// by both sides with system-scope atomics. Plain C++ (both compilers see it).
#pragma once

#include <cstdint>

namespace netdaq::gpu::detail {

// Written by the driver only (the API thread reads them at any time).
struct XskCounters {
  uint64_t packets_in = 0;  // frames (of one or more descriptors) taken from the RX ring
  uint64_t packets_placed = 0;
  uint64_t duplicate = 0;
  uint64_t late = 0;
  uint64_t malformed = 0;   // not IPv4/IPv6 UDP, shorter than the fields, sequence beyond the first buffer
  uint64_t no_buffer = 0;
  uint64_t frames_complete = 0;
  uint64_t frames_incomplete = 0;
  uint64_t frames_skipped = 0;
  uint64_t frames_dropped = 0;
  uint64_t packets_missing = 0;
  uint64_t batches = 0;     // RX batches taken (polls that found packets)
};

// A published frame.
struct XskDoneEntry {
  uint64_t index = 0;
  uint32_t buffer = 0;
  uint32_t received = 0;
};

struct XskControl {
  uint32_t stop = 0;       // API: drain the RX ring, close every open frame, exit
  uint32_t exited = 0;     // driver: it has exited (after its last publish)
  uint32_t done_prod = 0;  // driver: frames published (entries of done[])
  uint32_t free_prod = 0;  // API: buffers given back (entries of free_ring[])
  XskCounters counters;
};

// Everything the driver reads: addresses as the driver sees them (device addresses for the
// GPU, host addresses for the CPU thread).
struct XskParams {
  // The queue's rings (netdaq/shared_rings.h) and UMEM.
  uint32_t* rx_producer = nullptr;
  uint32_t* rx_consumer = nullptr;
  const void* rx_entries = nullptr;  // struct xdp_desc
  uint32_t rx_mask = 0;
  uint32_t* fill_producer = nullptr;
  uint64_t* fill_entries = nullptr;
  uint32_t fill_mask = 0;
  const std::byte* umem = nullptr;
  uint64_t chunk = 0;             // a power of two
  // Placement (mode sequence, raw samples).
  uint32_t seq_offset = 0;
  uint32_t seq_bytes = 4;
  bool seq_big = true;
  uint32_t payload_offset = 0;
  uint32_t payload_size = 0;
  uint32_t packets_per_frame = 0;
  uint32_t max_open = 0;
  uint64_t timeout_ns = 0;
  // Frames: buffers x frame_bytes; present bitmaps (driver's own, zero while a buffer is free);
  // the missing bitmaps it publishes (mapped host memory), words per frame each.
  std::byte* frames = nullptr;
  uint64_t frame_bytes = 0;
  uint32_t buffers = 0;
  uint32_t words = 0;
  uint64_t* present = nullptr;
  uint64_t* missing_out = nullptr;
  // Rings with the API thread (mapped host memory), buffers entries each (a power of two).
  XskDoneEntry* done = nullptr;
  const uint32_t* free_ring = nullptr;
  uint32_t ring_mask = 0;
  XskControl* control = nullptr;
};

constexpr uint32_t kXskBatch = 128;        // descriptors one step takes
constexpr uint32_t kXskMaxOpen = 16;       // max_open_frames limit
constexpr uint32_t kXskMaxBuffers = 256;   // frame_buffers limit
constexpr uint32_t kXskHeaderBytes = 128;
constexpr uint32_t kXskMaxDropped = 64;    // frames with no buffer remembered until the next closes  // frame bytes read for the headers and the sequence

}  // namespace netdaq::gpu::detail
