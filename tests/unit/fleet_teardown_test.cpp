// Objects destroyed with transfers under way: a sink closed right after sending a large
// (rendezvous) frame, a receiver and a builder destroyed while they pull one. Nothing crashes,
// the survivor counts what it lost (run under ASan in CI: no use after free).
#include <gtest/gtest.h>

#include "fleet_test_util.h"

namespace {

using namespace fleettest;

class fleet_teardown : public Transports {};

TEST_P(fleet_teardown, SinkClosedMidSend) {
  FrameReceiver rx({.listen = loopback(0), .max_bytes = 4 << 20, .buffers = 4, .transport = GetParam()});
  auto bytes = pattern(0, 4 << 20);
  {
    FrameSink sink({.destinations = {loopback(rx.port())}, .transport = GetParam()});
    ASSERT_TRUE(pump_until([&] { sink.progress(); rx.progress(); }, [&] { return sink.stats().total.connected; }));
    sink.send({.frame = 1, .bytes = bytes});
    sink.send({.frame = 2, .bytes = bytes});
    rx.progress();  // the receiver starts pulling
  }
  // The receiver finishes, or counts the transfer failed, and sees the sender leave.
  ASSERT_TRUE(pump_until([&] { rx.progress(); }, [&] { return rx.stats().disconnects == 1; }));
  InFrame in;
  while (rx.pop(in)) rx.release(in);
  const ReceiverStats r = rx.stats();
  EXPECT_EQ(r.fragments, r.placed + r.receive_failed + r.no_buffer);
}

TEST_P(fleet_teardown, ReceiverDestroyedMidReceive) {
  auto rx = std::make_unique<FrameReceiver>(ReceiverConfig{.listen = loopback(0), .max_bytes = 4 << 20,
                                                           .buffers = 4, .transport = GetParam()});
  FrameSink sink({.destinations = {loopback(rx->port())}, .transport = GetParam()});
  ASSERT_TRUE(pump_until([&] { sink.progress(); rx->progress(); }, [&] { return sink.stats().total.connected; }));
  auto bytes = pattern(0, 4 << 20);
  sink.send({.frame = 1, .bytes = bytes, .token = 1});
  sink.send({.frame = 2, .bytes = bytes, .token = 2});
  sink.progress();
  rx->progress();  // rendezvous receives under way
  rx.reset();
  ASSERT_TRUE(pump_until([&] { sink.progress(); }, [&] { return sink.stats().total.disconnects == 1; }));
  const SinkStats s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.in_flight, 0u);
  EXPECT_EQ(s.total.in_flight_lost + s.total.refused + s.total.acked, 2u);
  uint64_t token;
  int tokens = 0;
  ASSERT_TRUE(pump_until([&] { sink.progress(); }, [&] {
    while (sink.done(token)) ++tokens;
    return tokens == 2;
  }));
}

TEST_P(fleet_teardown, BuilderDestroyedMidReceive) {
  auto eb = std::make_unique<EventBuilder>(BuilderConfig{
      .receiver = {.listen = loopback(0), .max_bytes = 8 << 20, .buffers = 2, .transport = GetParam()}, .nodes = 2});
  FrameSink sink({.destinations = {loopback(eb->port())}, .node = 0, .nodes = 2, .transport = GetParam()});
  ASSERT_TRUE(pump_until([&] { sink.progress(); eb->progress(); }, [&] { return sink.stats().total.connected; }));
  auto bytes = pattern(0, 4 << 20);
  sink.send({.frame = 1, .bytes = bytes});
  sink.progress();
  eb->progress();
  eb.reset();
  ASSERT_TRUE(pump_until([&] { sink.progress(); }, [&] { return sink.stats().total.disconnects == 1; }));
  expect_invariant(sink.stats());
  EXPECT_EQ(sink.stats().total.in_flight, 0u);
}

INSTANTIATE_TEST_SUITE_P(fleet, fleet_teardown, ::testing::Values(Transport::tcp, Transport::shm), transport_name);

}  // namespace
