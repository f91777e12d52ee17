// Endless sensor traffic for the span-mode benches (bench/cpu_decoders.cpp, bench/gpu/
// gpu_pipeline.cu): real fields / SPEAD / VITA-49 packets from the test generators
// (tests/protocols), one stream, frames of packets_per_frame packets of `payload` frame bytes
// each, in order. A few frames are generated once; the benches reuse those packets forever
// by rewriting each packet's frame field (stamp(): fields' frame number, SPEAD's heap
// counter, VITA-49's sample-count timestamp) for its place n in the endless stream, as the
// sequence rows rewrite the sequence number. The bytes a packet carries repeat with the
// generated frames: the truth of frame g is frames[g % frames.size()].
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "netdaq/config.h"
#include "protocols/fields_generator.h"
#include "protocols/generated.h"
#include "protocols/spead_generator.h"
#include "protocols/vita49_generator.h"

namespace netdaq::benchspan {

enum class Proto : uint8_t { fields, spead, vita49 };
inline constexpr Proto kProtos[] = {Proto::fields, Proto::spead, Proto::vita49};

inline const char* name_of(Proto p) {
  return p == Proto::fields ? "fields" : p == Proto::spead ? "spead" : "vita49";
}

struct SpanTraffic {
  Proto proto = Proto::fields;
  uint32_t payload = 0;            // frame bytes per packet
  uint32_t packets_per_frame = 0;
  uint32_t header = 0;             // bytes before the frame bytes in each packet
  uint32_t stamp_at = 0;           // byte offset of the field stamp() writes
  testgen::GeneratedTraffic t;     // frames 0 .. frames - 1, packets in order

  uint64_t frame_bytes() const { return uint64_t{payload} * packets_per_frame; }
  size_t packets() const { return t.packets.size(); }
  // The frame of packet n of the endless stream (also the frame number the decoder reports).
  uint64_t frame_of(uint64_t n) const { return n / packets_per_frame; }
  const std::vector<std::byte>& truth(uint64_t frame) const { return t.frames[frame % t.frames.size()].bytes; }

  // Writes the frame field of packet n of the endless stream into `packet` (a copy of
  // t.packets[n % packets()]): 4 or 8 bytes, big-endian, never the bytes a span carries.
  void stamp(std::byte* packet, uint64_t n) const noexcept {
    switch (proto) {
      case Proto::fields: {  // u32 frame number at 0
        const uint32_t v = __builtin_bswap32(static_cast<uint32_t>(frame_of(n)));
        std::memcpy(packet + stamp_at, &v, 4);
        return;
      }
      case Proto::spead: {  // heap counter item: 16 bits mode + id, 48 bits value
        uint64_t v;
        std::memcpy(&v, packet + stamp_at, 8);
        v = (__builtin_bswap64(v) & ~((uint64_t{1} << 48) - 1)) | frame_of(n);
        v = __builtin_bswap64(v);
        std::memcpy(packet + stamp_at, &v, 8);
        return;
      }
      case Proto::vita49: {  // TSF (sample count) = the packet's first sample
        const uint64_t v = __builtin_bswap64(n * (payload / 4));
        std::memcpy(packet + stamp_at, &v, 8);
        return;
      }
    }
  }

  // The mode's part of a ReorderConfig (the caller sets launch, staging, buffers, ...).
  ReorderConfig config() const {
    ReorderConfig c;
    c.payload_size = payload;  // sizes staging places as in the sequence rows (spans never exceed it)
    c.frame_bytes = frame_bytes();
    c.max_streams = 1;
    switch (proto) {
      case Proto::fields:
        c.mode = ReorderMode::fields;
        c.fields.frame = PacketField{0, 32, ByteOrder::big};
        c.fields.index = PacketField{4, 32, ByteOrder::big};
        c.payload_offset = testgen::kFieldsHeader;
        break;
      case Proto::spead:
        c.mode = ReorderMode::spead;
        break;
      case Proto::vita49:
        c.mode = ReorderMode::vita49;
        c.vita49.samples_per_frame = packets_per_frame * (payload / 4);
        c.vita49.sample_bytes = 4;
        break;
    }
    return c;
  }
};

// frames x packets_per_frame packets; throws std::runtime_error if the generator's packets are
// not what stamp() assumes.
inline SpanTraffic make_span_traffic(Proto proto, uint32_t payload, uint32_t packets_per_frame, uint32_t frames,
                                     uint64_t seed = 7) {
  SpanTraffic s;
  s.proto = proto;
  s.payload = payload;
  s.packets_per_frame = packets_per_frame;
  const auto fail = [&](const std::string& why) {
    throw std::runtime_error(std::string("span traffic ") + name_of(proto) + ": " + why);
  };
  switch (proto) {
    case Proto::fields: {
      testgen::FieldsGenOptions o;
      o.frames = frames;
      o.frame_bytes = payload * packets_per_frame;
      o.payload = payload;
      o.seed = seed;
      s.t = testgen::make_fields(o);
      s.header = testgen::kFieldsHeader;
      s.stamp_at = 0;
      break;
    }
    case Proto::spead: {
      testgen::SpeadGenOptions o;
      o.heaps_per_stream = frames;
      o.heap_sizes = {uint64_t{payload} * packets_per_frame};
      o.max_payload = payload;
      o.first_heap_counter = 0;
      o.seed = seed;
      s.t = testgen::make_spead(o);
      // Header (8) + item pointers; find the heap counter's (immediate item 0x1).
      const auto& p = s.t.packets.at(0).payload;
      const uint32_t nitems = uint32_t(p[6]) << 8 | uint32_t(p[7]);
      s.header = 8 + 8 * nitems;
      for (uint32_t i = 0; i < nitems; ++i) {
        uint64_t v;
        std::memcpy(&v, p.data() + 8 + 8 * i, 8);
        v = __builtin_bswap64(v);
        if (v >> 63 && ((v >> 48) & 0x7fff) == 1) s.stamp_at = 8 + 8 * i;
      }
      if (!s.stamp_at) fail("no heap counter item");
      break;
    }
    case Proto::vita49: {
      if (payload % 4) fail("payload not whole 4-byte samples");
      testgen::Vita49GenOptions o;
      o.streams = {0x1000};  // type 1: header, stream id, then the 2-word TSF
      o.samples_per_packet = {payload / 4};
      o.samples_per_frame = packets_per_frame * (payload / 4);
      o.frames = frames;
      o.seed = seed;
      s.t = testgen::make_vita49(o);
      s.header = 16;
      s.stamp_at = 8;
      break;
    }
  }
  // Every packet: one span of `payload` bytes at `header`, frame n / packets_per_frame.
  if (s.t.packets.size() != size_t{frames} * packets_per_frame || s.t.frames.size() != frames)
    fail("unexpected packet or frame count");
  for (size_t n = 0; n < s.t.packets.size(); ++n) {
    auto& p = s.t.packets[n];
    if (p.spans.size() != 1 || p.spans[0].packet_offset != s.header || p.spans[0].bytes != payload ||
        p.spans[0].frame != s.frame_of(n) || p.payload.size() != s.header + payload)
      fail("packet " + std::to_string(n) + " is not one span of the payload after the header");
    std::vector<std::byte> copy = p.payload;
    s.stamp(copy.data(), n);  // must be what the generator wrote
    if (copy != p.payload) fail("stamp() does not reproduce packet " + std::to_string(n));
  }
  return s;
}

}  // namespace netdaq::benchspan
