// src/protocols/vita49: VRT traffic from the spec-written generator (tests/protocols) decodes to
// exactly its truth: streams, spans, frames byte for byte, timestamps; context and command
// packets are control; every malformed packet is rejected with its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "protocols/vita49.h"
#include "protocols/vita49_generator.h"

namespace {

using netdaq::Vita49Options;
using netdaq::protocols::Decoded;
using netdaq::protocols::kMaxSpans;
using netdaq::protocols::Verdict;
using netdaq::protocols::Vita49Decoder;
using netdaq::testgen::encode_vrt_packet;
using netdaq::testgen::GeneratedTraffic;
using netdaq::testgen::make_vita49;
using netdaq::testgen::Vita49GenOptions;
using netdaq::testgen::VrtPacketFields;
using netdaq::testgen::VrtTsf;
using netdaq::testgen::VrtTsi;

Vita49Options decoder_options(const Vita49GenOptions& g) {
  Vita49Options o;
  o.samples_per_frame = g.samples_per_frame;
  o.sample_bytes = g.sample_bytes;
  o.sample_rate = g.sample_rate;
  return o;
}

Decoded decode(const Vita49Decoder& d, const std::vector<std::byte>& packet) {
  Decoded out;
  d.decode(packet, static_cast<uint32_t>(packet.size()), out);
  return out;
}

// Decodes every packet, checks its verdict, stream and spans against the truth, rebuilds the
// frames from the spans and checks them byte for byte, and checks the timestamp of each packet
// that begins a frame against the frame's.
void expect_decodes_to_truth(const GeneratedTraffic& traffic, const Vita49GenOptions& g) {
  const Vita49Decoder decoder(decoder_options(g));
  const uint64_t frame_bytes = uint64_t{g.samples_per_frame} * g.sample_bytes;
  std::map<std::pair<uint64_t, uint64_t>, const netdaq::testgen::FrameTruth*> truth;
  for (const auto& f : traffic.frames) truth[{f.stream, f.frame}] = &f;
  std::map<std::pair<uint64_t, uint64_t>, std::vector<std::byte>> rebuilt;
  size_t data_packets = 0;

  for (size_t i = 0; i < traffic.packets.size(); ++i) {
    SCOPED_TRACE("packet " + std::to_string(i));
    const auto& p = traffic.packets[i];
    const Decoded d = decode(decoder, p.payload);
    if (p.control) {
      EXPECT_EQ(d.verdict, Verdict::control) << d.reason;
      EXPECT_EQ(d.nspans, 0);
      continue;
    }
    ++data_packets;
    ASSERT_EQ(d.verdict, Verdict::data) << d.reason;
    EXPECT_EQ(d.has_stream, !g.streams.empty());
    EXPECT_FALSE(d.marker);
    EXPECT_EQ(d.frame_bits, 64);
    EXPECT_EQ(d.has_timestamp, true);
    ASSERT_EQ(d.nspans, p.spans.size());
    for (size_t s = 0; s < p.spans.size(); ++s) {
      const auto& want = p.spans[s];
      const auto& got = d.spans[s];
      EXPECT_EQ(d.stream, want.stream);
      EXPECT_EQ(got.frame, want.frame) << "span " << s;
      EXPECT_EQ(got.offset, want.offset) << "span " << s;
      EXPECT_EQ(got.packet_offset, want.packet_offset) << "span " << s;
      EXPECT_EQ(got.bytes, want.bytes) << "span " << s;
      ASSERT_LE(uint64_t{got.packet_offset} + got.bytes, p.payload.size());
      ASSERT_LE(got.offset + got.bytes, frame_bytes);
      auto& frame = rebuilt[{d.stream, got.frame}];
      frame.resize(frame_bytes);
      std::memcpy(frame.data() + got.offset, p.payload.data() + got.packet_offset, got.bytes);
    }
    if (d.nspans > 0 && d.spans[0].offset == 0) {
      const auto it = truth.find({d.stream, d.spans[0].frame});
      ASSERT_NE(it, truth.end());
      EXPECT_EQ(d.timestamp, it->second->timestamp);
      EXPECT_EQ(d.timestamp_frac, it->second->timestamp_frac);
    }
  }
  EXPECT_GT(data_packets, 0u);
  ASSERT_EQ(rebuilt.size(), traffic.frames.size());
  for (const auto& f : traffic.frames) {
    const auto it = rebuilt.find({f.stream, f.frame});
    ASSERT_NE(it, rebuilt.end()) << "stream " << f.stream << " frame " << f.frame;
    EXPECT_EQ(it->second, f.bytes) << "stream " << f.stream << " frame " << f.frame;
  }
}

TEST(vita49_decoder, SignalDataWithStreamIdDecodesToTruth) {
  Vita49GenOptions g;
  g.streams = {0xABCD1234};
  const auto traffic = make_vita49(g);
  expect_decodes_to_truth(traffic, g);
}

TEST(vita49_decoder, SignalDataWithoutStreamIdHasNoStream) {
  Vita49GenOptions g;
  g.streams = {};
  const auto traffic = make_vita49(g);
  EXPECT_EQ(static_cast<unsigned>(traffic.packets[0].payload[0]) >> 4, 0u);  // type 0
  expect_decodes_to_truth(traffic, g);
}

TEST(vita49_decoder, ClassIdAndTrailerAreSkipped) {
  for (bool class_id : {false, true})
    for (bool trailer : {false, true}) {
      SCOPED_TRACE(std::string("class id ") + (class_id ? "on" : "off") + ", trailer " + (trailer ? "on" : "off"));
      Vita49GenOptions g;
      g.class_id = class_id;
      g.trailer = trailer;
      g.samples_per_packet = {64, 100, 28};
      expect_decodes_to_truth(make_vita49(g), g);
    }
}

// TSI + sample count with a sample rate: the fractional count restarts every second, the
// decoder adds seconds x rate; packets cross both second and frame boundaries.
TEST(vita49_decoder, IntegerSecondsTimesSampleRatePlaceAcrossSeconds) {
  for (VrtTsi tsi : {VrtTsi::utc, VrtTsi::gps}) {
    Vita49GenOptions g;
    g.tsi = tsi;
    g.sample_rate = 1000;
    g.samples_per_frame = 300;  // frames do not divide the second: every alignment occurs
    g.first_frame = 1'700'000'000ull * g.sample_rate / g.samples_per_frame;
    g.samples_per_packet = {128, 72, 250};
    g.frames = 12;
    g.class_id = true;
    g.trailer = true;
    const auto traffic = make_vita49(g);
    expect_decodes_to_truth(traffic, g);
    EXPECT_NE(traffic.frames.front().timestamp, traffic.frames.back().timestamp);  // seconds advanced
  }
}

// A free-running count does not restart with the seconds: it is the sample index alone, even
// with TSI and a sample rate.
TEST(vita49_decoder, FreeRunningCountIsTheSampleIndex) {
  Vita49GenOptions g;
  g.tsi = VrtTsi::other;
  g.tsf = VrtTsf::free_running;
  g.sample_rate = 500;
  g.first_frame = 77;
  g.samples_per_packet = {96, 40};
  g.frames = 10;
  expect_decodes_to_truth(make_vita49(g), g);
}

TEST(vita49_decoder, SampleCountWithoutSampleRateIsTheSampleIndex) {
  Vita49GenOptions g;
  g.tsi = VrtTsi::utc;  // integer timestamp present, but no rate to scale it
  g.first_frame = 5;
  expect_decodes_to_truth(make_vita49(g), g);
}

// Packets of different sizes, some crossing two, three and four frames.
TEST(vita49_decoder, PacketsCrossingFrameBoundariesGiveOneSpanPerFrame) {
  Vita49GenOptions g;
  g.samples_per_frame = 64;
  g.sample_bytes = 8;
  g.samples_per_packet = {200, 12, 44, 130, 1};
  g.frames = 20;
  const auto traffic = make_vita49(g);
  size_t most = 0;
  for (const auto& p : traffic.packets) most = std::max(most, p.spans.size());
  EXPECT_EQ(most, size_t{kMaxSpans});
  expect_decodes_to_truth(traffic, g);
}

TEST(vita49_decoder, SeveralStreamsInterleaved) {
  Vita49GenOptions g;
  g.streams = {1, 2, 0xFFFFFFFF};
  g.samples_per_packet = {100, 60};
  g.first_packet_count = 14;  // counts wrap mod 16 at once
  const auto traffic = make_vita49(g);
  EXPECT_EQ(traffic.frames.size(), 3u * g.frames);
  expect_decodes_to_truth(traffic, g);
}

TEST(vita49_decoder, ContextPacketsAreControl) {
  Vita49GenOptions g;
  g.streams = {7, 8};
  g.context_every = 3;
  g.class_id = true;
  g.tsi = VrtTsi::utc;
  g.sample_rate = 2048;
  const auto traffic = make_vita49(g);
  size_t context = 0;
  for (const auto& p : traffic.packets) context += p.control;
  EXPECT_GT(context, 2u);
  expect_decodes_to_truth(traffic, g);
}

// Placement is by timestamp: a gap in the packet count (lost or reordered packets) is no error.
TEST(vita49_decoder, PacketCountGapsAndReorderingAreAccepted) {
  Vita49GenOptions g;
  g.samples_per_packet = {32};
  auto traffic = make_vita49(g);
  std::swap(traffic.packets[1], traffic.packets[5]);
  traffic.packets.erase(traffic.packets.begin() + 2);
  const Vita49Decoder d(decoder_options(g));
  for (const auto& p : traffic.packets) {
    const Decoded out = decode(d, p.payload);
    ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
    EXPECT_EQ(out.spans[0].frame, p.spans[0].frame);
    EXPECT_EQ(out.spans[0].offset, p.spans[0].offset);
  }
}

VrtPacketFields data_fields(uint32_t payload_bytes) {
  VrtPacketFields f;
  f.type = 1;
  f.stream_id = 42;
  f.tsf = VrtTsf::sample_count;
  f.fractional_timestamp = 10;
  f.payload.assign(payload_bytes, std::byte{0x5A});
  return f;
}

Vita49Options small_frames() {
  Vita49Options o;
  o.samples_per_frame = 16;
  o.sample_bytes = 4;
  return o;
}

TEST(vita49_decoder, BytesAfterThePacketSizeAreIgnored) {
  auto packet = encode_vrt_packet(data_fields(16));
  const size_t vrt_bytes = packet.size();
  packet.resize(vrt_bytes + 12, std::byte{0xEE});  // datagram padding
  const Decoded d = decode(Vita49Decoder(small_frames()), packet);
  ASSERT_EQ(d.verdict, Verdict::data) << d.reason;
  ASSERT_EQ(d.nspans, 1);
  EXPECT_EQ(d.spans[0].packet_offset + d.spans[0].bytes, vrt_bytes);
}

TEST(vita49_decoder, TrailerBytesAreNotPlaced) {
  auto f = data_fields(16);
  f.trailer = true;
  f.trailer_word = 0xFFFFFFFF;
  const auto packet = encode_vrt_packet(f);
  const Decoded d = decode(Vita49Decoder(small_frames()), packet);
  ASSERT_EQ(d.verdict, Verdict::data) << d.reason;
  ASSERT_EQ(d.nspans, 1);
  EXPECT_EQ(d.spans[0].packet_offset, 16u);  // header, stream id, 2 fractional words
  EXPECT_EQ(d.spans[0].bytes, 16u);
  EXPECT_EQ(d.spans[0].packet_offset + d.spans[0].bytes + 4, packet.size());
}

TEST(vita49_decoder, PacketWithoutSamplesPlacesNothing) {
  const Decoded d = decode(Vita49Decoder(small_frames()), encode_vrt_packet(data_fields(0)));
  EXPECT_EQ(d.verdict, Verdict::data) << d.reason;
  EXPECT_EQ(d.nspans, 0);
  EXPECT_TRUE(d.has_stream);
  EXPECT_EQ(d.stream, 42u);
}

// Headers must lie in the first segment; the payload (and trailer) may continue after it.
TEST(vita49_decoder, HeadersInTheFirstSegmentPayloadBeyondIt) {
  auto f = data_fields(32);
  f.trailer = true;
  f.fractional_timestamp = 0;  // one frame
  const auto packet = encode_vrt_packet(f);
  const Vita49Decoder d(small_frames());
  const auto len = static_cast<uint32_t>(packet.size());
  Decoded out;
  d.decode(std::span(packet).first(16), len, out);  // exactly the headers
  ASSERT_EQ(out.verdict, Verdict::data) << out.reason;
  EXPECT_EQ(out.spans[0].packet_offset, 16u);
  EXPECT_EQ(out.spans[0].bytes, 32u);
  d.decode(std::span(packet).first(15), len, out);
  EXPECT_EQ(out.verdict, Verdict::malformed);
  EXPECT_STREQ(out.reason, "headers beyond the first segment");
}

TEST(vita49_decoder, CommandPacketsAreControl) {
  for (uint8_t type : {4, 5, 6, 7}) {
    VrtPacketFields f;
    f.type = type;
    f.stream_id = 99;
    f.tsf = VrtTsf::real_time;  // no sample count needed: nothing is placed
    f.payload.assign(8, std::byte{0});
    const Decoded d = decode(Vita49Decoder(small_frames()), encode_vrt_packet(f));
    EXPECT_EQ(d.verdict, Verdict::control) << int{type} << ": " << d.reason;
    EXPECT_EQ(d.nspans, 0);
    EXPECT_TRUE(d.has_stream);
    EXPECT_EQ(d.stream, 99u);
  }
}

void expect_malformed(const Vita49Decoder& d, std::span<const std::byte> first, uint32_t len, const char* reason) {
  Decoded out;
  out.nspans = 3;  // decode resets it
  d.decode(first, len, out);
  EXPECT_EQ(out.verdict, Verdict::malformed);
  EXPECT_STREQ(out.reason, reason);
  EXPECT_EQ(out.nspans, 0);
}
void expect_malformed(const Vita49Options& o, const std::vector<std::byte>& packet, const char* reason) {
  expect_malformed(Vita49Decoder(o), packet, static_cast<uint32_t>(packet.size()), reason);
}

TEST(vita49_decoder, FewerThanFourBytesAreMalformed) {
  const auto packet = encode_vrt_packet(data_fields(8));
  const Vita49Decoder d(small_frames());
  for (uint32_t n = 0; n < 4; ++n)
    expect_malformed(d, std::span(packet).first(n), n, "shorter than a VRT header word");
  expect_malformed(d, std::span(packet).first(3), 24, "headers beyond the first segment");
}

TEST(vita49_decoder, TruncatedPacketIsMalformed) {
  const auto packet = encode_vrt_packet(data_fields(32));
  const Vita49Decoder d(small_frames());
  for (size_t cut : {size_t{4}, size_t{12}, packet.size() - 4, packet.size() - 1}) {
    SCOPED_TRACE(cut);
    expect_malformed(d, std::span(packet).first(cut), static_cast<uint32_t>(cut), "packet size beyond the datagram");
  }
}

TEST(vita49_decoder, SizeBeyondThePacketIsMalformed) {
  auto f = data_fields(8);
  f.size_words = 0xFFFF;
  expect_malformed(small_frames(), encode_vrt_packet(f), "packet size beyond the datagram");
}

TEST(vita49_decoder, SizeSmallerThanItsHeadersIsMalformed) {
  auto f = data_fields(0);
  f.class_id = true;
  f.tsi = VrtTsi::utc;
  f.trailer = true;
  for (uint16_t words : {0, 1, 7}) {  // headers + trailer: 1 + 1 + 2 + 1 + 2 + 1 = 8 words
    f.size_words = words;
    expect_malformed(small_frames(), encode_vrt_packet(f), "packet size smaller than its headers");
  }
}

TEST(vita49_decoder, PayloadNotWholeSamplesIsMalformed) {
  Vita49Options o = small_frames();
  o.sample_bytes = 8;
  expect_malformed(o, encode_vrt_packet(data_fields(12)), "payload is not a whole number of samples");
}

TEST(vita49_decoder, NoSampleCountTimestampIsMalformed) {
  for (VrtTsf tsf : {VrtTsf::none, VrtTsf::real_time}) {
    auto f = data_fields(8);
    f.tsf = tsf;
    expect_malformed(small_frames(), encode_vrt_packet(f), "no sample-count timestamp");
  }
}

TEST(vita49_decoder, MoreThanFourFramesInOnePacketIsMalformed) {
  auto f = data_fields(16 * 4 * 4);  // 64 samples from sample 10: frames 0..4
  expect_malformed(small_frames(), encode_vrt_packet(f), "packet spans more than 4 frames");
  f.fractional_timestamp = 0;  // 64 samples from a frame's start: exactly 4 frames
  const Decoded d = decode(Vita49Decoder(small_frames()), encode_vrt_packet(f));
  EXPECT_EQ(d.verdict, Verdict::data) << d.reason;
  EXPECT_EQ(d.nspans, 4);
}

TEST(vita49_decoder, ReservedPacketTypeIsMalformed) {
  auto f = data_fields(8);
  f.type = 8;
  expect_malformed(small_frames(), encode_vrt_packet(f), "reserved VRT packet type");
}

TEST(vita49_decoder, SampleIndexOverflowIsMalformed) {
  Vita49Options o = small_frames();
  o.sample_rate = uint64_t{1} << 40;
  auto f = data_fields(8);
  f.tsi = VrtTsi::utc;
  f.integer_timestamp = 0xFFFFFFFF;  // x 2^40 is beyond 64 bits
  expect_malformed(o, encode_vrt_packet(f), "sample index overflows 64 bits");
  f.tsi = VrtTsi::none;
  f.fractional_timestamp = UINT64_MAX;  // the second sample's index is beyond 64 bits
  expect_malformed(o, encode_vrt_packet(f), "sample index overflows 64 bits");
}

}  // namespace
