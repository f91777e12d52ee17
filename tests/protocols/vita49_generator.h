// A VITA-49.2 (VRT) sensor, written from the standard (not from src/protocols): signal data
// packets carrying consecutive samples of one or more streams, placed by their sample-count
// timestamp into frames of samples_per_frame samples, and optionally context packets.
//
// Packet layout (32-bit big-endian words): header (type 31..28, C 27, T 26, TSI 23..22,
// TSF 21..20, packet count 19..16, size in words 15..0), stream id (types 1, 3, 4..7), class
// id (2 words: pad-bit count 31..27 + OUI 23..0, information class 31..16 + packet class
// 15..0), integer timestamp (TSI != 0), fractional timestamp (2 words, TSF != 0), payload,
// trailer (1 word, T, data types only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "protocols/generated.h"

namespace netdaq::testgen {

enum class VrtTsi : uint8_t { none = 0, utc = 1, gps = 2, other = 3 };
enum class VrtTsf : uint8_t { none = 0, sample_count = 1, real_time = 2, free_running = 3 };

inline constexpr uint8_t kVrtSignalData = 0;            // without stream id
inline constexpr uint8_t kVrtSignalDataWithStream = 1;
inline constexpr uint8_t kVrtContext = 4;

// Every field of one VRT packet, for encode_vrt_packet (odd packets in tests included).
struct VrtPacketFields {
  uint8_t type = kVrtSignalDataWithStream;  // 0..15; the stream id word is written for 1, 3, 4..7
  uint32_t stream_id = 0;
  bool class_id = false;
  uint32_t oui = 0;              // 24 bits
  uint16_t info_class = 0;
  uint16_t packet_class = 0;
  bool trailer = false;          // sets bit 26 and appends trailer_word
  uint32_t trailer_word = 0;
  uint8_t indicators = 0;        // header bits 25..24
  VrtTsi tsi = VrtTsi::none;
  VrtTsf tsf = VrtTsf::none;
  uint32_t integer_timestamp = 0;
  uint64_t fractional_timestamp = 0;
  uint8_t packet_count = 0;      // mod 16
  std::vector<std::byte> payload;  // padded with zeros to a whole word
  std::optional<uint16_t> size_words;  // the header's size field; unset: the true size
};

// The packet's bytes (a UDP payload).
std::vector<std::byte> encode_vrt_packet(const VrtPacketFields& fields);
// Words before the payload for these fields (header, stream id, class id, timestamps).
uint32_t vrt_prologue_words(const VrtPacketFields& fields);

struct Vita49GenOptions {
  std::vector<uint32_t> streams = {0x1000};  // stream ids, sent in turn; empty: one stream, type 0
  bool class_id = false;
  uint32_t oui = 0x0012A2;
  uint16_t info_class = 0x0001;
  uint16_t packet_class = 0x0002;
  bool trailer = false;
  VrtTsi tsi = VrtTsi::none;
  VrtTsf tsf = VrtTsf::sample_count;  // sample_count or free_running
  // With tsi and sample_count: samples per second; sample s is second s / rate, fractional
  // s % rate (the count restarts every second). Otherwise the fractional timestamp is s and
  // the integer timestamp s / rate (0 when rate is 0).
  uint64_t sample_rate = 0;
  uint64_t first_frame = 0;  // the first sample is first_frame x samples_per_frame
  std::vector<uint32_t> samples_per_packet = {100};  // cycled; every payload whole words
  uint32_t samples_per_frame = 256;
  uint32_t sample_bytes = 4;
  uint32_t frames = 4;          // per stream
  uint32_t context_every = 0;   // a context packet after every N data packets (0: none)
  uint64_t seed = 1;            // sample bytes
  uint8_t first_packet_count = 0;
};

// Context packets carry stream id (data stream id | kVrtContextStreamBit), with a count of
// their own.
inline constexpr uint32_t kVrtContextStreamBit = 0x80000000u;

// Data packets of every stream in turn (stream 0's first packet, stream 1's first, ...), each
// stream's samples consecutive from first_frame's first sample to the end of its last frame
// (the last packet shorter when the sizes do not divide it). Throws std::invalid_argument for
// options it cannot encode (a payload not whole words, a timestamp beyond 32 bits, ...).
// fields, when given, receives what each packet was encoded from (for checks of the header
// fields themselves, e.g. against Wireshark).
GeneratedTraffic make_vita49(const Vita49GenOptions& options, std::vector<VrtPacketFields>* fields = nullptr);

}  // namespace netdaq::testgen
