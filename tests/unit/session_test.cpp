// Core queue, burst and session behaviour, driven by an in-process engine that produces
// packets from a counter (no OS involved: real traffic is in tests/integration).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/engine.h"
#include "netdaq/netdaq.h"

using namespace netdaq;
using namespace netdaq::detail;
using namespace std::chrono_literals;

namespace {

// Packets the generator may still produce, shared by every rx port of the test engine.
std::atomic<uint64_t> g_budget{0};
std::atomic<uint64_t> g_next_seq{0};
std::atomic<uint64_t> g_tx_accepted{0};
std::atomic<uint32_t> g_tx_limit{UINT32_MAX};  // packets the tx port accepts per call
std::atomic<bool> g_tx_hold{false};  // tx port keeps sent buffers (in flight on the "wire")
// The threads that last received and last freed rx packets (where the buffers are freed).
std::atomic<std::thread::id> g_receive_thread{};
std::atomic<std::thread::id> g_release_thread{};
std::atomic<uint64_t> g_released{0};

class CounterRx final : public RxPort {
 public:
  explicit CounterRx(QueueResources q) : q_(std::move(q)) {}
  uint32_t receive(Packet* pkts, uint32_t max, uint64_t& bytes) noexcept override {
    uint64_t budget = g_budget.load();
    uint32_t want;
    do {
      want = static_cast<uint32_t>(std::min<uint64_t>(budget, max));
      if (!want) return 0;
    } while (!g_budget.compare_exchange_weak(budget, budget - want));
    const uint32_t got = attach_buffers(q_, pkts, want);
    if (got < want) {
      q_.counters->drop(DropReason::pool_empty, want - got);
    }
    for (uint32_t i = 0; i < got; ++i) {
      auto& f = fields(pkts[i]);
      const uint64_t seq = g_next_seq.fetch_add(1);
      std::memcpy(f.data[0], &seq, sizeof(seq));
      f.len[0] = sizeof(seq);
      for (unsigned s = 1; s < f.nseg; ++s) f.len[s] = 16;
      bytes += pkts[i].size();
    }
    if (got) g_receive_thread = std::this_thread::get_id();
    return got;
  }
  void release(Packet* pkts, uint32_t n) noexcept override {
    g_release_thread = std::this_thread::get_id();
    g_released += n;
    return_buffers(q_, pkts, n);
  }
  const QueueResources& resources() const noexcept override { return q_; }

 private:
  QueueResources q_;
};

class CountingTx final : public TxPort {
 public:
  explicit CountingTx(QueueResources q) : q_(std::move(q)) {}
  ~CountingTx() override { return_buffers(q_, in_flight_.data(), static_cast<uint32_t>(in_flight_.size())); }
  TxResult transmit(Packet* pkts, uint32_t n) noexcept override {
    const uint32_t m = std::min(n, g_tx_limit.load());
    if (g_tx_hold)
      in_flight_.insert(in_flight_.end(), pkts, pkts + m);  // test only: allocation is fine here
    else
      return_buffers(q_, pkts, m);
    g_tx_accepted += m;
    return TxResult::all_sent(pkts, m);
  }

 private:
  QueueResources q_;
  std::vector<Packet> in_flight_;
};

class CounterEngine final : public Engine {
 public:
  std::unique_ptr<RxPort> open_rx(const QueueResources& q) override { return std::make_unique<CounterRx>(q); }
  std::unique_ptr<TxPort> open_tx(const QueueResources& q) override { return std::make_unique<CountingTx>(q); }
};

const bool registered = [] {
  register_engine("counter_test", [](const Config&, const InterfaceConfig&) -> std::unique_ptr<Engine> {
    return std::make_unique<CounterEngine>();
  });
  return true;
}();

Config make_config(PollMode mode, uint32_t batch, uint32_t depth, uint32_t num_bufs) {
  Config c;
  MemoryRegionConfig r;
  r.name = "bufs";
  r.buf_size = 256;
  r.num_bufs = num_bufs;
  c.memory_regions.push_back(r);
  InterfaceConfig i;
  i.name = "gen";
  i.engine = "counter_test";
  QueueConfig q;
  q.id = 0;
  q.mode = mode;
  q.batch_size = batch;
  q.ring_depth = depth;
  q.timeout_us = 100;
  q.memory_regions = {"bufs"};
  i.rx.queues.push_back(q);
  i.tx.queues.push_back(q);
  c.interfaces.push_back(i);
  return c;
}

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(registered);
    g_budget = 0;
    g_next_seq = 0;
    g_tx_accepted = 0;
    g_tx_limit = UINT32_MAX;
    g_tx_hold = false;
    g_receive_thread = std::thread::id{};
    g_release_thread = std::thread::id{};
    g_released = 0;
  }
};

uint64_t seq_of(const Packet& p) {
  uint64_t s;
  std::memcpy(&s, p.data().data(), sizeof(s));
  return s;
}

}  // namespace

TEST_F(SessionTest, DirectPollDeliversBurstsInOrderAndReturnsBuffers) {
  Session s(make_config(PollMode::direct, 32, 4, 1024));
  auto& q = s.rx_queue("gen", 0);
  EXPECT_FALSE(q.poll());  // nothing yet: an empty burst, not an error
  g_budget = 100;
  uint64_t expect = 0;
  while (expect < 100) {
    auto b = q.poll();
    ASSERT_TRUE(b);
    EXPECT_LE(b.size(), 32u);
    EXPECT_EQ(b.bytes(), 8u * b.size()) << "RxBurst::bytes(): the engine's count";
    for (const auto& p : b) EXPECT_EQ(seq_of(p), expect++);
    EXPECT_GT(q.stats().pool_in_use, 0u);
  }
  auto st = q.stats();
  EXPECT_EQ(st.packets, 100u);
  EXPECT_EQ(st.bytes, 800u);
  EXPECT_EQ(st.pool_in_use, 0u);
  EXPECT_EQ(st.total_drops(), 0u);
}

TEST_F(SessionTest, HoldingEveryBurstStopsPollingUntilOneIsReleased) {
  Session s(make_config(PollMode::direct, 8, 3, 64));
  auto& q = s.rx_queue("gen", 0);
  g_budget = 1000;
  std::vector<RxBurst> held;
  for (int i = 0; i < 3; ++i) held.push_back(q.poll());
  EXPECT_FALSE(q.poll());  // all three descriptors are with the application
  held.erase(held.begin());
  EXPECT_TRUE(q.poll());
}

TEST_F(SessionTest, PoolExhaustionIsCountedNotSilent) {
  // The pool fits what the queues can hold (validation insists), but an engine that keeps
  // sent buffers in flight (as AF_XDP does until completion) can still drain it.
  Session s(make_config(PollMode::direct, 8, 2, 32));
  auto& rx = s.rx_queue("gen", 0);
  auto& tx = s.tx_queue("gen", 0);
  g_tx_hold = true;
  for (int i = 0; i < 4; ++i) {
    auto b = tx.allocate(8);
    ASSERT_EQ(b.size(), 8u);
    for (auto& p : b) p.set_size(8);
    ASSERT_EQ(b.send(), 8u);
  }
  EXPECT_FALSE(tx.allocate(1));  // nothing left for TX either
  EXPECT_EQ(tx.stats().drop(DropReason::pool_empty), 1u);
  g_budget = 8;
  EXPECT_FALSE(rx.poll());  // the generator's packets find no buffer: dropped and counted
  EXPECT_EQ(rx.stats().drop(DropReason::pool_empty), 8u);
}

TEST_F(SessionTest, WorkerModeFillsRingAndCountsRingFullWhenAppIsSlow) {
  Session s(make_config(PollMode::worker, 16, 4, 4096));
  auto& q = s.rx_queue("gen", 0);
  g_budget = 16 * 20;  // 20 bursts but the ring holds 4: the rest must be counted ring_full
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (g_budget.load() > 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(20ms);
  uint64_t got = 0;
  while (auto b = q.poll()) got += b.size();
  auto st = q.stats();
  EXPECT_EQ(got, st.packets);
  EXPECT_EQ(st.packets + st.drop(DropReason::ring_full), 16u * 20);
  EXPECT_GT(st.drop(DropReason::ring_full), 0u);
  EXPECT_EQ(st.pool_in_use, 0u);
}

// Worker mode: the application's release only hands the burst back; the worker frees its
// buffers on its own core. pool_in_use counts what the application holds, exactly, at once.
TEST_F(SessionTest, WorkerModeFreesReleasedBurstsOnTheWorkerAndCountsThemAtOnce) {
  Session s(make_config(PollMode::worker, 16, 8, 4096));
  auto& q = s.rx_queue("gen", 0);
  g_budget = 16 * 6;
  std::vector<RxBurst> held;
  for (auto deadline = std::chrono::steady_clock::now() + 5s; held.size() < 6 && std::chrono::steady_clock::now() < deadline;)
    if (auto b = q.poll()) held.push_back(std::move(b));
  ASSERT_EQ(held.size(), 6u);
  EXPECT_EQ(q.stats().pool_in_use, 16u * 6);
  for (size_t i = 0; i < held.size(); ++i) {
    held[i].release();
    EXPECT_EQ(q.stats().pool_in_use, 16u * (held.size() - i - 1)) << "after releasing " << i + 1 << " bursts";
  }
  for (auto deadline = std::chrono::steady_clock::now() + 5s; g_released < 16 * 6 && std::chrono::steady_clock::now() < deadline;)
    std::this_thread::sleep_for(100us);
  EXPECT_EQ(g_released.load(), 16u * 6);
  EXPECT_EQ(g_release_thread.load(), g_receive_thread.load()) << "the worker frees what it received";
  EXPECT_NE(g_release_thread.load(), std::this_thread::get_id());
  EXPECT_EQ(q.stats().pool_in_use, 0u);
}

// The worker takes bursts back oldest first; an application that keeps the first burst and
// releases the later ones must not starve it: 4 x ring_depth bursts go through while one is held.
TEST_F(SessionTest, WorkerModeReusesLaterBurstsWhileTheFirstIsHeld) {
  Session s(make_config(PollMode::worker, 16, 8, 4096));
  auto& q = s.rx_queue("gen", 0);
  auto next = [&q] {
    RxBurst b;
    for (auto deadline = std::chrono::steady_clock::now() + 5s; !b && std::chrono::steady_clock::now() < deadline;)
      b = q.poll();
    return b;
  };
  g_budget = 16;
  RxBurst first = next();
  ASSERT_TRUE(first);
  for (int i = 0; i < 32; ++i) {
    g_budget += 16;  // one burst at a time: the ring never fills, every drop would be a lost burst
    RxBurst b = next();
    ASSERT_TRUE(b) << "burst " << i + 2 << " never came while the first was held";
    EXPECT_EQ(b.size(), 16u);
    b.release();
  }
  const QueueStats st = q.stats();
  EXPECT_EQ(st.packets, 16u * 33);
  EXPECT_EQ(st.drop(DropReason::ring_full), 0u);
  EXPECT_EQ(st.pool_in_use, 16u) << "only the held burst";
  first.release();
  EXPECT_EQ(q.stats().pool_in_use, 0u);
}

// A burst held across Session::stop() (the worker is gone) is freed by its release itself.
TEST_F(SessionTest, WorkerModeBurstReleasedAfterStopIsFreedAtOnce) {
  Session s(make_config(PollMode::worker, 16, 8, 4096));
  auto& q = s.rx_queue("gen", 0);
  g_budget = 16 * 2;
  RxBurst b;
  for (auto deadline = std::chrono::steady_clock::now() + 5s; !b && std::chrono::steady_clock::now() < deadline;)
    b = q.poll();
  ASSERT_TRUE(b);
  s.stop();
  EXPECT_EQ(q.stats().pool_in_use, 16u) << "the burst still held; the one never polled was freed by stop()";
  b.release();
  EXPECT_EQ(g_release_thread.load(), std::this_thread::get_id());
  EXPECT_EQ(q.stats().pool_in_use, 0u);
}

TEST_F(SessionTest, WorkerModeHandsOverPartialBurstAfterTimeout) {
  Session s(make_config(PollMode::worker, 64, 8, 4096));
  auto& q = s.rx_queue("gen", 0);
  g_budget = 5;  // fewer than batch_size: must still arrive after timeout_us
  RxBurst b;
  auto deadline = std::chrono::steady_clock::now() + 2s;
  while (!(b = q.poll()) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(100us);
  ASSERT_TRUE(b);
  EXPECT_EQ(b.size(), 5u);
  EXPECT_EQ(b.bytes(), 40u) << "bytes of every receive that filled the burst";
}

TEST_F(SessionTest, TxSendPartialKeepsRestAndReleaseCountsUnsent) {
  Session s(make_config(PollMode::direct, 32, 4, 1024));
  auto& tx = s.tx_queue("gen", 0);
  auto b = tx.allocate(10);
  ASSERT_EQ(b.size(), 10u);
  for (auto& p : b) {
    EXPECT_EQ(p.buffer().size(), 256u);
    p.set_size(100);
  }
  g_tx_limit = 4;
  EXPECT_EQ(b.send(), 4u);
  EXPECT_EQ(b.size(), 6u);  // the unsent stay in the burst for a retry
  EXPECT_EQ(b.send(), 4u);
  b.release();
  auto st = tx.stats();
  EXPECT_EQ(st.packets, 8u);
  EXPECT_EQ(st.bytes, 800u);
  EXPECT_EQ(st.drop(DropReason::tx_unsent), 2u);
  EXPECT_EQ(st.pool_in_use, 0u);
}

TEST_F(SessionTest, TxFullySentBurstBecomesEmpty) {
  Session s(make_config(PollMode::direct, 32, 4, 1024));
  auto& tx = s.tx_queue("gen", 0);
  auto b = tx.allocate(32);
  for (auto& p : b) p.set_size(10000);  // clamped to the buffer
  EXPECT_EQ(b[0].size(), 256u);
  EXPECT_EQ(b.send(), 32u);
  EXPECT_FALSE(b);
  EXPECT_EQ(tx.stats().drop(DropReason::tx_unsent), 0u);
}

TEST_F(SessionTest, PacingLimitsPacketsPerSecond) {
  auto cfg = make_config(PollMode::direct, 64, 4, 1024);
  cfg.interfaces[0].tx.rate_pps = 20000;
  Session s(cfg);
  auto& tx = s.tx_queue("gen", 0);
  // Sends for at least 200 ms and until 2,000 packets went (a pacer that stalls fails after
  // 2 s): a busy machine (CI's 2 cores under valgrind) may give this thread less than half of
  // 200 ms, which is no fault of the pacer. The limit is checked against the time it ran.
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = std::chrono::steady_clock::duration{};
  uint64_t sent = 0;
  while ((elapsed < 200ms || sent < 2000) && elapsed < 2s) {
    auto b = tx.allocate(64);
    for (auto& p : b) p.set_size(64);
    sent += b.send();
    elapsed = std::chrono::steady_clock::now() - start;
  }
  EXPECT_GE(sent, 2000u) << "the pacer let fewer than 2,000 packets through in 2 s";
  // 20 kpps for the time it ran, plus at most one burst of credit and 10%; never far above.
  const double seconds = std::chrono::duration<double>(elapsed).count();
  EXPECT_LE(double(sent), 20000 * seconds * 1.1 + 64) << "in " << seconds << " s";
}

TEST_F(SessionTest, HeaderDataSplitGivesTwoSegments) {
  auto cfg = make_config(PollMode::direct, 8, 2, 64);
  MemoryRegionConfig payload;
  payload.name = "payload";
  payload.buf_size = 4096;
  payload.num_bufs = 64;
  cfg.memory_regions.push_back(payload);
  cfg.interfaces[0].rx.queues[0].memory_regions = {"bufs", "payload"};
  Session s(cfg);
  g_budget = 3;
  auto b = s.rx_queue("gen", 0).poll();
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].segments(), 2u);
  EXPECT_EQ(b[0].segment(0).size(), 8u);
  EXPECT_EQ(b[0].segment(1).size(), 16u);
  EXPECT_EQ(b[0].size(), 24u);
  EXPECT_TRUE(b[0].segment(2).empty());
}

TEST_F(SessionTest, SeveralSessionsDestroyedInAnyOrder) {
  auto a = std::make_unique<Session>(make_config(PollMode::worker, 16, 4, 1024));
  auto b = std::make_unique<Session>(make_config(PollMode::direct, 16, 4, 1024));
  auto c = std::make_unique<Session>(make_config(PollMode::worker, 16, 4, 1024));
  g_budget = 1000;
  std::this_thread::sleep_for(5ms);
  b.reset();
  a->stop();
  c.reset();
  a.reset();
}

TEST_F(SessionTest, UnknownQueueAndEngineAreClearErrors) {
  Session s(make_config(PollMode::direct, 16, 4, 1024));
  EXPECT_THROW(s.rx_queue("gen", 7), Error);
  EXPECT_THROW(s.tx_queue("nope", 0), Error);
  auto cfg = make_config(PollMode::direct, 16, 4, 1024);
  cfg.interfaces[0].engine = "warp_drive";
  try {
    Session bad(cfg);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("warp_drive"), std::string::npos) << e.what();
  }
}

TEST_F(SessionTest, WorkerOnMissingCpuIsAClearError) {
  auto cfg = make_config(PollMode::worker, 16, 4, 1024);
  cfg.interfaces[0].rx.queues[0].cpu_core = 1000;
  try {
    Session s(cfg);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cpu_core 1000"), std::string::npos) << e.what();
  }
}

TEST(Engines, SocketIsBuiltIn) {
  auto names = engines();
  EXPECT_NE(std::find(names.begin(), names.end(), "socket"), names.end());
}
