// The dpdk engine on DPDK's virtual devices, in one process: net_ring (the port's tx ring is
// its rx ring: every byte and sequence number checked), software loopback, net_null (rates,
// mbuf accounting: every received mbuf goes back to its pool).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "dpdk_util.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {
// A net_null port (`device`: its vdev name and options) whose whole frames are handed over.
DpdkIface raw_null(const std::string& device, uint32_t num_bufs = 4096) {
  DpdkIface d;
  d.device = device;
  d.dpdk.raw_frames = true;
  d.num_bufs = num_bufs;
  return d;
}

// Sends payloads first .. first + count - 1 of `size` bytes through tx, `turn` at a time, and
// collects each turn from rx before the next (net_ring holds only rx_desc mbufs); appends
// what arrived to `got`.
void send_in_turns(TxQueue& tx, RxQueue& rx, size_t first, size_t count, size_t turn, size_t size,
                   std::vector<Bytes>& got) {
  for (size_t k = first; k < first + count; k += turn) {
    const size_t n = std::min(turn, first + count - k);
    ASSERT_EQ(send_sequence(tx, k, n, size), n);
    const auto part = collect(rx, n, 5s, 0ms);
    got.insert(got.end(), part.begin(), part.end());
  }
}
}  // namespace

TEST(DpdkVdev, NetRingLoopbackEveryByteAndSequence) {
  NDQ_REQUIRE_DPDK();
  DpdkIface d;
  d.device = "net_ring0";
  d.tx_queues = 1;
  Session s(d.build());
  auto& tx = s.tx_queue("d0", 0);
  auto& rx = s.rx_queue("d0", 0);
  EXPECT_EQ(tx.buffer_size(), 2048u);
  constexpr size_t kCount = 20000, kSize = 1000;
  std::vector<Bytes> got;
  ASSERT_NO_FATAL_FAILURE(send_in_turns(tx, rx, 0, kCount, 256, kSize, got));
  EXPECT_TRUE(exactly_sequence(got, 0, kCount, kSize));
  const auto st = rx.stats();
  EXPECT_TRUE(all_accounted(kCount, got.size(), {st}));
  EXPECT_EQ(st.packets, kCount);
  EXPECT_EQ(st.total_drops(), 0u);
  EXPECT_EQ(st.pool_in_use, 0u);
  EXPECT_NE(st.mode.find("dpdk net_ring"), std::string::npos) << st.mode;
  const auto ts = tx.stats();
  EXPECT_TRUE(sender_accounted(kCount, ts));
  EXPECT_EQ(ts.packets, kCount);
  EXPECT_EQ(ts.total_drops(), 0u);
  EXPECT_EQ(engine_counter(ts, "mbufs_in_flight"), 0u);
  EXPECT_EQ(ts.pool_in_use, 0u);  // every tx buffer came back through the rx release
}

TEST(DpdkVdev, FramesCarryTheHeadersTheEngineWrote) {
  NDQ_REQUIRE_DPDK();
  DpdkIface d;
  d.device = "net_ring1";
  d.tx_queues = 1;
  d.destination = "udp://10.9.0.2:7000";
  d.dpdk.src_port = 6000;
  Session s(d.build());
  ASSERT_EQ(send_sequence(s.tx_queue("d0", 0), 0, 10, 100), 10u);
  auto& rx = s.rx_queue("d0", 0);
  size_t seen = 0;
  for (auto t0 = std::chrono::steady_clock::now(); seen < 10 && std::chrono::steady_clock::now() - t0 < 5s;) {
    auto b = rx.poll();
    for (const auto& p : b) {
      const auto f = p.frame();
      ASSERT_EQ(f.size(), 42u + 100u);
      EXPECT_EQ(std::to_integer<int>(f[0]), 0x02);  // dst_mac 02:00:00:00:00:02
      EXPECT_EQ(std::to_integer<int>(f[5]), 0x02);
      EXPECT_EQ(std::to_integer<int>(f[12]), 0x08);  // IPv4
      EXPECT_EQ((std::to_integer<int>(f[34]) << 8) | std::to_integer<int>(f[35]), 6000);  // UDP source port
      EXPECT_EQ((std::to_integer<int>(f[36]) << 8) | std::to_integer<int>(f[37]), 7000);
      EXPECT_EQ(std::to_integer<int>(f[26]), 10);  // src 10.9.0.1
      EXPECT_EQ(std::to_integer<int>(f[33]), 2);   // dst 10.9.0.2
      EXPECT_TRUE(check_payload(bytes_of(p), seen, 100));
      ++seen;
    }
  }
  EXPECT_EQ(seen, 10u);
  EXPECT_TRUE(all_accounted(10, seen, {rx.stats()}));
  EXPECT_TRUE(sender_accounted(10, s.tx_queue("d0", 0).stats()));
}

TEST(DpdkVdev, SoftwareLoopbackHandsTxBurstsToRx) {
  NDQ_REQUIRE_DPDK();
  DpdkIface d;
  d.device = "net_null0";
  d.rx_queues = 2;
  d.tx_queues = 2;
  d.dpdk.loopback = DpdkLoopback::software;
  d.dpdk.dst_mac.clear();  // optional in software loopback
  d.dpdk.src_ip.clear();
  Session s(d.build());
  for (uint16_t q = 0; q < 2; ++q) {
    ASSERT_EQ(send_sequence(s.tx_queue("d0", q), q * 1000, 300, 1400), 300u);
    auto got = collect(s.rx_queue("d0", q), 300, 5s);
    EXPECT_TRUE(exactly_sequence(got, q * 1000, 300, 1400)) << "queue " << q;
    const auto st = s.rx_queue("d0", q).stats();
    EXPECT_TRUE(all_accounted(300, got.size(), {st}));
    EXPECT_TRUE(sender_accounted(300, s.tx_queue("d0", q).stats()));
    EXPECT_NE(st.mode.find("software loopback"), std::string::npos) << st.mode;
  }
}

TEST(DpdkVdev, HeldBurstsKeepTheirMbufsUntilReleased) {
  NDQ_REQUIRE_DPDK();
  Session s(raw_null("net_null2,size=64", 8192).build());
  auto& rx = s.rx_queue("d0", 0);
  std::vector<RxBurst> held;
  for (auto t0 = std::chrono::steady_clock::now(); held.size() < 10 && std::chrono::steady_clock::now() - t0 < 5s;)
    if (auto b = rx.poll()) held.push_back(std::move(b));
  ASSERT_EQ(held.size(), 10u);
  size_t held_packets = 0;
  for (auto& b : held) held_packets += b.size();
  auto st = rx.stats();
  EXPECT_EQ(st.pool_in_use, held_packets);
  const uint64_t out_while_held = engine_counter(st, "mbufs_in_use");
  EXPECT_GE(out_while_held, held_packets) << "the held packets, plus any the driver keeps in its rx ring";
  held.clear();
  st = rx.stats();
  EXPECT_EQ(st.pool_in_use, 0u);
  EXPECT_EQ(engine_counter(st, "mbufs_in_use"), out_while_held - held_packets);
}

// Worker mode: the worker counts the mbufs it receives and frees on its own thread (no locked
// instruction); bursts the application still holds when the worker stops are freed by their
// release on the application's thread. pool_in_use stays exact across both.
TEST(DpdkVdev, WorkerModePoolInUseExactAcrossWorkerAndApplicationFrees) {
  NDQ_REQUIRE_DPDK();
  DpdkIface d = raw_null("net_null5,size=64", 8192);
  d.mode = netdaq::PollMode::worker;
  Session s(d.build());
  auto& rx = s.rx_queue("d0", 0);
  std::vector<RxBurst> held;
  uint64_t released = 0;
  for (auto t0 = std::chrono::steady_clock::now(); released < 200000 && std::chrono::steady_clock::now() - t0 < 5s;)
    if (auto b = rx.poll()) {
      if (held.size() < 3) {
        held.push_back(std::move(b));
      } else {
        released += b.size();  // released here: freed by the worker
      }
    }
  ASSERT_EQ(held.size(), 3u);
  ASSERT_GE(released, 200000u) << "the worker handed over too little in 5 s";
  s.stop();  // the worker frees what is in the ring; the held bursts stay out
  size_t held_packets = 0;
  for (auto& b : held) held_packets += b.size();
  auto st = rx.stats();
  EXPECT_EQ(st.pool_in_use, held_packets);
  EXPECT_EQ(engine_counter(st, "mbufs_in_use"), held_packets);
  held.pop_back();  // freed on this thread, not the worker's
  st = rx.stats();
  EXPECT_EQ(st.pool_in_use, held_packets - 64);
  held.clear();
  st = rx.stats();
  EXPECT_EQ(st.pool_in_use, 0u);
  EXPECT_EQ(engine_counter(st, "mbufs_in_use"), 0u);
}

// Worker mode with every burst held by the application: the worker receives into its spare
// burst, and when the application releases one meanwhile the spare's packets go out in that
// burst. The two trade packet slots, and with them the mbuf the engine keeps for each slot:
// the packets arrive intact and every mbuf goes back once.
TEST(DpdkVdev, WorkerModePacketsReceivedWhileEveryBurstWasHeldArriveIntact) {
  NDQ_REQUIRE_DPDK();
  DpdkIface d;
  d.device = "net_ring2";
  d.tx_queues = 1;
  d.num_bufs = 2048;
  d.mode = netdaq::PollMode::worker;
  Config c = d.build();
  auto& q = c.interfaces[0].rx.queues[0];
  q.ring_depth = 2;
  q.timeout_us = 300000;  // the partial burst goes after 300 ms: a burst is released before
  Session s(c);
  auto& tx = s.tx_queue("d0", 0);
  auto& rx = s.rx_queue("d0", 0);
  ASSERT_EQ(send_sequence(tx, 0, 128, 100), 128u);  // two full bursts, both held
  std::vector<RxBurst> held;
  size_t held_packets = 0;
  for (auto t0 = std::chrono::steady_clock::now(); held_packets < 128 && std::chrono::steady_clock::now() - t0 < 5s;)
    if (auto b = rx.poll()) {
      held_packets += b.size();
      held.push_back(std::move(b));
    }
  ASSERT_EQ(held_packets, 128u);
  ASSERT_EQ(held.size(), 2u);
  ASSERT_EQ(send_sequence(tx, 128, 10, 100), 10u);  // into the spare burst
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(rx.poll()) << "the worker has no burst to hand them over in";
  held.erase(held.begin());
  const auto got = collect(rx, 10, 5s, 0ms);
  EXPECT_TRUE(exactly_sequence(got, 128, 10, 100));
  auto st = rx.stats();
  EXPECT_EQ(st.packets, 138u);
  EXPECT_EQ(st.total_drops(), 0u);
  EXPECT_EQ(st.pool_in_use, 64u) << "the burst still held";
  held.clear();
  st = rx.stats();
  EXPECT_EQ(st.pool_in_use, 0u);
  EXPECT_EQ(engine_counter(st, "mbufs_in_use"), 0u);
  // An mbuf freed twice would be handed out twice (two packets of a burst sharing a buffer)
  // and one not freed would be missing: full bursts through every buffer of the pool, twice.
  std::vector<Bytes> after;
  ASSERT_NO_FATAL_FAILURE(send_in_turns(tx, rx, 1000, 2 * d.num_bufs, 128, 100, after));
  EXPECT_TRUE(exactly_sequence(after, 1000, 2 * d.num_bufs, 100));
  EXPECT_TRUE(sender_accounted(138 + 2 * d.num_bufs, tx.stats()));
  // The last bursts' mbufs go back when the worker, idle, takes them back from the application.
  uint64_t in_flight = 0;
  for (auto t0 = std::chrono::steady_clock::now();
       (in_flight = engine_counter(tx.stats(), "mbufs_in_flight")) != 0 && std::chrono::steady_clock::now() - t0 < 2s;)
    std::this_thread::sleep_for(1ms);
  EXPECT_EQ(in_flight, 0u);
}

TEST(DpdkVdev, FramesThatAreNotUdpAreCountedNeverDelivered) {
  NDQ_REQUIRE_DPDK();
  DpdkIface d;
  d.device = "net_null4,size=64,copy=1";  // copy mode: zero-filled frames
  Session s(d.build());
  auto& rx = s.rx_queue("d0", 0);
  uint64_t delivered = 0;
  for (auto t0 = std::chrono::steady_clock::now(); std::chrono::steady_clock::now() - t0 < 200ms;)
    if (auto b = rx.poll()) delivered += b.size();
  const auto st = rx.stats();
  EXPECT_EQ(delivered, 0u);
  EXPECT_GT(st.drop(DropReason::flow_miss), 10000u);
  EXPECT_EQ(engine_counter(st, "non_udp_frames"), st.drop(DropReason::flow_miss));
  EXPECT_EQ(st.pool_in_use, 0u);
}

TEST(DpdkVdev, NetNullRawFramesDeliveredInPlace) {
  NDQ_REQUIRE_DPDK();
  Session s(raw_null("net_null3,size=64").build());
  auto& rx = s.rx_queue("d0", 0);
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t delivered = 0, bytes = 0;
  while (std::chrono::steady_clock::now() - t0 < 200ms) {
    if (auto b = rx.poll()) {
      for (const auto& p : b) {
        bytes += p.size();
        EXPECT_EQ(p.frame().size(), p.size());  // the whole frame, for capture
      }
      delivered += b.size();
    }
  }
  const auto st = rx.stats();
  EXPECT_GT(delivered, 100000u);
  EXPECT_EQ(st.packets, delivered);
  EXPECT_EQ(bytes, delivered * 64);
  EXPECT_EQ(st.total_drops(), 0u);
  EXPECT_EQ(st.pool_in_use, 0u);
  EXPECT_NE(st.mode.find("raw frames"), std::string::npos) << st.mode;
}

namespace {
std::string open_error(const Config& c) {
  try {
    Session s(c);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(DpdkVdev, DriversWithoutAFeatureSayWhichFeatureAndDriver) {
  NDQ_REQUIRE_DPDK();
  DpdkIface d;
  d.device = "net_ring5";
  // Header-data split on a driver without RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT.
  Config split = d.build();
  split.memory_regions.push_back(MemoryRegionConfig{"payload", MemoryKind::host, 2048, 8192});
  split.interfaces[0].rx.queues[0].memory_regions = {"rx0", "payload"};
  std::string e = open_error(split);
  EXPECT_NE(e.find("BUFFER_SPLIT, which driver net_ring"), std::string::npos) << e;
  // A flow on a driver without rte_flow: names the flow, what it matches and the driver.
  d.flows = {udp_flow(7, 0, 5000)};
  e = open_error(d.build());
  EXPECT_NE(e.find("flow 7 (udp_dst 5000 -> queue 0): driver net_ring cannot steer it"), std::string::npos) << e;
  // After both failures the device is gone again: a session without them opens it.
  d.flows.clear();
  EXPECT_EQ(open_error(d.build()), "(no error)");
}

TEST(DpdkVdev, OneEalPerProcess) {
  NDQ_REQUIRE_DPDK();
  DpdkIface d;
  d.device = "net_ring6";
  d.tx_queues = 1;
  auto first = std::make_unique<Session>(d.build());
  DpdkIface other = d;
  other.device = "net_ring7";
  other.eal.memory_mb = 192;
  const std::string e = open_error(other.build());
  EXPECT_NE(e.find("DPDK is already running in this process with other eal: settings"), std::string::npos) << e;
  EXPECT_NE(e.find("-m 128"), std::string::npos) << e;
  other.eal = d.eal;  // the same eal: may open more sessions, before or after the first closes
  EXPECT_EQ(open_error(other.build()), "(no error)");
  first.reset();
  Session again(d.build());
  ASSERT_EQ(send_sequence(again.tx_queue("d0", 0), 0, 100, 64), 100u);
  EXPECT_TRUE(sender_accounted(100, again.tx_queue("d0", 0).stats()));
}

namespace {
std::vector<std::string> thread_names() {
  std::vector<std::string> names;
  for (const auto& t : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(t.path() / "comm");
    std::string n;
    std::getline(in, n);
    names.push_back(n);
  }
  return names;
}
}  // namespace

TEST(DpdkVdev, WorkerQueuesOnOneCoreShareOneThread) {
  NDQ_REQUIRE_DPDK();
  DpdkIface d;
  d.device = "net_null8";
  d.rx_queues = 2;
  d.tx_queues = 2;
  d.mode = PollMode::worker;
  d.dpdk.loopback = DpdkLoopback::software;
  Config c = d.build();
  const int cpu = static_cast<int>(allowed_cpu(0));
  for (auto& q : c.interfaces[0].rx.queues) {
    q.cpu_core = cpu;
    q.ring_depth = 64;  // room for the collector falling behind on a busy 2-core machine
  }
  c.interfaces[0].tx.rate_pps = 100000;
  for (auto& r : c.memory_regions) r.num_bufs = 8192;
  Session s(c);
  const std::string worker = "ndq-cpu" + std::to_string(cpu);
  long workers = 0;
  for (auto t0 = std::chrono::steady_clock::now(); workers == 0 && std::chrono::steady_clock::now() - t0 < 5s;) {
    const auto names = thread_names();  // the thread names itself once it runs
    workers = std::count(names.begin(), names.end(), worker);
    if (!workers) std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(workers, 1) << "one worker thread for both queues on cpu " << cpu;
  for (uint16_t q = 0; q < 2; ++q) {
    auto got = std::async(std::launch::async, [&] { return collect(s.rx_queue("d0", q), 3000, 10s); });
    ASSERT_EQ(send_sequence(s.tx_queue("d0", q), q * 10000, 3000, 500), 3000u);
    const auto received = got.get();
    EXPECT_TRUE(exactly_sequence(received, q * 10000, 3000, 500)) << "queue " << q;
    EXPECT_TRUE(all_accounted(3000, received.size(), {s.rx_queue("d0", q).stats()}));
    EXPECT_TRUE(sender_accounted(3000, s.tx_queue("d0", q).stats()));
  }
  for (uint16_t q = 0; q < 2; ++q) EXPECT_EQ(s.rx_queue("d0", q).stats().total_drops(), 0u);
}
