// Uncompressed video over RTP (ReorderMode::rtp_video; SMPTE ST 2110-20 / RFC 4175;
// docs/video.md): each packet's line segments (SRD headers) become spans at their line's and
// pixel's byte in the frame, the RTP timestamp names the frame, the marker ends it (the second
// field's marker when interlaced), the SSRC is the stream. Wire layout: rtp_video_format.h.
//
// Frame numbers: per SSRC, the first packet's frame is its timestamp / ticks per frame
// (rounded; 90 kHz x rate_den / rate_num ticks, 1501.5 at 59.94), so receivers of one stream,
// and PTP-locked streams of one rate, number frames alike; after it each packet advances by
// round(signed 32-bit timestamp delta / ticks) from the newest, so the timestamp's wrap and a
// late packet of an older frame both land on their frame. Interlaced, frames count in fields
// (ticks / 2): RFC 4175 stamps each field at its own sampling instant, and a sender that
// stamps both fields alike (the frame's time) is numbered the same. A packet more than
// kFarBehind frames behind the newest is refused (malformed); kResyncAfter of them in a row
// restart the stream's numbering after its newest frame (a sender restarted its timestamps).
// Stateful: decode_packet() only, from one thread, in arrival order. A copy carries the state
// on independently (the fuzzer compares a copy fed the packet split in two buffers).
#pragma once

#include <cstdint>
#include <vector>

#include "protocols/decoder.h"
#include "protocols/rtp_video_format.h"

namespace netdaq::protocols {

struct RtpVideoCounters {
  uint64_t packets = 0;       // every packet decode_packet() saw
  uint64_t malformed = 0;     // refused (Decoded::reason says why), far-behind timestamps included
  uint64_t far_behind = 0;    // of those: a timestamp more than kFarBehind frames behind the newest
  uint64_t resyncs = 0;       // a stream's numbering restarted (kResyncAfter far-behind packets in a row)
  uint64_t merged = 0;        // segments joined to the one before (contiguous in the frame: whole lines)
};

class RtpVideoDecoder final : public Decoder {
 public:
  static constexpr uint32_t kFarBehind = 64;    // frames behind the newest a late packet may be
  static constexpr uint32_t kResyncAfter = 16;  // far-behind packets in a row that restart numbering

  // video: validated (config_validate_video.cpp). max_streams: SSRCs numbered at once (the
  // table is allocated here; packets of further SSRCs are handed on with frame 0, and the
  // tracker, which keeps as many streams, counts them no_stream).
  RtpVideoDecoder(const VideoOptions& video, uint32_t max_streams);

  // Stateless decoding cannot number frames: always malformed (use decode_packet()).
  void decode(std::span<const std::byte> first, uint32_t packet_len, Decoded& out) const noexcept override;
  void decode_packet(const PacketBytes& p, Decoded& out) noexcept override;

  const RtpVideoCounters& counters() const noexcept { return counters_; }

 private:
  static constexpr int64_t kUnstarted = INT64_MIN;
  struct Stream {
    bool used = false;
    uint32_t ssrc = 0;
    uint32_t newest_ts = 0;       // timestamp of the newest unit
    int64_t newest = kUnstarted;  // newest unit: a frame, or a field when interlaced (frame = unit / 2)
    uint32_t far_run = 0;     // far-behind packets in a row
  };
  Stream* stream_of(uint32_t ssrc) noexcept;  // null: table full
  // The frame of a packet with timestamp ts (field: the last SRD's F); false after refusing it.
  bool frame_of(Stream& s, uint32_t ts, bool field, uint64_t* frame, Decoded& out) noexcept;

  VideoOptions video_;
  video::Pgroup pgroup_;
  uint64_t line_bytes_ = 0;
  uint64_t frame_bytes_ = 0;
  uint32_t rows_ = 0;           // SRD rows: lines of a frame, of a field when interlaced with rows: field
  uint32_t units_per_frame_ = 1;  // 2 when interlaced (fields)
  double unit_ticks_ = 0;       // RTP ticks of one unit
  std::vector<Stream> streams_;
  size_t last_ = 0;             // index of the stream of the packet before (copies stay valid)
  RtpVideoCounters counters_;
};

}  // namespace netdaq::protocols
