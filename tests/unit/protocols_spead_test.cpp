// SpeadDecoder (src/protocols/spead.h) against traffic from the spec-written generator
// (tests/protocols/spead_generator.h), and against hand-written odd packets.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "protocols/spead.h"
#include "protocols/spead_generator.h"

using namespace netdaq;
using protocols::Decoded;
using protocols::SpeadDecoder;
using protocols::Verdict;
using testgen::SpeadGenOptions;
using testgen::SpeadPacketSpec;
using testgen::SpeadPointer;

namespace {

Decoded decode(const SpeadDecoder& d, const std::vector<std::byte>& packet) {
  Decoded out;
  d.decode(packet, static_cast<uint32_t>(packet.size()), out);
  return out;
}

// The packet's first `first_bytes` bytes as the first segment (copied, so nothing past them
// is there to read), the rest counted in packet_len only.
Decoded decode_split(const SpeadDecoder& d, const std::vector<std::byte>& packet, size_t first_bytes) {
  const std::vector<std::byte> first(packet.begin(), packet.begin() + static_cast<ptrdiff_t>(first_bytes));
  Decoded out;
  d.decode(first, static_cast<uint32_t>(packet.size()), out);
  return out;
}

SpeadDecoder decoder(uint64_t stream_item = 0) { return SpeadDecoder(SpeadOptions{stream_item}); }

std::vector<std::byte> bytes(size_t n, uint8_t fill = 0xAB) { return std::vector<std::byte>(n, std::byte{fill}); }

// A valid SPEAD-64-48 data packet of heap 7: `payload` bytes at heap offset 100 of 1000.
SpeadPacketSpec data_packet(uint32_t payload = 64, unsigned address_bits = 48) {
  SpeadPacketSpec p = testgen::spead_packet_of_flavour(address_bits);
  p.pointers = {{true, 0x1, 7}, {true, 0x2, 1000}, {true, 0x3, 100}, {true, 0x4, payload}};
  p.payload = bytes(payload);
  return p;
}

// Checks every packet of the traffic against its truth, and that the spans rebuild each heap.
void expect_decodes_to_truth(const SpeadGenOptions& o, uint64_t decoder_stream_item) {
  const auto gen = testgen::make_spead_traffic(o);
  const auto d = decoder(decoder_stream_item);
  ASSERT_EQ(gen.traffic.packets.size(), gen.packets.size());
  std::map<std::pair<uint64_t, uint64_t>, std::vector<std::byte>> rebuilt;  // (stream, heap) -> bytes
  for (const auto& f : gen.traffic.frames) rebuilt[{f.stream, f.frame}].assign(f.bytes.size(), std::byte{0});

  for (size_t i = 0; i < gen.packets.size(); ++i) {
    SCOPED_TRACE("packet " + std::to_string(i));
    const auto& pkt = gen.traffic.packets[i];
    const auto& truth = gen.packets[i];
    const Decoded out = decode(d, pkt.payload);
    ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
    EXPECT_EQ(out.frame_bits, 64);
    EXPECT_EQ(out.frame_bytes, truth.heap_size);
    EXPECT_EQ(out.has_stream, truth.has_stream);
    EXPECT_EQ(out.stream, truth.stream);
    ASSERT_EQ(out.nitems, truth.items.size());
    for (unsigned k = 0; k < out.nitems; ++k) {
      EXPECT_EQ(out.items[k].id, truth.items[k].id);
      EXPECT_EQ(out.items[k].value, truth.items[k].value);
    }
    ASSERT_EQ(out.nspans, pkt.spans.size());
    for (unsigned k = 0; k < out.nspans; ++k) {
      const auto& got = out.spans[k];
      const auto& want = pkt.spans[k];
      EXPECT_EQ(got.frame, want.frame);
      EXPECT_EQ(got.offset, want.offset);
      EXPECT_EQ(got.packet_offset, want.packet_offset);
      EXPECT_EQ(got.bytes, want.bytes);
      ASSERT_LE(uint64_t{got.packet_offset} + got.bytes, pkt.payload.size());
      auto& heap = rebuilt[{want.stream, got.frame}];
      ASSERT_LE(got.offset + got.bytes, heap.size());
      std::memcpy(heap.data() + got.offset, pkt.payload.data() + got.packet_offset, got.bytes);
    }
    // Headers alone in the first segment, the payload in a later one: the same answer.
    if (out.nspans > 0) {
      const Decoded split = decode_split(d, pkt.payload, out.spans[0].packet_offset);
      ASSERT_EQ(split.verdict, Verdict::data) << split.reason;
      EXPECT_EQ(split.nspans, out.nspans);
      EXPECT_EQ(split.spans[0].offset, out.spans[0].offset);
      EXPECT_EQ(split.spans[0].bytes, out.spans[0].bytes);
      EXPECT_EQ(split.nitems, out.nitems);
    }
  }
  for (const auto& f : gen.traffic.frames) {
    const std::pair<uint64_t, uint64_t> key{f.stream, f.frame};
    EXPECT_EQ(rebuilt[key], f.bytes) << "stream " << f.stream << " heap " << f.frame;
  }
}

SpeadGenOptions varied_traffic(unsigned address_bits) {
  SpeadGenOptions o;
  o.heap_address_bits = address_bits;
  o.streams = 3;
  o.heaps_per_stream = 7;
  o.heap_sizes = {1000, 4099, 1, 7919, 0, 333};  // multiples of nothing, one empty heap
  o.max_payload = 1427;
  o.stream_item = 0x4200;
  o.extra_items = {{0x1600, 1'700'000'000, 8192, 1}, {0x1601, 5, 0, 100}};
  o.address_item = 0x1800;
  o.first_heap_counter = 0xABCD00;
  o.heap_counter_step = 3;
  o.seed = address_bits;
  return o;
}

}  // namespace

TEST(spead_generator, RejectsWhatSpeadCannotSay) {
  SpeadGenOptions o;
  o.heap_address_bits = 32;
  EXPECT_THROW(testgen::make_spead(o), std::invalid_argument);
  o = {};
  o.heap_address_bits = 40;
  o.first_heap_counter = uint64_t{1} << 40;
  EXPECT_THROW(testgen::make_spead(o), std::invalid_argument);
  o = {};
  o.stream_item = 0x2;  // heap size
  EXPECT_THROW(testgen::make_spead(o), std::invalid_argument);
}

TEST(spead_decoder, GeneratedSpead64_48MatchesTruth) {
  expect_decodes_to_truth(varied_traffic(48), 0x4200);
}

TEST(spead_decoder, GeneratedSpead64_40MatchesTruth) {
  expect_decodes_to_truth(varied_traffic(40), 0x4200);
}

TEST(spead_decoder, GeneratedShuffledPointersRandomSizesAndStopsMatchTruth) {
  for (unsigned bits : {48u, 40u}) {
    SCOPED_TRACE(bits);
    SpeadGenOptions o = varied_traffic(bits);
    o.shuffle_pointers = true;
    o.random_payload_sizes = true;
    o.extra_items_every_packet = true;
    o.stop_packets = true;
    o.interleave = false;
    expect_decodes_to_truth(o, 0x4200);
  }
}

TEST(spead_decoder, GeneratedWithoutHeapSizeOrStreamItem) {
  SpeadGenOptions o = varied_traffic(48);
  o.send_heap_size = false;
  o.stream_item = 0;
  o.random_payload_sizes = true;
  expect_decodes_to_truth(o, 0);
}

TEST(spead_decoder, StreamItemIsMetadataWhenNotConfigured) {
  auto spec = data_packet();
  spec.pointers.push_back({true, 0x4200, 3});
  const Decoded out = decode(decoder(0), encode_spead_packet(spec));
  ASSERT_EQ(out.verdict, Verdict::data);
  EXPECT_FALSE(out.has_stream);
  ASSERT_EQ(out.nitems, 1);
  EXPECT_EQ(out.items[0].id, 0x4200u);
  EXPECT_EQ(out.items[0].value, 3u);
}

TEST(spead_decoder, StreamStopPlacesNothing) {
  SpeadPacketSpec p = testgen::spead_packet_of_flavour(48);
  p.pointers = {{true, 0x1, 9}, {true, 0x2, 0}, {true, 0x3, 0}, {true, 0x4, 0}, {true, 0x6, 2}};
  const Decoded out = decode(decoder(), encode_spead_packet(p));
  EXPECT_EQ(out.verdict, Verdict::data) << out.reason;
  EXPECT_EQ(out.nspans, 0);
  EXPECT_EQ(out.nitems, 0);  // stream control is SPEAD's own, not metadata
}

TEST(spead_decoder, PayloadLengthShorterThanPacketLeavesPaddingOut) {
  auto bytes_after = encode_spead_packet(data_packet(64));
  bytes_after.resize(bytes_after.size() + 20, std::byte{0});  // padding after the payload
  const Decoded out = decode(decoder(), bytes_after);
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  ASSERT_EQ(out.nspans, 1);
  EXPECT_EQ(out.spans[0].bytes, 64u);
  EXPECT_EQ(out.spans[0].packet_offset, 8u + 4 * 8);
  EXPECT_EQ(out.spans[0].frame, 7u);
  EXPECT_EQ(out.spans[0].offset, 100u);
  EXPECT_EQ(out.frame_bytes, 1000u);
}

TEST(spead_decoder, KeepsAtMostMaxItemsAndIgnoresAbsoluteAndNullItems) {
  auto spec = data_packet();
  spec.pointers.push_back({false, 0x1800, 0});  // absolute: its value is in the heap
  spec.pointers.push_back({true, 0x0, 5});      // null: padding
  for (uint64_t k = 0; k < protocols::kMaxItems + 3; ++k) spec.pointers.push_back({true, 0x1000 + k, k * 11});
  const Decoded out = decode(decoder(), encode_spead_packet(spec));
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  ASSERT_EQ(out.nitems, protocols::kMaxItems);
  for (unsigned k = 0; k < out.nitems; ++k) {
    EXPECT_EQ(out.items[k].id, 0x1000u + k);
    EXPECT_EQ(out.items[k].value, k * 11u);
  }
}

TEST(spead_decoder, WideValuesOfBothFlavours) {
  for (unsigned bits : {48u, 40u}) {
    SCOPED_TRACE(bits);
    const uint64_t top = (uint64_t{1} << bits) - 1;
    const uint64_t widest_id = (uint64_t{1} << (63 - bits)) - 1;
    SpeadPacketSpec p = testgen::spead_packet_of_flavour(bits);
    p.pointers = {{true, 0x1, top}, {true, 0x3, top - 10}, {true, 0x4, 10}, {true, widest_id, top}};
    p.payload = bytes(10);
    const Decoded out = decode(decoder(widest_id), encode_spead_packet(p));
    ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
    EXPECT_EQ(out.frame_bytes, 0u);  // no heap size: the config's
    ASSERT_EQ(out.nspans, 1);
    EXPECT_EQ(out.spans[0].frame, top);
    EXPECT_EQ(out.spans[0].offset, top - 10);
    EXPECT_TRUE(out.has_stream);
    EXPECT_EQ(out.stream, top);
  }
}

TEST(spead_decoder, SplitPacketHeadersInFirstSegment) {
  const auto packet = encode_spead_packet(data_packet(200));
  const uint32_t headers = 8 + 4 * 8;
  for (size_t cut : {size_t{headers}, size_t{headers + 1}, size_t{100}, packet.size()}) {
    const Decoded out = decode_split(decoder(), packet, cut);
    ASSERT_EQ(out.verdict, Verdict::data) << "cut " << cut << ": " << out.reason;
    ASSERT_EQ(out.nspans, 1);
    EXPECT_EQ(out.spans[0].packet_offset, headers);
    EXPECT_EQ(out.spans[0].bytes, 200u);
  }
  EXPECT_STREQ(decode_split(decoder(), packet, headers - 1).reason, "SPEAD item pointers beyond the first segment");
  EXPECT_STREQ(decode_split(decoder(), packet, 7).reason, "SPEAD header beyond the first segment");
  EXPECT_STREQ(decode_split(decoder(), packet, 0).reason, "SPEAD header beyond the first segment");
}

TEST(spead_decoder, MalformedFewerThanEightBytes) {
  const auto packet = encode_spead_packet(data_packet());
  for (size_t n = 0; n < 8; ++n) {
    const std::vector<std::byte> cut(packet.begin(), packet.begin() + static_cast<ptrdiff_t>(n));
    const Decoded out = decode(decoder(), cut);
    EXPECT_EQ(out.verdict, Verdict::malformed);
    EXPECT_STREQ(out.reason, "shorter than the SPEAD header");
  }
}

TEST(spead_decoder, MalformedHeaderFields) {
  struct Case {
    const char* name;
    void (*change)(SpeadPacketSpec&);
    const char* reason;
  };
  const Case cases[] = {
      {"magic", [](SpeadPacketSpec& p) { p.magic = 0x54; }, "not SPEAD (magic is not 0x53)"},
      {"version", [](SpeadPacketSpec& p) { p.version = 3; }, "SPEAD version is not 4"},
      {"widths 3 + 6", [](SpeadPacketSpec& p) { p.item_pointer_width = 3; },
       "SPEAD item pointer width + heap address width is not 8 bytes"},
      {"widths 2 + 5", [](SpeadPacketSpec& p) { p.heap_address_width = 5; },
       "SPEAD item pointer width + heap address width is not 8 bytes"},
      {"flavour 64-32", [](SpeadPacketSpec& p) { p.item_pointer_width = 4, p.heap_address_width = 4; },
       "SPEAD flavour is not 64-48 or 64-40"},
      {"item count beyond the packet", [](SpeadPacketSpec& p) { p.item_count = 4 + 8 + 1; },
       "SPEAD item pointers beyond the packet"},
      {"item count 65535", [](SpeadPacketSpec& p) { p.item_count = 0xFFFF; }, "SPEAD item pointers beyond the packet"},
      {"no items", [](SpeadPacketSpec& p) { p.pointers.clear(), p.payload.clear(); },
       "SPEAD heap counter (item 0x1) missing"},
      {"heap counter", [](SpeadPacketSpec& p) { p.pointers.erase(p.pointers.begin()); },
       "SPEAD heap counter (item 0x1) missing"},
      {"heap counter absolute", [](SpeadPacketSpec& p) { p.pointers[0].immediate = false; },
       "SPEAD heap counter (item 0x1) missing"},
      {"heap offset", [](SpeadPacketSpec& p) { p.pointers.erase(p.pointers.begin() + 2); },
       "SPEAD heap offset (item 0x3) missing"},
      {"payload length", [](SpeadPacketSpec& p) { p.pointers.pop_back(); }, "SPEAD payload length (item 0x4) missing"},
      {"payload length beyond the packet", [](SpeadPacketSpec& p) { p.pointers[3].value = 65; },
       "SPEAD payload length beyond the packet"},
      {"payload length 2^48 - 1", [](SpeadPacketSpec& p) { p.pointers[3].value = (uint64_t{1} << 48) - 1; },
       "SPEAD payload length beyond the packet"},
      {"payload past the heap's end", [](SpeadPacketSpec& p) { p.pointers[2].value = 1000 - 63; },
       "SPEAD payload outside its heap (heap offset + payload length > heap size)"},
      {"offset past the heap's end", [](SpeadPacketSpec& p) { p.pointers[2].value = (uint64_t{1} << 48) - 1; },
       "SPEAD payload outside its heap (heap offset + payload length > heap size)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    SpeadPacketSpec p = data_packet(64);
    c.change(p);
    const Decoded out = decode(decoder(), encode_spead_packet(p));
    EXPECT_EQ(out.verdict, Verdict::malformed);
    EXPECT_STREQ(out.reason, c.reason);
    EXPECT_EQ(out.nspans, 0);
  }
}

TEST(spead_decoder, PayloadEndingAtTheHeapsEndIsInside) {
  SpeadPacketSpec p = data_packet(64);
  p.pointers[2].value = 1000 - 64;
  const Decoded out = decode(decoder(), encode_spead_packet(p));
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  EXPECT_EQ(out.spans[0].offset + out.spans[0].bytes, out.frame_bytes);
}
