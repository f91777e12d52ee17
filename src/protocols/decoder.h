// The placement model (ARCHITECTURE §1): a decoder reads one packet's headers and says where
// its bytes belong: the stream (sensor), and one or more spans, each a frame number, a byte
// offset in that frame and the packet bytes that go there. The frame tracker
// (gpu/host/span_tracker.h) keeps the window, presence, duplicates and timeouts; the GPU moves
// the bytes. One decoder per wire format, one file each (src/protocols/<name>.cpp), behind
// this interface: the tracker calls decode_packet() once per packet (one virtual call per
// packet, none per byte); decoding never allocates, throws or reads outside the bytes it is given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "netdaq/config.h"

namespace netdaq::protocols {

// Bytes [packet_offset, packet_offset + bytes) of the UDP payload go to bytes
// [offset, offset + bytes) of frame `frame` (offsets in input bytes, before any conversion).
struct Span {
  uint64_t frame = 0;
  uint64_t offset = 0;
  uint32_t packet_offset = 0;
  uint32_t bytes = 0;
};

// An item the packet carries by value (SPEAD immediate items other than 0x1..0x4): kept as
// frame metadata.
struct Item {
  uint64_t id = 0;
  uint64_t value = 0;
};

inline constexpr unsigned kMaxSpans = 4;  // a packet may straddle frames (VITA-49)
inline constexpr unsigned kMaxItems = 16; // immediate items kept per packet and per frame

enum class Verdict : uint8_t {
  data,       // place the spans (nspans may be 0: a packet with no payload, e.g. a SPEAD end)
  control,    // a valid packet that carries no frame bytes (VITA-49 context): counted, not placed
  malformed,  // counted malformed; `reason` says why
};

struct Decoded {
  Verdict verdict = Verdict::malformed;
  const char* reason = "";        // malformed: why (a static string, for logs and tests)
  bool has_stream = false;        // false: the packet's flow id is its stream
  uint64_t stream = 0;
  uint8_t frame_bits = 64;        // frame numbers narrower than 64 bits wrap; the tracker unwraps them
  uint64_t frame_bytes = 0;       // the frame's size when the packet says it (SPEAD heap size); 0: the config's
  bool marker = false;            // the packet ends the frame of its last span
  bool has_timestamp = false;
  uint64_t timestamp = 0;         // the sensor's time of the packet's first byte: integer part
  uint64_t timestamp_frac = 0;    // ... and fractional part (VITA-49 TSI / TSF; else 0)
  uint8_t nspans = 0;
  Span spans[kMaxSpans];
  uint8_t nitems = 0;
  Item items[kMaxItems];

  // Resets what every decode() must set (spans and items beyond the counts are not read).
  void reset() noexcept {
    verdict = Verdict::malformed;
    reason = "";
    has_stream = false;
    stream = 0;
    frame_bits = 64;
    frame_bytes = 0;
    marker = false;
    has_timestamp = false;
    timestamp = timestamp_frac = 0;
    nspans = nitems = 0;
  }
  void malformed(const char* why) noexcept {
    verdict = Verdict::malformed;
    reason = why;
  }
};

// A received packet's bytes as a decoder sees them (Packet::frame_head, segment 0 and 1).
struct PacketBytes {
  std::span<const std::byte> frame;  // from the Ethernet header to the end of `first`; empty
                                     // where the engine keeps no headers (socket)
  std::span<const std::byte> first;  // the UDP payload's first segment (headers lie in it)
  std::span<const std::byte> rest;   // the second segment of a packet in two buffers, else empty
  uint32_t packet_len = 0;           // the whole UDP payload: first + rest
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  // first: the packet's first segment (the UDP payload from its first byte; headers must lie
  // in it); packet_len: the whole UDP payload's length (segments after the first included).
  // Spans never reach beyond packet_len.
  virtual void decode(std::span<const std::byte> first, uint32_t packet_len, Decoded& out) const noexcept = 0;
  // decode() with the packet's headers: what the tracker calls. Decoders that read the IP/UDP
  // headers (roce: the ICRC) or keep state between packets (roce: PSNs per queue pair)
  // override it; such a decoder is called from one thread, in arrival order. Never allocates,
  // throws or reads outside the packet's pieces.
  virtual void decode_packet(const PacketBytes& p, Decoded& out) noexcept { decode(p.first, p.packet_len, out); }
  // Whether decode_packet() reads the whole packet (roce: the ICRC), so that its bytes are
  // in the L1 cache when it returns: a copy is then cheapest at once, not batched.
  virtual bool reads_whole_packet() const noexcept { return false; }
};

// The decoder of cfg.mode (fields, spead, vita49 or roce; the config already validated). Throws
// Error for a mode that places slots (sequence, arrival, immediate).
std::unique_ptr<Decoder> make_decoder(const ReorderConfig& cfg);

// cfg.granule, or the mode's default when 0 (payload_size for fields + index, 8 for
// byte_offset, spead and roce, vita49.sample_bytes for vita49).
uint32_t granule_of(const ReorderConfig& cfg) noexcept;
// The largest frame in input bytes (cfg.frame_bytes, or for fields + index
// packets_per_frame x payload_size, for vita49 samples_per_frame x sample_bytes, for roce
// the largest queue_pairs[].slot_size when 0).
uint64_t frame_bytes_of(const ReorderConfig& cfg) noexcept;
// cfg.frame_timeout_us in ns, or when 0 (auto) kFrameTimeoutUs, in mode rtp_video two frame
// periods of video.exactframerate.
uint64_t frame_timeout_ns_of(const ReorderConfig& cfg) noexcept;

}  // namespace netdaq::protocols
