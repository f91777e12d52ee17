// Frames in host memory, for the reorder modes placed by the sensor's headers (fields, spead,
// vita49, roce, rtp_video) on machines without a GPU: the packets of an rx queue are decoded, placed by
// their spans into frame buffers allocated once, and handed out in order per stream with
// their metadata and presence bits (missing bytes zero). What FramePipeline does on the GPU,
// with memcpy (docs/gpu.md, docs/roce-software.md). One thread uses an instance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "netdaq/burst.h"
#include "netdaq/config.h"
#include "netdaq/gpu.h"

namespace netdaq {

namespace frames {
class HostFrames;
}

// A frame handed out by HostFrameAssembler::pop(); valid until release().
struct HostFrameView {
  std::span<const std::byte> bytes;         // the frame (input bytes; missing ones zero)
  uint64_t stream = 0;                      // the sensor (roce: its queue pair number)
  uint64_t frame = 0;                       // the frame number (unwrapped)
  uint64_t bytes_present = 0;
  bool complete = false;
  std::span<const uint64_t> presence;       // bit g of word g / 64: granule g arrived
  uint32_t granule = 0;                     // bytes per presence bit
  std::span<const gpu::FrameItem> items;        // immediate items (roce: the immediate, metadata words)
  uint32_t buffer = 0;
};

// Mode roce: the item holding the immediate of the WRITE that ended the frame (HSB: PSN bits
// + page; tests/guest/fpga_peer.py: the message number), and the first of the end-of-window
// record's 64-bit words (roce.metadata_bytes; word i is item kRoceMetadataItem + i).
inline constexpr uint64_t kRoceImmediateItem = 1;
inline constexpr uint64_t kRoceMetadataItem = 0x100;

// One queue pair of mode roce: what the software receiver saw (docs/roce-software.md, "Counters").
struct RoceQueuePairStats {
  uint32_t qpn = 0;
  uint32_t next_psn = 0;  // the PSN expected next (after the newest received)
  uint64_t packets = 0, placed = 0, metadata = 0, send = 0;
  uint64_t bad_icrc = 0, no_headers = 0, unknown_qp = 0, bad_rkey = 0, out_of_window = 0, no_first = 0,
           psn_duplicate = 0, psn_stale = 0, malformed = 0;
  uint64_t psn_lost = 0, psn_out_of_order = 0, frames_ended = 0;
  uint64_t psn_resyncs = 0;  // a restarted sensor followed (16 refused PSNs in a row)
};

struct HostFrameStats {
  uint64_t packets = 0, placed = 0, duplicate = 0, late = 0, no_buffer = 0, malformed = 0, no_stream = 0,
           control = 0;
  uint64_t frames_complete = 0, frames_incomplete = 0, frames_dropped = 0, bytes_missing = 0;
  // Mode rtp_video: lines that missed any byte, over the incomplete frames popped so far
  // (netdaq/video.h video_missing_lines tells which lines of a frame).
  uint64_t lines_missing = 0;
  const char* last_malformed = "";        // why the last malformed packet was refused
  std::vector<RoceQueuePairStats> roce;   // mode roce: per queue pair, then the total (qpn 0)
};

class HostFrameAssembler {
 public:
  // cfg: a validated reorder config of a span mode (throws Error otherwise).
  explicit HostFrameAssembler(const ReorderConfig& cfg);
  ~HostFrameAssembler();
  HostFrameAssembler(const HostFrameAssembler&) = delete;
  HostFrameAssembler& operator=(const HostFrameAssembler&) = delete;

  // Places a burst's packets (now_ns: when it arrived, CLOCK_MONOTONIC; frames older than
  // frame_timeout_us close). Never allocates, locks or throws.
  void receive(const RxBurst& burst, uint64_t now_ns) noexcept;
  void flush() noexcept;  // end of stream: every open frame closes
  bool pop(HostFrameView& out) noexcept;
  void release(const HostFrameView& f) noexcept;
  HostFrameStats stats() const;

 private:
  std::unique_ptr<frames::HostFrames> impl_;
  ReorderMode mode_;
  VideoOptions video_;          // mode rtp_video: the format, for lines_missing
  uint64_t lines_missing_ = 0;
};

}  // namespace netdaq
