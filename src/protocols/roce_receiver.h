// The software RoCEv2 receiver (ReorderMode::roce; docs/roce-software.md): what an RDMA NIC
// checks of each RDMA WRITE to a UC/RC queue pair it owns, and where the bytes would land,
// told as spans of the placement model (decoder.h): frame = the window slot's frame, offset =
// the byte in the slot. Checked per packet, in this order (a packet counts once, under the
// first check it fails):
//   parse (BTH, RETH, ImmDt: roce::parse)           -> malformed
//   ICRC (options.check_icrc; needs the IP header)   -> no_headers, bad_icrc
//   destination QP one of options.queue_pairs        -> unknown_qp
//   PSN (per QP, 24 bits, psn_window behind)         -> psn_duplicate, psn_stale (kResyncAfter in a row: followed)
//   SEND ONLY                                        -> send (no receive buffers: counted)
//   rkey (RETH)                                      -> bad_rkey
//   VA - base_va inside a slot                       -> out_of_window
//   MIDDLE / LAST of a message whose FIRST arrived   -> no_first
//   FIRST / MIDDLE exactly mtu bytes, sizes add up   -> malformed
// else placed (WRITE bytes) or metadata (the end-of-window record).
// Stateful (PSNs, open messages, frame numbers per QP): decode_packet() only, from one thread.
#pragma once

#include <cstdint>
#include <vector>

#include "protocols/decoder.h"
#include "protocols/roce.h"

namespace netdaq::protocols {

namespace roce {
// Item ids the receiver keeps with a frame (Decoded::items, FrameMeta::items).
inline constexpr uint64_t kImmediateItem = 1;       // the WRITE with immediate's ImmDt (HSB: PSN bits + page)
inline constexpr uint64_t kMetadataItem = 0x100;    // + i: word i (big-endian 64-bit) of the end-of-window record
inline constexpr unsigned kMetadataWords = kMaxItems - 1;  // words 0..14 of it (128 B = 16 words: the last is not kept)
}  // namespace roce

// Per queue pair and in total. Outcomes: every packet counts under exactly one, so
// packets == placed + metadata + send + dropped(). psn_lost, psn_out_of_order and
// frames_ended are not outcomes.
struct RoceCounters {
  uint64_t packets = 0;
  uint64_t placed = 0;         // a WRITE's bytes handed on as spans (a WRITE of 0 bytes: none)
  uint64_t metadata = 0;       // end-of-window records (options.metadata_bytes) kept as items
  uint64_t send = 0;           // SEND ONLY: valid, not placed (no receive queue)
  uint64_t bad_icrc = 0;
  uint64_t no_headers = 0;     // ICRC to check but no IP header (engine without whole frames)
  uint64_t unknown_qp = 0;
  uint64_t bad_rkey = 0;
  uint64_t out_of_window = 0;  // VA outside [base_va, base_va + slots x stride) or past its slot
  uint64_t no_first = 0;       // WRITE MIDDLE / LAST whose FIRST never came (UC drops the rest)
  uint64_t psn_duplicate = 0;  // a PSN already received (within psn_window)
  uint64_t psn_stale = 0;      // further behind than psn_window, or before the QP's first PSN
  uint64_t malformed = 0;      // unparseable, or sizes that do not add up
  uint64_t psn_lost = 0;       // PSNs skipped and not (yet) received: a late one takes itself off
  uint64_t psn_out_of_order = 0;  // packets accepted behind a newer PSN (placed as usual)
  uint64_t frames_ended = 0;   // WRITEs with immediate accepted (each ends a frame)
  uint64_t psn_resyncs = 0;    // restarts followed (kResyncAfter refused PSNs in a row: a sensor restarted)

  uint64_t dropped() const noexcept {
    return bad_icrc + no_headers + unknown_qp + bad_rkey + out_of_window + no_first + psn_duplicate + psn_stale +
           malformed;
  }
};

class RoceDecoder final : public Decoder {
 public:
  // Allocates every queue pair's state (PSN bitmaps) here: decoding never allocates.
  // options: validated (config_validate_roce.cpp); slot_size 0 takes frame_bytes.
  RoceDecoder(const RoceOptions& options, uint64_t frame_bytes);

  // Stateless decoding cannot check PSNs: always malformed (use decode_packet()).
  void decode(std::span<const std::byte> first, uint32_t packet_len, Decoded& out) const noexcept override;
  void decode_packet(const PacketBytes& p, Decoded& out) noexcept override;
  bool reads_whole_packet() const noexcept override { return options_.check_icrc; }

  const RoceCounters& counters() const noexcept { return total_; }
  // One queue pair's (nullptr for a QPN not configured); unknown_qp counts only in total.
  const RoceCounters* counters(uint32_t qpn) const noexcept;
  std::vector<uint32_t> qpns() const;                  // the queue pairs, in config order
  uint32_t next_psn(uint32_t qpn) const noexcept;      // the PSN expected next (0 for an unknown QPN)

 private:
  static constexpr unsigned kMessages = 4;  // recent multi-packet messages per QP (reordered MIDDLE / LAST)
  static constexpr unsigned kFrames = 4;    // recent frames per QP whose furthest byte is known
 public:
  // Duplicate or stale PSNs in a row after which the QP takes the next one as new (a sensor
  // that restarted its PSNs; a UC responder follows any PSN at once).
  static constexpr uint32_t kResyncAfter = 16;

 private:

  struct Message {
    bool valid = false;
    uint32_t first_psn = 0;
    uint32_t packets = 0;   // ceil(length / mtu)
    uint64_t frame = 0;
    uint64_t offset = 0;    // in the frame
    uint32_t length = 0;
    bool metadata = false;  // the end-of-window record: nothing of it placed
    uint64_t RoceCounters::*refused = nullptr;  // its FIRST was refused: the rest count the same
    const char* why = nullptr;
  };
  struct FrameEnd {
    uint64_t frame = UINT64_MAX;
    uint64_t furthest = 0;  // end of the furthest byte written to it
  };
  struct Qp {
    RoceQueuePair cfg;      // stride and slot_size resolved
    uint64_t window = 0;    // slots x stride
    RoceCounters counters;
    // PSNs: expected = newest + 1; seen bit of PSN p at p % window bits.
    uint32_t expected = 0;
    uint32_t behind_valid = 0;  // PSNs behind expected that the QP had (0 until its first packet)
    uint64_t* seen = nullptr;   // into psn_bits_
    uint32_t refused_run = 0;   // duplicate or stale PSNs in a row
    // Frames: newest frame of an in-order packet, and whether its immediate came.
    bool any_frame = false;
    bool newest_ended = false;
    uint64_t newest = 0;
    Message messages[kMessages];
    unsigned next_message = 0;
    FrameEnd ends[kFrames];
  };
  enum class Psn : uint8_t { in_order, out_of_order, duplicate, stale };

  Qp* find(uint32_t qpn) noexcept;
  const char* check_icrc(const PacketBytes& p) const noexcept;
  Psn check_psn(Qp& q, uint32_t psn) noexcept;
  Psn classify_psn(Qp& q, uint32_t psn, uint32_t ahead) noexcept;  // ahead: psn - expected, 24 bits
  bool frame_of(Qp& q, uint64_t slot, bool in_order, uint64_t* frame) noexcept;
  void place_write(Qp& q, const roce::Packet& pk, std::span<const std::byte> first, bool in_order,
                   Decoded& out) noexcept;
  void end_frame(Qp& q, uint64_t frame, bool in_order, uint32_t imm, Decoded& out) noexcept;
  // Counts the packet's outcome (total and, when known, its QP's); refusals are malformed with why.
  void refuse(Qp* q, uint64_t RoceCounters::*counter, const char* why, Decoded& out) noexcept;
  void accept(Qp& q, uint64_t RoceCounters::*counter) noexcept;

  RoceOptions options_;
  uint32_t psn_bits_ = 0;          // bitmap bits per QP: psn_window rounded up to a power of two >= 64
  std::vector<Qp> qps_;
  std::vector<uint64_t> psn_words_;  // every QP's bitmap
  Qp* last_ = nullptr;             // the QP of the packet before
  RoceCounters total_;
};

}  // namespace netdaq::protocols
