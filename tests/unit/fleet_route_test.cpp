// Routes over real UCX: whole frames by frame number and by stream, and the frame cut into
// byte ranges (a corner turn), each to the receiver the route names.
#include <gtest/gtest.h>

#include <cstring>

#include "fleet_test_util.h"

namespace {

using namespace fleettest;

class fleet_route : public Transports {
 protected:
  void SetUp() override {
    for (auto& r : rx)
      r = std::make_unique<FrameReceiver>(ReceiverConfig{.listen = loopback(0), .max_bytes = 1 << 16,
                                                         .buffers = 16, .transport = GetParam()});
  }
  SinkConfig config(Route route) {
    return {.destinations = {loopback(rx[0]->port()), loopback(rx[1]->port())}, .node = 0, .nodes = 1,
            .route = route, .credits = 16, .transport = GetParam()};
  }
  void step(FrameSink& s) {
    s.progress();
    for (auto& r : rx) r->progress();
  }
  // Receives `count` frames in all, recording which receiver got each.
  std::vector<std::pair<int, InFrame>> collect(FrameSink& s, size_t count) {
    std::vector<std::pair<int, InFrame>> got;
    EXPECT_TRUE(pump_until([&] { step(s); },
                           [&] {
                             InFrame in;
                             for (int i = 0; i < 2; ++i)
                               while (rx[i]->pop(in)) got.emplace_back(i, in);
                             return got.size() >= count;
                           }));
    return got;
  }
  std::unique_ptr<FrameReceiver> rx[2];
};

TEST_P(fleet_route, FrameAndStreamPickTheReceiver) {
  for (Route route : {Route::frame, Route::stream}) {
    FrameSink sink(config(route));
    ASSERT_TRUE(pump_until([&] { step(sink); }, [&] { return sink.stats().total.connects == 2; }));
    std::vector<std::vector<std::byte>> data;
    for (uint64_t f = 0; f < 6; ++f) data.push_back(pattern(f, 1000 + f));
    for (uint64_t f = 0; f < 6; ++f) sink.send({.stream = f / 3, .frame = f, .bytes = data[f]});
    auto got = collect(sink, 6);
    ASSERT_EQ(got.size(), 6u);
    for (auto& [i, in] : got) {
      const uint64_t f = in.meta.frame;
      EXPECT_EQ(uint64_t(i), route == Route::frame ? f % 2 : (f / 3) % 2) << to_string(route) << " frame " << f;
      ASSERT_EQ(in.bytes.size(), data[f].size());
      EXPECT_EQ(std::memcmp(in.bytes.data(), data[f].data(), data[f].size()), 0);
      rx[i]->release(in);
    }
    ASSERT_TRUE(sink.drain(3000));
    const SinkStats s = sink.stats();
    expect_invariant(s);
    EXPECT_EQ(s.total.acked, 6u);
    EXPECT_EQ(s.destinations[0].acked, 3u);
    EXPECT_EQ(s.destinations[1].acked, 3u);
  }
}

TEST_P(fleet_route, BytesCutsTheFrameIntoRanges) {
  FrameSink sink(config(Route::bytes));
  ASSERT_TRUE(pump_until([&] { step(sink); }, [&] { return sink.stats().total.connects == 2; }));
  auto data = pattern(9, 10001);  // ranges of 5001 and 5000 bytes
  std::vector<uint64_t> presence(3, ~uint64_t(0));
  presence[1] = 0;  // granules 64..127 missing: bytes 6400..12799
  sink.send({.frame = 9, .bytes = data, .presence = presence, .granule = 100, .bytes_present = 10001 - 3601,
             .complete = false});
  auto got = collect(sink, 2);
  ASSERT_EQ(got.size(), 2u);
  for (auto& [i, in] : got) {
    const uint64_t start = i == 0 ? 0 : 5001, len = i == 0 ? 5001 : 5000;
    EXPECT_EQ(in.meta.frame_offset, start);
    EXPECT_EQ(in.meta.offset, 0u);  // node 0
    EXPECT_EQ(in.meta.built_bytes, 5001u);
    ASSERT_EQ(in.bytes.size(), len);
    EXPECT_EQ(std::memcmp(in.bytes.data(), data.data() + start, len), 0) << "range " << i;
    EXPECT_EQ(in.meta.granule, 100u);
    if (i == 0) {
      EXPECT_TRUE(in.meta.complete);  // granules 0..50 all present
      EXPECT_EQ(in.meta.bytes_present, 5001u);
    } else {
      // granules 50..100 of the frame: 50..63 present, 64..100 missing; bit 0 is granule 50
      ASSERT_EQ(in.presence.size(), 1u);
      EXPECT_EQ(in.presence[0], (uint64_t(1) << 14) - 1);
      EXPECT_FALSE(in.meta.complete);
      EXPECT_EQ(in.meta.bytes_present, 6400u - 5001u);
    }
    rx[i]->release(in);
  }
  ASSERT_TRUE(sink.drain(3000));
  expect_invariant(sink.stats());
  EXPECT_EQ(sink.stats().total.acked, 2u);
}

INSTANTIATE_TEST_SUITE_P(fleet, fleet_route, ::testing::Values(Transport::tcp, Transport::shm), transport_name);

}  // namespace
