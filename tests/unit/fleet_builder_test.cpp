// EventBuilder over real UCX: three sinks (nodes 0..2) build frames byte-identical to the
// concatenation of their fragments; a missing node times out (missing counted once), a late
// fragment is refused late, a repeated one duplicate.
#include <gtest/gtest.h>

#include <cstring>

#include "fleet_test_util.h"

namespace {

using namespace fleettest;

class fleet_builder : public Transports {
 protected:
  void make(uint32_t timeout_ms, uint32_t buffers = 8) {
    eb = std::make_unique<EventBuilder>(BuilderConfig{
        .receiver = {.listen = loopback(0), .max_bytes = 3 * 40000, .buffers = buffers, .transport = GetParam()},
        .nodes = 3, .timeout_ms = timeout_ms});
    for (uint32_t n = 0; n < 3; ++n)
      sinks.push_back(std::make_unique<FrameSink>(SinkConfig{.destinations = {loopback(eb->port())}, .node = n,
                                                             .nodes = 3, .credits = 8, .transport = GetParam()}));
    ASSERT_TRUE(pump_until([&] { step(); }, [&] {
      for (auto& s : sinks)
        if (!s->stats().total.connected) return false;
      return true;
    }));
  }
  void step() {
    for (auto& s : sinks) s->progress();
    eb->progress();
  }
  bool pop(BuiltFrame& out, int timeout_ms = 5000) {
    return pump_until([&] { step(); }, [&] { return eb->pop(out); }, timeout_ms);
  }
  std::unique_ptr<EventBuilder> eb;
  std::vector<std::unique_ptr<FrameSink>> sinks;
};

TEST_P(fleet_builder, ThreeNodesBuildFramesByteIdentical) {
  make(2000);
  const size_t len = 40000;  // rendezvous-sized fragments
  for (uint64_t f = 0; f < 5; ++f) {
    std::vector<std::byte> parts[3];
    for (uint32_t n = 0; n < 3; ++n) {
      parts[n] = pattern(f, len, n);
      sinks[n]->send({.stream = 7, .frame = f, .bytes = parts[n], .first_ns = 100 + n, .last_ns = 200 + n});
    }
    BuiltFrame b;
    ASSERT_TRUE(pop(b)) << "frame " << f;
    EXPECT_EQ(b.stream, 7u);
    EXPECT_EQ(b.frame, f);
    EXPECT_TRUE(b.complete);
    EXPECT_EQ(b.nodes_present, 7u);
    EXPECT_EQ(b.first_ns, 100u);
    EXPECT_EQ(b.last_ns, 202u);
    ASSERT_EQ(b.bytes.size(), 3 * len);
    for (uint32_t n = 0; n < 3; ++n) {
      EXPECT_EQ(std::memcmp(b.bytes.data() + n * len, parts[n].data(), len), 0) << "frame " << f << " node " << n;
      EXPECT_EQ(b.fragments[n].node, n);
      EXPECT_EQ(b.fragments[n].offset, n * len);
    }
    eb->release(b);
  }
  for (auto& s : sinks) {
    ASSERT_TRUE(pump_until([&] { step(); }, [&] { return s->stats().total.in_flight == 0; }));
    const SinkStats st = s->stats();
    expect_invariant(st);
    EXPECT_EQ(st.total.acked, 5u);
  }
  const BuilderStats bs = eb->stats();
  EXPECT_EQ(bs.frames, 5u);
  EXPECT_EQ(bs.frames_complete, 5u);
  EXPECT_EQ(bs.frames_timed_out, 0u);
  EXPECT_EQ(bs.receiver.placed, 15u);
  for (const auto& n : bs.nodes) {
    EXPECT_EQ(n.fragments, 5u);
    EXPECT_EQ(n.missing, 0u);
  }
}

TEST_P(fleet_builder, MissingNodeTimesOutLateAndDuplicateAreRefused) {
  make(300);
  const size_t len = 1000;
  std::vector<std::byte> parts[3];
  for (uint32_t n = 0; n < 3; ++n) parts[n] = pattern(1, len, n);
  // Node 1 duplicates its fragment; node 2 stays away until the frame timed out.
  sinks[0]->send({.frame = 1, .bytes = parts[0]});
  sinks[1]->send({.frame = 1, .bytes = parts[1]});
  sinks[1]->send({.frame = 1, .bytes = parts[1]});
  const auto t0 = std::chrono::steady_clock::now();
  BuiltFrame b;
  ASSERT_TRUE(pop(b, 3000));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250));
  EXPECT_FALSE(b.complete);
  EXPECT_EQ(b.nodes_present, 3u);
  ASSERT_EQ(b.bytes.size(), 3 * len);
  EXPECT_EQ(std::memcmp(b.bytes.data(), parts[0].data(), len), 0);
  EXPECT_EQ(std::memcmp(b.bytes.data() + len, parts[1].data(), len), 0);
  for (size_t i = 2 * len; i < 3 * len; ++i) ASSERT_EQ(b.bytes[i], std::byte{0}) << "byte " << i;
  sinks[2]->send({.frame = 1, .bytes = parts[2]});  // late: its frame is handed out already
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return eb->stats().receiver.late == 1; }));
  eb->release(b);
  // After release too, a fragment for that frame is late, and nothing new is built from it.
  sinks[2]->send({.frame = 1, .bytes = parts[2]});
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return eb->stats().receiver.late == 2; }));
  for (auto& s : sinks) ASSERT_TRUE(pump_until([&] { step(); }, [&] { return s->stats().total.in_flight == 0; }));
  const BuilderStats bs = eb->stats();
  EXPECT_EQ(bs.frames, 1u);
  EXPECT_EQ(bs.frames_timed_out, 1u);
  EXPECT_EQ(bs.frames_incomplete, 1u);
  EXPECT_EQ(bs.receiver.duplicate, 1u);
  EXPECT_EQ(bs.nodes[1].duplicate, 1u);
  EXPECT_EQ(bs.nodes[2].missing, 1u);
  EXPECT_EQ(bs.nodes[2].late, 2u);
  EXPECT_EQ(bs.nodes[0].missing + bs.nodes[1].missing, 0u);
  const SinkStats s1 = sinks[1]->stats(), s2 = sinks[2]->stats();
  expect_invariant(s1);
  expect_invariant(s2);
  EXPECT_EQ(s1.total.acked, 1u);
  EXPECT_EQ(s1.total.refused, 1u);
  EXPECT_EQ(s2.total.refused, 2u);
  EXPECT_EQ(sinks[0]->stats().total.acked, 1u);
}

TEST_P(fleet_builder, FlushHandsOutOpenFramesAndNoBufferRefuses) {
  make(60000, 2);
  auto part = pattern(0, 500);
  for (uint64_t f = 0; f < 3; ++f) sinks[0]->send({.frame = f, .bytes = part});
  // Two frames open (both buffers), the third refused no_buffer.
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return eb->stats().receiver.fragments == 3; }));
  EXPECT_EQ(eb->stats().receiver.no_buffer, 1u);
  BuiltFrame b;
  EXPECT_FALSE(eb->pop(b));
  eb->flush();
  int n = 0;
  while (eb->pop(b)) {
    EXPECT_EQ(b.nodes_present, 1u);
    eb->release(b);
    ++n;
  }
  EXPECT_EQ(n, 2);
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return sinks[0]->stats().total.in_flight == 0; }));
  const SinkStats s = sinks[0]->stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.acked, 2u);
  EXPECT_EQ(s.total.refused, 1u);
  const BuilderStats bs = eb->stats();
  EXPECT_EQ(bs.frames_timed_out, 2u);
  EXPECT_EQ(bs.nodes[1].missing, 2u);
  EXPECT_EQ(bs.nodes[2].missing, 2u);
}

INSTANTIATE_TEST_SUITE_P(fleet, fleet_builder, ::testing::Values(Transport::tcp, Transport::shm), transport_name);

}  // namespace
