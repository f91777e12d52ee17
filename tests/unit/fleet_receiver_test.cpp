// FrameSink -> FrameReceiver over real UCX (127.0.0.1 TCP and shared memory): bytes, metadata
// and presence arrive as sent; refusals and credits are counted at both ends.
#include <gtest/gtest.h>

#include <cstring>

#include "fleet_test_util.h"

namespace {

using namespace fleettest;

class fleet_receiver : public Transports {};

TEST_P(fleet_receiver, FramesArriveByteForByteWithMetaAndPresence) {
  FrameReceiver rx({.listen = loopback(0), .max_bytes = 1 << 20, .buffers = 4, .transport = GetParam()});
  ASSERT_NE(rx.port(), 0);
  FrameSink sink({.destinations = {loopback(rx.port())}, .node = 1, .nodes = 2, .credits = 4,
                  .transport = GetParam()});
  auto step = [&] { sink.progress(); rx.progress(); };
  ASSERT_TRUE(pump_until(step, [&] { return sink.stats().total.connected; }));

  // Small (eager) and large (rendezvous) frames, one with presence bits and missing bytes.
  const std::vector<size_t> sizes = {0, 1, 100, 4096, 65537, 1 << 20};
  std::vector<uint64_t> presence = {0xf0f0f0f0f0f0f0f0ull, 0x1};
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto bytes = pattern(i, sizes[i]);
    OutFrame f{.stream = 3, .frame = 100 + i, .bytes = bytes, .token = 1000 + i};
    f.first_ns = 11 + i;
    f.last_ns = 22 + i;
    f.bytes_present = bytes.size();
    if (i == 3) {
      f.presence = presence;
      f.granule = 64;
      f.complete = false;
      f.bytes_present = 4000;
    }
    sink.send(f);
    InFrame in;
    ASSERT_TRUE(pump_until(step, [&] { return rx.pop(in); })) << "frame " << i;
    EXPECT_EQ(in.meta.stream, 3u);
    EXPECT_EQ(in.meta.frame, 100 + i);
    EXPECT_EQ(in.meta.node, 1u);
    EXPECT_EQ(in.meta.bytes, sizes[i]);
    EXPECT_EQ(in.meta.offset, sizes[i]);  // node 1 of 2: after node 0's frame
    EXPECT_EQ(in.meta.built_bytes, 2 * sizes[i]);
    EXPECT_EQ(in.meta.frame_offset, 0u);
    EXPECT_EQ(in.meta.first_ns, 11 + i);
    EXPECT_EQ(in.meta.last_ns, 22 + i);
    EXPECT_NE(in.meta.sent_ns, 0u);
    ASSERT_EQ(in.bytes.size(), sizes[i]);
    EXPECT_TRUE(sizes[i] == 0 || std::memcmp(in.bytes.data(), bytes.data(), sizes[i]) == 0) << "frame " << i;
    if (i == 3) {
      EXPECT_FALSE(in.meta.complete);
      EXPECT_EQ(in.meta.bytes_present, 4000u);
      EXPECT_EQ(in.meta.granule, 64u);
      ASSERT_EQ(in.presence.size(), 1u);  // 4096 / 64 = 64 granules: one word
      EXPECT_EQ(in.presence[0], presence[0]);
    } else {
      EXPECT_TRUE(in.meta.complete);
      EXPECT_EQ(in.meta.granule, 0u);
      EXPECT_TRUE(in.presence.empty());
    }
    rx.release(in);
    uint64_t token = 0;
    ASSERT_TRUE(pump_until(step, [&] { return sink.done(token); }));
    EXPECT_EQ(token, 1000 + i);
  }
  ASSERT_TRUE(sink.drain(3000));
  const SinkStats s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.frames, sizes.size());
  EXPECT_EQ(s.total.acked, sizes.size());
  EXPECT_EQ(s.total.bytes_acked, uint64_t(1 + 100 + 4096 + 65537 + (1 << 20)));
  EXPECT_EQ(s.total.connects, 1u);
  const ReceiverStats r = rx.stats();
  EXPECT_EQ(r.connections, 1u);
  EXPECT_EQ(r.senders, 1u);
  EXPECT_EQ(r.fragments, sizes.size());
  EXPECT_EQ(r.placed, sizes.size());
}

TEST_P(fleet_receiver, ASenderThatLeavesIsCountedAsDisconnected) {
  FrameReceiver rx({.listen = loopback(0), .max_bytes = 4096, .buffers = 4, .transport = GetParam()});
  {
    FrameSink sink({.destinations = {loopback(rx.port())}, .transport = GetParam()});
    ASSERT_TRUE(pump_until([&] { sink.progress(); rx.progress(); }, [&] { return sink.stats().total.connected; }));
    EXPECT_EQ(rx.stats().senders, 1u);
  }  // the sink closes its endpoint
  ASSERT_TRUE(pump_until([&] { rx.progress(); }, [&] { return rx.stats().disconnects == 1; }));
  const ReceiverStats r = rx.stats();
  EXPECT_EQ(r.connections, 1u);
  EXPECT_EQ(r.senders, 0u);
}

TEST_P(fleet_receiver, RefusalsAreCountedAtBothEnds) {
  FrameReceiver rx({.listen = loopback(0), .max_bytes = 8192, .buffers = 2, .transport = GetParam()});
  FrameSink sink({.destinations = {loopback(rx.port())}, .credits = 8, .transport = GetParam()});
  auto step = [&] { sink.progress(); rx.progress(); };
  ASSERT_TRUE(pump_until(step, [&] { return sink.stats().total.connected; }));
  auto big = pattern(1, 100000);
  auto small = pattern(2, 1000);
  sink.send({.frame = 1, .bytes = big});  // too big: refused
  for (uint64_t f = 2; f < 6; ++f) sink.send({.frame = f, .bytes = small});  // 2 placed, 2 no_buffer
  ASSERT_TRUE(pump_until(step, [&] { return sink.stats().total.in_flight == 2; }));
  ReceiverStats r = rx.stats();
  EXPECT_EQ(r.fragments, 5u);
  EXPECT_EQ(r.too_big, 1u);
  EXPECT_EQ(r.no_buffer, 2u);
  EXPECT_EQ(r.placed, 2u);
  SinkStats s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.refused, 3u);
  InFrame in;
  int popped = 0;
  while (rx.pop(in)) {
    rx.release(in);
    ++popped;
  }
  EXPECT_EQ(popped, 2);
  ASSERT_TRUE(sink.drain(3000));
  s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.acked, 2u);
  EXPECT_EQ(s.total.refused, 3u);
  EXPECT_EQ(s.total.fragments, 5u);
}

TEST_P(fleet_receiver, NoCreditDropsExactlyWhatExceedsTheCredits) {
  FrameReceiver rx({.listen = loopback(0), .max_bytes = 4096, .buffers = 16, .transport = GetParam()});
  FrameSink sink({.destinations = {loopback(rx.port())}, .credits = 3, .when_full = WhenFull::drop,
                  .transport = GetParam()});
  auto step = [&] { sink.progress(); rx.progress(); };
  ASSERT_TRUE(pump_until(step, [&] { return sink.stats().total.connected; }));
  auto bytes = pattern(0, 2048);
  for (uint64_t f = 0; f < 10; ++f) {
    sink.send({.frame = f, .bytes = bytes});
    for (int i = 0; i < 20; ++i) step();  // the application never releases: no credit comes back
  }
  SinkStats s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.fragments, 10u);
  EXPECT_EQ(s.total.in_flight, 3u);
  EXPECT_EQ(s.total.no_credit, 7u);
  // Released now: the three come back acked.
  ASSERT_TRUE(pump_until(step, [&] { return rx.stats().placed == 3; }));
  InFrame in;
  while (rx.pop(in)) rx.release(in);
  ASSERT_TRUE(sink.drain(3000));
  s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.acked, 3u);
}

TEST_P(fleet_receiver, WaitModeWaitsForACreditThenGivesUp) {
  FrameReceiver rx({.listen = loopback(0), .max_bytes = 4096, .buffers = 16, .transport = GetParam()});
  FrameSink sink({.destinations = {loopback(rx.port())}, .credits = 2, .when_full = WhenFull::wait,
                  .wait_ms = 300, .transport = GetParam()});
  auto step = [&] { sink.progress(); rx.progress(); };
  ASSERT_TRUE(pump_until(step, [&] { return sink.stats().total.connected; }));
  auto bytes = pattern(0, 1024);
  sink.send({.frame = 0, .bytes = bytes});
  sink.send({.frame = 1, .bytes = bytes});
  ASSERT_TRUE(pump_until(step, [&] { return rx.stats().placed == 2; }));
  // No release: the third waits wait_ms (the receiver is not progressed meanwhile) and is dropped.
  const auto t0 = std::chrono::steady_clock::now();
  sink.send({.frame = 2, .bytes = bytes});
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, std::chrono::milliseconds(290));
  EXPECT_EQ(sink.stats().total.no_credit, 1u);
  // One released: the fourth waits for that credit (the sink progresses while it waits).
  InFrame in;
  ASSERT_TRUE(rx.pop(in));
  rx.release(in);
  for (int i = 0; i < 10; ++i) rx.progress();
  sink.send({.frame = 3, .bytes = bytes});
  SinkStats s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.no_credit, 1u);
  EXPECT_EQ(s.total.fragments, 4u);
  EXPECT_EQ(s.total.acked + s.total.in_flight, 3u);
  ASSERT_TRUE(pump_until(step, [&] { return rx.stats().placed == 3; }));
  while (rx.pop(in)) rx.release(in);
  ASSERT_TRUE(sink.drain(3000));
  s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.acked, 3u);
}

INSTANTIATE_TEST_SUITE_P(fleet, fleet_receiver, ::testing::Values(Transport::tcp, Transport::shm, Transport::automatic),
                         transport_name);

}  // namespace
