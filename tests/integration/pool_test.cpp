// Pool exhaustion with the socket engine. A validated Session sizes every pool for what its
// queues can hold, so the exhaustion is provoked here on the engine's RxPort itself, over a
// pool smaller than what the "application" (this test) keeps: datagrams that find no
// buffer are counted pool_empty, nothing deadlocks, and reception recovers once buffers
// come back.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstdint>
#include <future>
#include <thread>

#include "core/buffer_pool.h"
#include "core/engine.h"
#include "core/memory_region.h"
#include "test_util.h"

using namespace netdaq;
using namespace netdaq::detail;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

// One socket-engine rx port over a pool of num_bufs buffers.
struct PortRig {
  Config cfg;
  std::unique_ptr<MemoryRegion> region;
  std::unique_ptr<BufferPool> pool;
  QueueCounters counters;
  QueueResources res;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<RxPort> port;
  std::vector<Packet> held;  // what the "application" has not released

  PortRig(const std::string& address, uint32_t num_bufs, uint32_t batch, bool gro) {
    Iface s;
    s.address = address;
    s.rx_queues = 1;
    s.batch = batch;
    s.buf_size = 1024;
    s.num_bufs = num_bufs;
    s.socket.gro = gro;
    cfg = s.build();
    region = create_region(cfg.memory_regions[0]);
    pool = std::make_unique<BufferPool>(*region, cfg.memory_regions[0].buf_size, num_bufs);
    res.config = &cfg;
    res.iface = &cfg.interfaces[0];
    res.queue = &cfg.interfaces[0].rx.queues[0];
    res.name = "if0/rx0";
    res.pools[0] = pool.get();
    res.segments = 1;
    res.counters = &counters;
    engine = find_engine("socket")(cfg, cfg.interfaces[0]);
    port = engine->open_rx(res);
  }
  ~PortRig() { release(); }

  // Receives (and holds) until nothing arrived for `quiet`, at most `timeout`.
  size_t receive_and_hold(std::chrono::milliseconds quiet, std::chrono::milliseconds timeout) {
    const uint32_t batch = res.queue->batch_size;
    std::vector<Packet> pkts(batch);
    size_t got = 0;
    const auto end = std::chrono::steady_clock::now() + timeout;
    auto last = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() < end && std::chrono::steady_clock::now() - last < quiet) {
      uint64_t bytes = 0;
      const uint32_t n = port->receive(pkts.data(), batch, bytes);
      uint64_t sizes = 0;
      for (uint32_t i = 0; i < n; ++i) sizes += pkts[i].size();
      EXPECT_EQ(bytes, sizes) << "the engine's byte count of its burst";
      if (n) last = std::chrono::steady_clock::now();
      held.insert(held.end(), pkts.begin(), pkts.begin() + n);
      got += n;
      const uint64_t dropped = counters.drops[size_t(DropReason::pool_empty)].load();
      if (!n && dropped) std::this_thread::sleep_for(100us);
    }
    return got;
  }
  void release() {
    if (!held.empty()) port->release(held.data(), static_cast<uint32_t>(held.size()));
    held.clear();
  }
  uint64_t drops(DropReason r) { return counters.drops[size_t(r)].load(); }
  // The port's counters as a snapshot (kernel drops refreshed). `packets` stays 0: the core,
  // not the port, counts what it delivers, so the test counts what receive_and_hold got.
  QueueStats stats() {
    port->refresh_counters();
    QueueStats s;
    s.queue = res.name;
    counters.snapshot(s);
    port->add_details(s);
    return s;
  }
};

TEST(PoolExhaustion, CountedPoolEmptyNoDeadlockRecovers) {
  const uint16_t port = free_port(SOCK_DGRAM);
  PortRig rig("udp://127.0.0.1:" + std::to_string(port), 48, 16, false);
  Socket s = Socket::udp();
  for (size_t i = 0; i < 100; ++i) ASSERT_TRUE(s.send_to("127.0.0.1", port, make_payload(i, 300)));
  // The app holds everything it gets: 48 buffers, then the pool is empty.
  const size_t got = rig.receive_and_hold(100ms, 3000ms);
  EXPECT_EQ(got, 48u);
  EXPECT_TRUE(all_accounted(100, got, {rig.stats()}));
  EXPECT_EQ(rig.drops(DropReason::pool_empty), 52u);
  EXPECT_EQ(rig.counters.pool_in_use.load(), 48);
  for (size_t i = 0; i < rig.held.size(); ++i) {
    const Bytes b = bytes_of(rig.held[i]);
    EXPECT_TRUE(check_payload(b, payload_seq(b), 300));
  }
  // Release: reception recovers.
  rig.release();
  EXPECT_EQ(rig.counters.pool_in_use.load(), 0);
  for (size_t i = 100; i < 130; ++i) ASSERT_TRUE(s.send_to("127.0.0.1", port, make_payload(i, 300)));
  const size_t more = rig.receive_and_hold(100ms, 3000ms);
  EXPECT_EQ(more, 30u);
  EXPECT_TRUE(all_accounted(130, got + more, {rig.stats()}));
  for (size_t i = 0; i < rig.held.size(); ++i) EXPECT_TRUE(check_payload(bytes_of(rig.held[i]), 100 + i, 300));
  EXPECT_EQ(rig.drops(DropReason::pool_empty), 52u);
  EXPECT_EQ(rig.drops(DropReason::kernel), 0u);
}

// The pool runs dry while a GRO super-datagram is being split: the segments that found no
// buffer are counted pool_empty, one by one.
TEST(PoolExhaustion, GroSuperDatagramSplitCountsEachMissingBuffer) {
  const uint16_t port = free_port(SOCK_DGRAM);
  PortRig rig("udp://127.0.0.1:" + std::to_string(port), 48, 16, true);
  Iface ts;
  ts.destination = "udp://127.0.0.1:" + std::to_string(port);
  ts.tx_queues = 1;
  ts.batch = 128;
  ts.ring_depth = 2;
  ts.socket.gso = true;
  Session tx(ts.build());
  std::vector<Bytes> payloads;
  for (size_t i = 0; i < 100; ++i) payloads.push_back(make_payload(i, 500));  // one GSO message
  ASSERT_EQ(send_payloads(tx.tx_queue("if0"), payloads, 2000ms), 100u);
  const size_t got = rig.receive_and_hold(100ms, 3000ms);
  EXPECT_EQ(got, 48u);
  EXPECT_TRUE(all_accounted(100, got, {rig.stats()}));
  EXPECT_TRUE(sender_accounted(100, tx.tx_queue("if0").stats()));
  EXPECT_EQ(rig.drops(DropReason::pool_empty), 52u);
  for (size_t i = 0; i < rig.held.size(); ++i) EXPECT_TRUE(check_payload(bytes_of(rig.held[i]), i, 500));
  rig.release();
  EXPECT_EQ(rig.counters.pool_in_use.load(), 0);
  payloads.clear();
  for (size_t i = 0; i < 40; ++i) payloads.push_back(make_payload(1000 + i, 500));
  ASSERT_EQ(send_payloads(tx.tx_queue("if0"), payloads, 2000ms), 40u);
  const size_t more = rig.receive_and_hold(100ms, 3000ms);
  EXPECT_EQ(more, 40u);
  EXPECT_TRUE(all_accounted(140, got + more, {rig.stats()}));
  EXPECT_TRUE(sender_accounted(140, tx.tx_queue("if0").stats()));
  for (size_t i = 0; i < rig.held.size(); ++i) EXPECT_TRUE(check_payload(bytes_of(rig.held[i]), 1000 + i, 500));
}

// Through a Session in worker mode: an application that holds every burst makes the
// worker count what it cannot hand over; releasing the bursts resumes delivery. Nothing
// blocks, and every datagram is accounted for.
TEST(PoolExhaustion, SessionWorkerAppHoldsBurstsNoDeadlock) {
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = "udp://127.0.0.1:" + std::to_string(port);
  rs.rx_queues = 1;
  rs.mode = PollMode::worker;
  rs.batch = 16;
  rs.ring_depth = 4;
  rs.timeout_us = 100;
  rs.num_bufs = (4 + 1) * 16;
  Session rx(rs.build());
  auto& q = rx.rx_queue("if0");
  Socket s = Socket::udp();
  std::vector<RxBurst> held;
  size_t sent = 0, delivered = 0;
  for (int round = 0; round < 10; ++round) {
    for (int k = 0; k < 20; ++k, ++sent) ASSERT_TRUE(s.send_to("127.0.0.1", port, make_payload(sent, 200)));
    std::this_thread::sleep_for(5ms);
    while (auto b = q.poll()) {
      delivered += b.size();
      held.push_back(std::move(b));
    }
  }
  const QueueStats mid = q.stats();
  EXPECT_GT(mid.drop(DropReason::ring_full) + mid.drop(DropReason::pool_empty), 0u) << "the app held every burst";
  held.clear();  // release
  const size_t before = delivered;
  const size_t first_new = sent;
  for (int k = 0; k < 20; ++k, ++sent) ASSERT_TRUE(s.send_to("127.0.0.1", port, make_payload(sent, 200)));
  // Older bursts the worker finished meanwhile may come first; every new datagram must come.
  size_t new_ones = 0;
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (new_ones < 20 && std::chrono::steady_clock::now() < deadline) {
    for (auto& b : collect(q, 1, 10ms, 0ms)) {
      ++delivered;
      if (payload_seq(b) >= first_new) ++new_ones;
    }
  }
  for (auto& b : collect(q, SIZE_MAX, 50ms)) {  // anything still in flight
    ++delivered;
    if (payload_seq(b) >= first_new) ++new_ones;
  }
  EXPECT_EQ(new_ones, 20u) << "reception resumed after the release; " << describe(q.stats());
  const QueueStats st = q.stats();
  EXPECT_EQ(st.packets, delivered);
  EXPECT_TRUE(all_accounted(sent, delivered, {st}));
  EXPECT_GT(delivered, before);
}

}  // namespace
