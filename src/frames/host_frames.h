// Frames in host memory for the span modes (fields, spead, vita49, roce), for machines without
// a GPU: what FramePipeline does on the GPU, with memcpy. Each packet is decoded
// (Decoder::decode_packet with its whole frame), placed by SpanTracker (window, presence,
// duplicates, timeouts) and its spans copied into frame buffers (after the burst's decoding);
// frames leave in order per stream, missing bytes zero-filled. The frame buffers
// (frame_buffers x frame_bytes) are allocated once; receive() never allocates, locks or
// throws. One thread uses an instance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/host/span_tracker.h"
#include "netdaq/burst.h"
#include "netdaq/config.h"
#include "protocols/decoder.h"

namespace netdaq::frames {

// A frame handed out by pop(); valid until release().
struct HostFrame {
  const std::byte* data = nullptr;     // size bytes, missing ones zero
  uint64_t size = 0;
  gpu::FrameMeta meta;                 // stream, frame number, bytes present, timestamp, items
  const uint64_t* presence = nullptr;  // bit g (word g / 64): granule g arrived; ceil(size / granule) bits
  uint32_t granule = 0;                // bytes per presence bit
  bool complete = false;
  uint32_t buffer = 0;                 // which frame buffer (release() gives it back)
};

// What the decoder and the copy decided; the tracker's outcomes are in tracker_stats(). Every
// packet counts once: packets == control + malformed + tracker_stats().{placed, duplicate,
// late, no_buffer, malformed, no_stream}.
struct HostFrameCounters {
  uint64_t packets = 0;
  uint64_t control = 0;     // valid, no bytes to place (VITA-49 context, RoCE SEND or metadata)
  uint64_t malformed = 0;   // refused by the decoder (last_reason()), or a span across the header split
  uint64_t frames_out = 0;  // frames popped
};

class HostFrames {
 public:
  explicit HostFrames(const ReorderConfig& cfg);  // throws Error for a mode without spans

  // Places the burst's packets (now_ns: the receive time, for frame timeouts) and closes
  // frames that timed out.
  void receive(const RxBurst& burst, uint64_t now_ns) noexcept;
  void flush() noexcept;  // end of stream: every open frame closes
  // The next closed frame (in order per stream); false when none.
  bool pop(HostFrame& out) noexcept;
  void release(const HostFrame& f) noexcept;

  // A popped frame's metadata where it stays until release() (HostFrame::meta is a copy).
  const gpu::FrameMeta& meta(uint32_t buffer) const noexcept { return tracker_.meta(buffer); }
  const HostFrameCounters& counters() const noexcept { return counters_; }
  const gpu::SpanStats& tracker_stats() const noexcept { return tracker_.stats(); }
  const std::vector<gpu::StreamState>& streams() const noexcept { return tracker_.streams(); }
  const protocols::Decoder& decoder() const noexcept { return *decoder_; }
  const char* last_reason() const noexcept { return last_reason_; }  // of the last malformed packet

 private:
  // A placed span's bytes, copied once the burst is decoded (copy_pending()): copies back to
  // back overlap their loads of cold packet bytes, which the decoding between them would
  // stall on one packet at a time (bench/roce_sw.md: (s-) 1.25-2x). Not where the decoder
  // reads the whole packet (the ICRC): its bytes are hot right after, so they go at once.
  struct PendingCopy {
    std::byte* dst;
    const std::byte* src;
    uint32_t bytes;
  };
  static constexpr size_t kCopiesPerPacket = protocols::kMaxSpans * 2;  // each span in two pieces at most
  static constexpr size_t kPendingCopies = 1024;

  void place(const Packet& p, uint64_t now_ns) noexcept;
  void copy(std::byte* dst, const std::byte* src, uint32_t bytes) noexcept;  // now or batched
  void copy_pending() noexcept;
  void zero_fill(uint32_t buffer) noexcept;

  std::unique_ptr<protocols::Decoder> decoder_;
  gpu::SpanTracker tracker_;
  uint64_t frame_bytes_ = 0;
  std::vector<std::byte> mem_;  // frame_buffers x frame_bytes
  protocols::Decoded decoded_;  // members: nothing zeroed per packet
  gpu::PlacedSpan placed_[protocols::kMaxSpans];
  std::vector<PendingCopy> copies_;  // kPendingCopies, allocated once
  size_t ncopies_ = 0;
  bool batch_copies_ = true;  // false: copy() at once
  HostFrameCounters counters_;
  const char* last_reason_ = "";
};

}  // namespace netdaq::frames
