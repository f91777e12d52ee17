// The doorbell ring of the persistent kernel, with a CPU thread playing the GPU: it watches
// descriptor k % N for READY with seq k, "places" the job, and stores DONE, as the kernel does.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "gpu/host/doorbell_ring.h"
#include "netdaq/status.h"

namespace netdaq::gpu {
namespace {

using Clock = std::chrono::steady_clock;

struct RingMemory {
  explicit RingMemory(uint32_t slots)
      : bytes(DoorbellRing::bytes_for(slots)),
        p(static_cast<std::byte*>(std::aligned_alloc(DoorbellRing::kAlign, bytes)), &std::free) {}
  size_t bytes;
  std::unique_ptr<std::byte, decltype(&std::free)> p;
};

std::atomic_ref<uint32_t> word(uint32_t& w) { return std::atomic_ref<uint32_t>(w); }

void mark(BurstDescriptor& d, DescState s) {
  word(d.state).store(static_cast<uint32_t>(s), std::memory_order_release);
}

// Plays the persistent kernel on a thread: takes bursts in order until stop, records what
// it saw (seq and job.count of each burst) in `seen`.
class FakeGpu {
 public:
  explicit FakeGpu(DoorbellRing& ring) : ring_(ring), thread_([this] { run(); }) {}
  ~FakeGpu() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  std::vector<uint64_t> seqs;    // written by the thread; read after join()
  std::vector<uint32_t> counts;
  bool seq_mismatch = false;

 private:
  void run() {
    RingControl& ctl = *ring_.control();
    word(ctl.started).store(1, std::memory_order_release);
    for (uint64_t k = 0;; ++k) {
      BurstDescriptor& d = ring_.descriptors()[k % ring_.slots()];
      for (;;) {
        if (word(ctl.stop).load(std::memory_order_acquire)) return;
        if (word(d.state).load(std::memory_order_acquire) == static_cast<uint32_t>(DescState::ready)) break;
        std::this_thread::yield();  // 2 shared cores: let the producer run
      }
      if (d.seq != k || d.seq_check != k) seq_mismatch = true;
      seqs.push_back(d.seq);
      counts.push_back(d.job.count);
      mark(d, DescState::done);
    }
  }
  DoorbellRing& ring_;
  std::thread thread_;
};

TEST(DoorbellRing, LayoutIsOneCacheLinePerDescriptor) {
  EXPECT_EQ(sizeof(BurstDescriptor), 64u);
  EXPECT_EQ(alignof(BurstDescriptor), 64u);
  EXPECT_EQ(DoorbellRing::bytes_for(4), 64u + 4 * 64u);
}

TEST(DoorbellRing, RejectsBadMemoryOrSize) {
  RingMemory m(2);
  EXPECT_THROW(DoorbellRing(m.p.get(), 0), Error);
  EXPECT_THROW(DoorbellRing(nullptr, 2), Error);
  EXPECT_THROW(DoorbellRing(m.p.get() + 8, 1), Error);
}

TEST(DoorbellRing, StartsAllFreeAndNotStopped) {
  RingMemory m(3);
  std::memset(m.p.get(), 0xff, m.bytes);  // garbage the constructor must overwrite
  DoorbellRing ring(m.p.get(), 3);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(ring.descriptors()[i].state, 0u);
  EXPECT_FALSE(ring.stop_requested());
  EXPECT_FALSE(ring.consumer_started());
  EXPECT_EQ(ring.in_flight(), 0u);
  EXPECT_EQ(ring.poll_done(), 0u);
}

TEST(DoorbellRing, FullRingRefusesUntilTheOldestIsDone) {
  RingMemory m(3);
  DoorbellRing ring(m.p.get(), 3);
  BurstDescriptor* d[3];
  for (int i = 0; i < 3; ++i) {
    d[i] = ring.acquire();
    ASSERT_NE(d[i], nullptr);
    d[i]->job.count = 10 + i;
    ring.publish(*d[i]);
    EXPECT_EQ(d[i]->seq, uint64_t(i));
    EXPECT_EQ(d[i]->seq_check, uint64_t(i));  // the GPU checks it against seq
    EXPECT_EQ(d[i]->state, uint32_t(DescState::ready));
  }
  EXPECT_EQ(ring.acquire(), nullptr);
  EXPECT_EQ(ring.in_flight(), 3u);

  // Finished out of order: nothing completes until the oldest does, then both in order.
  mark(*d[1], DescState::done);
  EXPECT_EQ(ring.poll_done(), 0u);
  EXPECT_EQ(ring.acquire(), nullptr);
  mark(*d[0], DescState::done);
  EXPECT_EQ(ring.poll_done(), 2u);
  EXPECT_EQ(ring.completed(), 2u);
  EXPECT_EQ(d[0]->state, uint32_t(DescState::free));
  EXPECT_EQ(d[1]->state, uint32_t(DescState::free));

  // The next burst reuses descriptor 0 with seq 3.
  BurstDescriptor* next = ring.acquire();
  ASSERT_EQ(next, d[0]);
  ring.publish(*next);
  EXPECT_EQ(next->seq, 3u);
  EXPECT_EQ(ring.in_flight(), 2u);
}

TEST(DoorbellRing, ConsumerSeesBurstsInOrderWithTheirJobs) {
  RingMemory m(4);
  DoorbellRing ring(m.p.get(), 4);
  FakeGpu gpu(ring);
  for (uint32_t i = 0; i < 3; ++i) {
    BurstDescriptor* d = ring.acquire();
    ASSERT_NE(d, nullptr);
    d->job.count = 100 + i;
    ring.publish(*d);
  }
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (ring.completed() < 3 && Clock::now() < deadline) {
    ring.poll_done();
    std::this_thread::yield();
  }
  ASSERT_EQ(ring.completed(), 3u);
  EXPECT_TRUE(ring.consumer_started());
  ring.request_stop();
  gpu.join();
  EXPECT_FALSE(gpu.seq_mismatch);
  ASSERT_EQ(gpu.counts.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(gpu.seqs[i], i);
    EXPECT_EQ(gpu.counts[i], 100 + i);
  }
}

TEST(DoorbellRing, StopEndsAnIdleConsumer) {
  RingMemory m(2);
  DoorbellRing ring(m.p.get(), 2);
  FakeGpu gpu(ring);
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!ring.consumer_started() && Clock::now() < deadline) std::this_thread::yield();
  ASSERT_TRUE(ring.consumer_started());
  const auto t0 = Clock::now();
  ring.request_stop();
  EXPECT_TRUE(ring.stop_requested());
  gpu.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_TRUE(gpu.seqs.empty());
}

// Many laps around small rings (power of two and not): every burst comes back once, in
// order, with its own job; a full ring is a normal event the producer counts and retries.
void run_laps(uint32_t slots, uint32_t bursts) {
  RingMemory m(slots);
  DoorbellRing ring(m.p.get(), slots);
  FakeGpu gpu(ring);
  uint64_t full = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  uint32_t sent = 0;
  while ((sent < bursts || ring.completed() < bursts) && Clock::now() < deadline) {
    ring.poll_done();
    if (sent < bursts) {
      if (BurstDescriptor* d = ring.acquire()) {
        d->job.count = sent * 7 + 1;
        ring.publish(*d);
        ++sent;
        continue;
      }
      ++full;
    }
    std::this_thread::yield();
  }
  ring.request_stop();
  gpu.join();
  ASSERT_EQ(ring.completed(), bursts) << "timed out after " << sent << " bursts sent";
  EXPECT_EQ(ring.published(), bursts);
  EXPECT_EQ(ring.in_flight(), 0u);
  EXPECT_FALSE(gpu.seq_mismatch);
  ASSERT_EQ(gpu.counts.size(), bursts);
  for (uint32_t i = 0; i < bursts; ++i) {
    ASSERT_EQ(gpu.seqs[i], i);
    ASSERT_EQ(gpu.counts[i], i * 7 + 1);
  }
  ::testing::Test::RecordProperty("ring_full_events", std::to_string(full));
}

TEST(DoorbellRing, WrapsAroundManyTimesPowerOfTwo) { run_laps(4, 100000); }
TEST(DoorbellRing, WrapsAroundManyTimesOddSize) { run_laps(3, 100000); }
TEST(DoorbellRing, WrapsAroundWithOneSlot) { run_laps(1, 5000); }

}  // namespace
}  // namespace netdaq::gpu
