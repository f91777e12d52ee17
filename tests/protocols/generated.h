// What a test generator of a wire format (tests/protocols/<name>_generator.h) produces: the
// packets a sensor sends (UDP payloads), and the truth they were made from: the frames the
// sensor meant, and for each packet which bytes of which frame it carries. Generators are
// written from the published specs, never from src/protocols, so a decoder is checked against
// an independent reading of the spec (and, where Wireshark has a dissector, against it too).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace netdaq::testgen {

// Bytes [packet_offset, packet_offset + bytes) of the payload are bytes [offset, offset +
// bytes) of frame `frame` of stream `stream`.
struct TruthSpan {
  uint64_t stream = 0;
  uint64_t frame = 0;
  uint64_t offset = 0;
  uint32_t packet_offset = 0;
  uint32_t bytes = 0;
};

struct GeneratedPacket {
  std::vector<std::byte> payload;  // the UDP payload
  std::vector<TruthSpan> spans;    // empty for a packet that carries no frame bytes
  bool control = false;            // a valid packet that is counted, not placed (VITA-49 context)
  bool marker = false;             // the packet ends its frame
};

struct FrameTruth {
  uint64_t stream = 0;
  uint64_t frame = 0;
  std::vector<std::byte> bytes;  // the whole frame as the sensor meant it
  uint64_t timestamp = 0;        // the sensor's time of the frame's first byte (integer part)
  uint64_t timestamp_frac = 0;   // ... fractional part
};

struct GeneratedTraffic {
  std::vector<GeneratedPacket> packets;  // in the order the sensor sends them
  std::vector<FrameTruth> frames;        // in the order they begin
};

}  // namespace netdaq::testgen
