// The placement model on the CPU: decoders (fields, spead, vita49) and SpanTracker build
// frames from generated traffic delivered in order, with losses, reordered and duplicated,
// and every frame must equal the reference model (tests/protocols/reference_model.h) byte
// for byte, with exact counters. The GPU path (tests/gpu/span_pipeline_test.cpp) moves the
// same spans with kernels; this is the bookkeeping it relies on, checked in CI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "gpu/host/frame_tracker.h"
#include "gpu/host/span_tracker.h"
#include "protocols/decoder.h"
#include "protocols/fields_generator.h"
#include "protocols/reference_model.h"
#include "protocols/spead_generator.h"
#include "protocols/vita49_generator.h"

namespace netdaq::gpu {
namespace {

using testgen::ExpectedFrames;
using testgen::GeneratedTraffic;

struct HostFrame {
  FrameMeta meta;
  bool complete = false;
  std::vector<std::byte> bytes;
  std::vector<uint64_t> missing;  // per granule
};

struct Counts {
  uint64_t packets = 0, control = 0, decoder_malformed = 0;
};

// What FramePipeline does, with memcpy for the GPU: decode, place, copy, zero-fill, hand out.
class HostAssembler {
 public:
  explicit HostAssembler(const ReorderConfig& cfg) : decoder_(protocols::make_decoder(cfg)), tracker_(span_tracker_config(cfg)) {
    frame_bytes_ = protocols::frame_bytes_of(cfg);
    mem_.assign(frame_bytes_ * cfg.frame_buffers, std::byte{0x5A});  // stale bytes must never show
  }
  void feed(const std::vector<std::byte>& payload, uint64_t flow, uint64_t now_ns = 0) {
    ++counts.packets;
    decoder_->decode(std::span(payload.data(), payload.size()), static_cast<uint32_t>(payload.size()), d_);
    if (d_.verdict == protocols::Verdict::malformed) {
      ++counts.decoder_malformed;
      return;
    }
    if (d_.verdict == protocols::Verdict::control || d_.nspans == 0) {
      ++counts.control;
      return;
    }
    PlacedSpan out[protocols::kMaxSpans];
    SpanOutcome outcome;
    const uint32_t n = tracker_.place(d_, d_.has_stream ? d_.stream : flow, now_ns, out, &outcome);
    for (uint32_t i = 0; i < n; ++i)
      std::memcpy(&mem_[out[i].buffer * frame_bytes_ + out[i].offset], payload.data() + out[i].packet_offset,
                  out[i].bytes);
    drain();
  }
  void expire(uint64_t now_ns) {
    tracker_.expire(now_ns);
    drain();
  }
  void finish() {
    tracker_.close_all();
    drain();
  }
  const SpanTracker& tracker() const { return tracker_; }
  std::vector<HostFrame> frames;
  Counts counts;
  // Every packet counted once.
  void expect_accounted() const {
    const SpanStats& s = tracker_.stats();
    EXPECT_EQ(counts.packets, s.placed + s.duplicate + s.late + s.no_buffer + s.malformed + s.no_stream +
                                  counts.control + counts.decoder_malformed);
  }

 private:
  void drain() {
    SpanClosedFrame c;
    while (tracker_.pop_closed(&c)) {
      HostFrame f;
      f.meta = tracker_.meta(c.buffer);
      f.complete = c.complete;
      const uint64_t g = tracker_.granule(), units = (f.meta.size + g - 1) / g;
      const uint64_t* present = tracker_.presence(c.buffer);
      f.missing.assign((units + 63) / 64, 0);
      std::byte* base = &mem_[c.buffer * frame_bytes_];
      for (uint64_t u = 0; u < units; ++u) {
        if (present[u / 64] >> (u % 64) & 1) continue;
        f.missing[u / 64] |= uint64_t{1} << (u % 64);
        std::memset(base + u * g, 0, std::min(g, f.meta.size - u * g));
      }
      f.bytes.assign(base, base + f.meta.size);
      std::memset(base, 0x5A, frame_bytes_);  // what the next frame in this buffer must not show
      frames.push_back(std::move(f));
      tracker_.release_buffer(c.buffer);
    }
  }
  std::unique_ptr<protocols::Decoder> decoder_;
  SpanTracker tracker_;
  protocols::Decoded d_;
  uint64_t frame_bytes_ = 0;
  std::vector<std::byte> mem_;
};

// The frames built equal the reference model's, byte for byte, in frame order per stream.
void expect_frames(const std::vector<HostFrame>& got, const ExpectedFrames& want) {
  std::map<std::pair<uint64_t, uint64_t>, const HostFrame*> by_key;
  std::map<uint64_t, uint64_t> last_frame;
  for (const auto& f : got) {
    EXPECT_TRUE(by_key.emplace(std::pair{f.meta.stream, f.meta.frame}, &f).second)
        << "frame " << f.meta.frame << " of stream " << f.meta.stream << " came out twice";
    auto [it, fresh] = last_frame.emplace(f.meta.stream, f.meta.frame);
    if (!fresh) {
      EXPECT_GT(f.meta.frame, it->second) << "stream " << f.meta.stream << ": frames out of order";
      it->second = f.meta.frame;
    }
  }
  ASSERT_EQ(by_key.size(), want.size());
  for (const auto& [key, e] : want) {
    auto it = by_key.find(key);
    ASSERT_NE(it, by_key.end()) << "frame " << key.second << " of stream " << key.first << " missing";
    const HostFrame& f = *it->second;
    EXPECT_EQ(f.complete, e.complete) << "frame " << key.second;
    EXPECT_EQ(f.meta.bytes_present, e.bytes_present) << "frame " << key.second;
    ASSERT_EQ(f.bytes.size(), e.bytes.size()) << "frame " << key.second;
    EXPECT_TRUE(f.bytes == e.bytes) << "frame " << key.second << " of stream " << key.first << ": bytes differ";
  }
}

// Feeds the delivery order (flow = the truth's stream of the packet's first span).
void run(HostAssembler& a, const GeneratedTraffic& t, const std::vector<size_t>& order) {
  for (size_t i : order) {
    const auto& p = t.packets[i];
    a.feed(p.payload, p.spans.empty() ? 0 : p.spans[0].stream);
  }
  a.finish();
}

ReorderConfig fields_config(bool byte_offset, uint32_t frame_bits) {
  ReorderConfig c;
  c.mode = ReorderMode::fields;
  c.fields.frame = PacketField{frame_bits == 16 ? 2u : 0u, static_cast<uint8_t>(frame_bits), ByteOrder::big};
  (byte_offset ? c.fields.byte_offset : c.fields.index) = PacketField{4, 32, ByteOrder::big};
  c.fields.stream = PacketField{8, 8, ByteOrder::big};
  c.payload_offset = testgen::kFieldsHeader;
  c.payload_size = 1000;
  c.frame_bytes = 7700;
  c.max_open_frames = 4;
  c.max_streams = 3;
  c.frame_buffers = 16;
  return c;
}

TEST(fields_frames, BatchAndIndexInOrderGiveCompleteFrames) {
  testgen::FieldsGenOptions o;
  o.frame_bytes = 7700;
  o.frames = 6;
  const GeneratedTraffic t = testgen::make_fields(o);
  HostAssembler a(fields_config(false, 32));
  run(a, t, testgen::in_order(t.packets.size()));
  expect_frames(a.frames, testgen::expected_frames(t, testgen::in_order(t.packets.size())));
  EXPECT_EQ(a.tracker().stats().frames_complete, 6u);
  EXPECT_EQ(a.tracker().stats().placed, t.packets.size());
  a.expect_accounted();
}

TEST(fields_frames, ThreeStreamsLostReorderedDuplicatedWrappingFrameNumbers) {
  for (bool byte_offset : {false, true}) {
    testgen::FieldsGenOptions o;
    o.streams = 3;
    o.frames = 12;
    o.frame_bytes = 7700;
    o.byte_offset = byte_offset;
    o.frame_bits = 16;
    o.first_frame = 65536 - 5;  // wraps after 5 frames
    const GeneratedTraffic t = testgen::make_fields(o);
    // Reordered within 20 packets (less than a frame of 3 streams x 8 packets apart), every
    // 7th lost, every 5th duplicated.
    auto order = testgen::shuffle_within(testgen::in_order(t.packets.size()), 20, 7);
    order = testgen::duplicate_every(testgen::drop_every(order, 7, 3), 5);
    HostAssembler a(fields_config(byte_offset, 16));
    run(a, t, order);
    SCOPED_TRACE(byte_offset ? "byte_offset" : "index");
    expect_frames(a.frames, testgen::expected_frames(t, order));
    const SpanStats& s = a.tracker().stats();
    EXPECT_EQ(s.duplicate, order.size() - (t.packets.size() - (t.packets.size() - 3 + 6) / 7));
    EXPECT_EQ(s.late, 0u);
    EXPECT_EQ(a.tracker().streams().size(), 3u);
    a.expect_accounted();
  }
}

TEST(fields_frames, SequenceModeIsTheCaseOfOneSpanPerPacket) {
  // mode sequence (seq / 8, seq % 8) and mode fields with the same 32-bit counter read twice,
  // shifted by 3 and masked to 3 bits: the same frames, counters and missing bitmaps.
  ReorderConfig c;
  c.mode = ReorderMode::fields;
  c.fields.frame = PacketField{0, 32, ByteOrder::big, 3};
  c.fields.index = PacketField{0, 32, ByteOrder::big, 0, 7};
  c.payload_offset = 4;
  c.payload_size = 64;
  c.frame_bytes = 8 * 64;
  c.max_open_frames = 3;
  c.frame_buffers = 6;
  HostAssembler a(c);
  TrackerConfig tc;
  tc.packets_per_frame = 8;
  tc.max_open_frames = 3;
  tc.frame_buffers = 6;
  tc.seq_bits = 32;
  FrameTracker slots(tc);
  std::vector<uint64_t> seqs;
  for (uint64_t s = 0; s < 200; ++s)
    if (s % 11 != 4) seqs.push_back(s);  // lost
  for (size_t i = 0; i + 5 < seqs.size(); i += 9) std::swap(seqs[i], seqs[i + 5]);  // reordered
  seqs.push_back(40);  // late
  seqs.push_back(seqs[150]);  // duplicate
  std::vector<ClosedFrame> slot_frames;
  std::vector<std::vector<uint64_t>> slot_missing;
  for (uint64_t s : seqs) {
    std::vector<std::byte> p(4 + 64, std::byte(s));
    for (int k = 0; k < 4; ++k) p[k] = std::byte(s >> (24 - 8 * k));
    a.feed(p, 0);
    uint32_t ring_slot;
    slots.place(s, 0, &ring_slot);
    ClosedFrame f;
    while (slots.pop_closed(&f)) {
      slot_frames.push_back(f);
      std::vector<uint64_t> m(1, ~slots.presence(f.buffer)[0] & 0xFF);
      slot_missing.push_back(m);
      slots.release_buffer(f.buffer);
    }
  }
  a.finish();
  slots.close_all();
  ClosedFrame f;
  while (slots.pop_closed(&f)) {
    slot_frames.push_back(f);
    slot_missing.push_back({~slots.presence(f.buffer)[0] & 0xFF});
  }
  ASSERT_EQ(a.frames.size(), slot_frames.size());
  for (size_t i = 0; i < slot_frames.size(); ++i) {
    EXPECT_EQ(a.frames[i].meta.frame, slot_frames[i].index);
    EXPECT_EQ(a.frames[i].complete, slot_frames[i].complete);
    EXPECT_EQ(a.frames[i].meta.bytes_present, uint64_t{slot_frames[i].received} * 64);
    EXPECT_EQ(a.frames[i].missing, slot_missing[i]) << "frame " << slot_frames[i].index;
  }
  const SpanStats& s = a.tracker().stats();
  const TrackerStats& t = slots.stats();
  EXPECT_EQ(s.placed, t.placed);
  EXPECT_EQ(s.duplicate, t.duplicate);
  EXPECT_EQ(s.late, t.late);
  EXPECT_EQ(s.frames_complete, t.frames_complete);
  EXPECT_EQ(s.frames_incomplete, t.frames_incomplete);
  EXPECT_EQ(s.frames_skipped, t.frames_skipped);
  EXPECT_EQ(s.bytes_missing, t.packets_missing * 64);
}

TEST(fields_frames, MarkerEndsAFrameOfAnySize) {
  // Frames of 2500, 900 and 4100 bytes, each ended by its marker packet: a frame's size is
  // where its marker's span ends; a lost packet leaves zeros, the marker still closes it.
  ReorderConfig c = fields_config(true, 32);
  c.fields.marker = PacketField{9, 8, ByteOrder::big, 7, 1};
  c.frame_bytes = 8000;
  c.max_streams = 1;
  HostAssembler a(c);
  GeneratedTraffic all;
  uint64_t frame = 0;
  for (uint32_t size : {2500u, 900u, 4100u}) {
    testgen::FieldsGenOptions o;
    o.frames = 1;
    o.frame_bytes = size;
    o.first_frame = frame++;
    o.byte_offset = true;
    o.seed = size;
    GeneratedTraffic t = testgen::make_fields(o);
    for (auto& p : t.packets) all.packets.push_back(p);
    for (auto& f : t.frames) all.frames.push_back(f);
  }
  const auto order = testgen::drop_every(testgen::in_order(all.packets.size()), 4, 1);  // packets 1, 5: none a marker
  for (size_t i : order) a.feed(all.packets[i].payload, 0);
  EXPECT_EQ(a.frames.size(), 3u) << "each marker closed its frame without waiting";
  a.finish();
  expect_frames(a.frames, testgen::expected_frames(all, order));
  EXPECT_EQ(a.frames[1].meta.size, 900u);
  a.expect_accounted();
}

TEST(fields_frames, SpansOffTheGranuleOrBeyondTheFrameAreMalformed) {
  ReorderConfig c = fields_config(true, 32);
  c.granule = 100;
  HostAssembler a(c);
  auto packet = [](uint32_t frame, uint32_t offset, uint32_t n) {
    std::vector<std::byte> p(testgen::kFieldsHeader + n, std::byte{1});
    for (int k = 0; k < 4; ++k) p[k] = std::byte(frame >> (24 - 8 * k)), p[4 + k] = std::byte(offset >> (24 - 8 * k));
    return p;
  };
  a.feed(packet(0, 0, 1000), 0);     // placed
  a.feed(packet(0, 1050, 100), 0);   // starts off a granule
  EXPECT_STREQ(a.tracker().last_malformed(), "a span that does not start on a granule (rx.reorder.granule)");
  a.feed(packet(0, 1000, 150), 0);   // ends off a granule, not at the frame's end
  EXPECT_STREQ(a.tracker().last_malformed(),
               "a span that ends off a granule before its frame's end (rx.reorder.granule)");
  a.feed(packet(0, 7600, 200), 0);   // beyond frame_bytes (7700)
  EXPECT_STREQ(a.tracker().last_malformed(), "a frame larger than rx.reorder.frame_bytes");
  a.feed(packet(0, 7600, 100), 0);   // placed: ends at the frame's end
  a.feed(packet(0, 500, 1000), 0);   // overlaps what arrived: duplicate, nothing overwritten
  const SpanStats& s = a.tracker().stats();
  EXPECT_EQ(s.placed, 2u);
  EXPECT_EQ(s.malformed, 3u);
  EXPECT_EQ(s.duplicate, 1u);
  a.finish();
  ASSERT_EQ(a.frames.size(), 1u);
  EXPECT_EQ(a.frames[0].meta.bytes_present, 1100u);
  EXPECT_EQ(a.frames[0].bytes[999], std::byte{1});
  EXPECT_EQ(a.frames[0].bytes[1000], std::byte{0});
  a.expect_accounted();
}

TEST(fields_frames, StreamsBeyondMaxStreamsAndTimeouts) {
  ReorderConfig c = fields_config(false, 32);
  c.max_streams = 2;
  c.frame_buffers = 8;
  c.frame_timeout_us = 1000;
  HostAssembler a(c);
  testgen::FieldsGenOptions o;
  o.streams = 3;
  o.frames = 1;
  o.frame_bytes = 7700;
  const GeneratedTraffic t = testgen::make_fields(o);
  // The first packet of each stream, at t = 0; then time passes.
  for (size_t i = 0; i < 3; ++i) a.feed(t.packets[i].payload, 0, 0);
  EXPECT_EQ(a.tracker().stats().no_stream, 1u);
  a.expire(999'000);
  EXPECT_TRUE(a.frames.empty());
  a.expire(1'000'000);
  ASSERT_EQ(a.frames.size(), 2u);
  EXPECT_FALSE(a.frames[0].complete);
  EXPECT_EQ(a.tracker().stats().bytes_missing, 2u * (7700 - 1000));
  a.expect_accounted();
}

ReorderConfig spead_config(uint64_t max_heap, uint32_t granule) {
  ReorderConfig c;
  c.mode = ReorderMode::spead;
  c.frame_bytes = max_heap;
  c.granule = granule;
  c.max_open_frames = 4;
  c.max_streams = 3;
  c.frame_buffers = 16;
  return c;
}

TEST(spead_frames, HeapsOfAnySizeFromThreeStreamsLostReorderedDuplicated) {
  for (unsigned bits : {48u, 40u}) {
    testgen::SpeadGenOptions o;
    o.heap_address_bits = bits;
    o.streams = 3;
    o.heaps_per_stream = 10;
    o.heap_sizes = {4099, 1, 12345, 777, 8191};
    o.max_payload = 1472;
    o.random_payload_sizes = true;
    o.stream_item = 0x7001;
    o.extra_items = {testgen::SpeadExtraItem{0x1600, 1000, 10, 100000}};
    o.extra_items_every_packet = true;
    o.seed = bits;
    const GeneratedTraffic t = testgen::make_spead(o);
    auto order = testgen::shuffle_within(testgen::in_order(t.packets.size()), 6, bits);
    order = testgen::duplicate_every(testgen::drop_every(order, 9, 2), 4);
    ReorderConfig c = spead_config(12345, 1);
    c.spead.stream_item = 0x7001;
    HostAssembler a(c);
    run(a, t, order);
    SCOPED_TRACE("SPEAD-64-" + std::to_string(bits));
    expect_frames(a.frames, testgen::expected_frames(t, order));
    // A repeat is a duplicate, or late when its heap had already closed complete.
    const SpanStats& s = a.tracker().stats();
    EXPECT_EQ(s.duplicate + s.late, order.size() - std::set<size_t>(order.begin(), order.end()).size());
    a.expect_accounted();
    // The timestamp item of each heap is its frame's metadata.
    for (const auto& f : a.frames) {
      bool found = false;
      for (uint32_t k = 0; k < f.meta.nitems; ++k)
        if (f.meta.items[k].id == 0x1600) found = true;
      EXPECT_TRUE(found || f.meta.bytes_present == 0) << "heap " << f.meta.frame;
    }
  }
}

TEST(spead_frames, FlowIsTheStreamWithoutAStreamItem) {
  testgen::SpeadGenOptions o;
  o.streams = 2;
  o.heaps_per_stream = 4;
  o.heap_sizes = {3000};
  o.max_payload = 1000;
  const GeneratedTraffic t = testgen::make_spead(o);
  HostAssembler a(spead_config(4096, 8));
  run(a, t, testgen::in_order(t.packets.size()));
  expect_frames(a.frames, testgen::expected_frames(t, testgen::in_order(t.packets.size())));
  EXPECT_EQ(a.tracker().streams().size(), 2u);
  a.expect_accounted();
}

TEST(spead_frames, OversizeTruncatedAndChangingHeapsAreMalformedAndLoseNothingElse) {
  // A heap bigger than frame_bytes, a packet cut short (payload length beyond it), a packet
  // whose heap size differs from its heap's: each counted malformed, the good heaps intact.
  testgen::SpeadGenOptions o;
  o.heaps_per_stream = 3;
  o.heap_sizes = {3000};
  o.max_payload = 1000;
  GeneratedTraffic t = testgen::make_spead(o);
  auto packet = [](uint64_t heap, uint64_t size, uint64_t offset, size_t n, size_t cut = 0) {
    testgen::SpeadPacketSpec p;
    p.pointers = {{true, 1, heap}, {true, 2, size}, {true, 3, offset}, {true, 4, n}};
    p.payload.assign(n, std::byte{7});
    auto bytes = testgen::encode_spead_packet(p);
    bytes.resize(bytes.size() - cut);
    return bytes;
  };
  HostAssembler a(spead_config(4096, 8));
  for (size_t i = 0; i < t.packets.size(); ++i) {
    a.feed(t.packets[i].payload, 0);
    if (i == 1) {
      a.feed(packet(100, 5000, 0, 1000), 0);      // heap of 5000 > frame_bytes 4096
      a.feed(packet(1, 3000, 2000, 1000, 10), 0); // truncated: 10 bytes short of its length
      a.feed(packet(1, 2000, 0, 1000), 0);        // heap 1 said 3000 before
    }
  }
  a.finish();
  expect_frames(a.frames, testgen::expected_frames(t, testgen::in_order(t.packets.size())));
  EXPECT_EQ(a.counts.decoder_malformed + a.tracker().stats().malformed, 3u);
  EXPECT_EQ(a.tracker().stats().frames_complete, 3u);
  a.expect_accounted();
}

TEST(vita49_frames, SamplesPlacedByTimestampAcrossFrameBoundaries) {
  testgen::Vita49GenOptions o;
  o.streams = {0x1000, 0x2000};
  o.class_id = true;
  o.trailer = true;
  o.samples_per_packet = {100, 37, 250};
  o.samples_per_frame = 256;
  o.frames = 8;
  o.context_every = 5;
  const GeneratedTraffic t = testgen::make_vita49(o);
  auto order = testgen::shuffle_within(testgen::in_order(t.packets.size()), 5, 3);
  order = testgen::drop_every(order, 6, 1);
  ReorderConfig c;
  c.mode = ReorderMode::vita49;
  c.vita49.samples_per_frame = 256;
  c.vita49.sample_bytes = 4;
  c.max_streams = 2;
  c.frame_buffers = 8;
  HostAssembler a(c);
  run(a, t, order);
  expect_frames(a.frames, testgen::expected_frames(t, order));
  size_t contexts = 0;
  for (size_t i : order) contexts += t.packets[i].control;
  EXPECT_GT(contexts, 0u);
  EXPECT_EQ(a.counts.control, contexts);
  EXPECT_EQ(a.tracker().stats().bytes_missing, [&] {
    uint64_t m = 0;
    for (const auto& [k, e] : testgen::expected_frames(t, order)) m += e.bytes.size() - e.bytes_present;
    return m;
  }());
  a.expect_accounted();
}

}  // namespace
}  // namespace netdaq::gpu
