// An uncompressed video sender (issue 33): frames in host memory packetized into RFC 4175 /
// SMPTE ST 2110-20 RTP payloads for a TX queue that sends UDP payloads (socket, afxdp, dpdk),
// and the departure times of ST 2110-21's narrow gapped sender (type N) to pace them.
//
// Packets: RTP header (V=2, PT, 16-bit sequence, timestamp, SSRC, marker), RFC 4175's extended
// sequence number (the high 16 bits of a 32-bit sequence), up to 3 SRD headers, their segments'
// bytes. Segments are cut at payload_size bytes of pixel data (whole pgroups); a packet may hold
// the end of one line and the start of the next ones. Interlaced: field 0 (the frame's even
// lines, F=0) then field 1 (odd lines, F=1), each field its own RTP timestamp (its sampling
// instant, half a frame apart) and its own marker (RFC 4175 4.1: the M bit ends a frame when
// progressive, a field when interlaced).
//
// Only public headers here: the CLI uses it (netdaq video-send).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "netdaq/burst.h"
#include "netdaq/config.h"

namespace netdaq::sensors {

struct VideoSenderConfig {
  VideoOptions video;              // width, height, sampling, depth, interlaced, rate; payload_type -1: 96
  uint32_t payload_size = 1200;    // pixel bytes per packet at most (rounded down to whole pgroups)
  uint32_t ssrc = 0x2110'0001;
  uint32_t first_sequence = 0;     // 32-bit extended sequence number of the first packet
  uint32_t first_timestamp = 0;    // RTP timestamp of frame 0 (plus epoch_frame's)
  // RTP frames (fields) from the media clock's epoch to frame 0: ST 2110-10 senders count RTP
  // time from the SMPTE epoch (1970-01-01 TAI), so frame k's timestamp is the 90 kHz clock at
  // its period's start, (epoch_frame + k) x ticks per frame, modulo 2^32 (video-send --epoch tai).
  uint64_t epoch_frame = 0;
};

// ST 2110-21 narrow gapped sender timing (type N), per RTP frame (a field when interlaced):
//   T_FRAME  the frame period (interlaced: the field period, half a frame);
//   R_ACTIVE 1080/1125 (and for 1080i); 487/525 for 480i, 576/625 for 576i;
//   TRO      TRO_DEFAULT: 43/1125 x T_FRAME for progressive of >= 1080 lines, 28/750 x T_FRAME
//            below; interlaced 22 lines of 1125 (1080i), 20 of 525 (480i), 26 of 625 (576i),
//            i.e. 2 x lines/total x T_FRAME(field);
//   T_DRAIN  T_FRAME x R_ACTIVE / N_pkts: the spacing of the packets of a frame.
// Packet p of frame k departs at epoch + k x T_FRAME + TRO + (p - vrx_start) x T_DRAIN: a
// receiver's virtual buffer (VRX) reads packet p at TRO + (p + 1) x T_DRAIN, so a sender that
// starts vrx_start packets ahead keeps that many in it against its own and the path's jitter
// (without it every packet arrives as it is read, and any delay underflows the buffer).
struct St2110Timing {
  uint64_t period_num = 0, period_den = 1;  // T_FRAME = period_num / period_den ns, exactly
  double t_frame_ns = 0;
  double r_active = 0;
  double tro_ns = 0;
  double t_drain_ns = 0;
  uint32_t packets = 0;                     // N_pkts per frame (field)
  uint32_t vrx_start = kVrxStart;           // packets sent ahead of the VRX read schedule
  static constexpr uint32_t kVrxStart = 4;  // half the narrow VRX_FULL's least (8)
  // ns after the epoch of frame k's start (k x T_FRAME, exact for 59.94).
  uint64_t frame_start_ns(uint64_t k) const noexcept;
  uint64_t departure_ns(uint64_t k, uint32_t packet) const noexcept;
  // CMAX of the narrow sender (ST 2110-21 Table: max(4, N_pkts / (43200 x R_ACTIVE x T_FRAME[s]))).
  double cmax() const noexcept;
};

St2110Timing st2110_narrow_timing(const VideoOptions& v, uint32_t packets_per_frame);

// The test pattern of `video-send`: 75% colour bars with a white box that moves 2 pgroups per
// frame along the middle third of the lines. out: line_bytes x height bytes (frame_bytes).
void write_video_test_pattern(const VideoOptions& v, uint64_t frame, std::span<std::byte> out) noexcept;

class VideoSender {
 public:
  // Checks the config (throws netdaq::Error saying which value is wrong and what is allowed).
  explicit VideoSender(const VideoSenderConfig& c);
  ~VideoSender();
  VideoSender(const VideoSender&) = delete;
  VideoSender& operator=(const VideoSender&) = delete;

  // Frames to send: frames.size() / frame_bytes() whole frames, sent in turn and looped (frame
  // k is frames[k % count]). The memory must outlive the sender. Throws when not a multiple.
  void set_frames(std::span<const std::byte> frames);

  // Fills every packet of `burst` with the next packets (RTP payloads) and sets their sizes.
  // Returns the packets filled: fewer when a buffer is too small or no frames are set. Never
  // allocates.
  size_t fill(TxBurst& burst) noexcept;
  // Writes the next packet into out; returns its bytes, 0 (nothing advanced) when out is too
  // small or no frames are set.
  uint32_t next_packet(std::span<std::byte> out) noexcept;

  uint64_t line_bytes() const noexcept { return line_bytes_; }
  uint64_t frame_bytes() const noexcept { return line_bytes_ * c_.video.height; }
  uint32_t fields() const noexcept { return c_.video.interlaced ? 2 : 1; }
  // Packets of one RTP frame (one field when interlaced) and of a whole video frame.
  uint32_t packets_per_field() const noexcept { return static_cast<uint32_t>(plan_.size()); }
  uint32_t packets_per_frame() const noexcept { return packets_per_field() * fields(); }
  uint32_t max_packet_bytes() const noexcept { return max_packet_; }
  uint32_t payload_type() const noexcept { return pt_; }
  // RTP timestamp of RTP frame (field) index k, counted from the first.
  uint32_t timestamp_of(uint64_t k) const noexcept;
  // Sets the config's epoch_frame before the first packet (the sender learns the clock's time
  // only after its setup).
  void set_epoch_frame(uint64_t k) noexcept { c_.epoch_frame = k; }
  St2110Timing timing() const noexcept { return st2110_narrow_timing(c_.video, packets_per_field()); }

  uint64_t packets() const noexcept { return packets_; }
  uint64_t frames_done() const noexcept { return frame_; }     // video frames whose last packet was filled
  uint64_t fields_done() const noexcept { return field_index_; }  // RTP frames (fields) done
  uint32_t packet_in_field() const noexcept { return packet_; }
  // Packets of the current video frame not filled yet (a sender reading frames from GPU memory
  // ends its bursts there, so that no packet of the next frame is read before it is in place).
  uint32_t packets_left_in_frame() const noexcept {
    return (fields() - 1 - field_) * packets_per_field() + (packets_per_field() - packet_);
  }
  const VideoSenderConfig& config() const noexcept { return c_; }

 private:
  struct Segment {
    uint16_t row = 0;       // row within the field
    uint16_t offset = 0;    // pixels
    uint16_t length = 0;    // bytes
  };
  struct PacketPlan {
    uint8_t segments = 0;
    uint16_t bytes = 0;     // pixel bytes
    Segment seg[3];
  };

  VideoSenderConfig c_;
  uint64_t line_bytes_ = 0;
  uint32_t pgroup_bytes_ = 0, pgroup_pixels_ = 0;
  uint32_t pt_ = 96;
  uint32_t max_packet_ = 0;
  uint64_t ticks_num_ = 0, ticks_den_ = 1;  // RTP ticks per RTP frame (field) = num / den
  std::vector<PacketPlan> plan_;            // one field's packets (the same for every frame)
  std::span<const std::byte> frames_;
  uint64_t frame_count_ = 0;
  uint64_t frame_ = 0;                      // the video frame being sent
  uint64_t field_index_ = 0;                // RTP frames (fields) sent
  uint32_t field_ = 0;                      // its field (0 or 1)
  uint32_t packet_ = 0;                     // its next packet
  uint32_t seq_ = 0;
  uint64_t packets_ = 0;
};

}  // namespace netdaq::sensors
