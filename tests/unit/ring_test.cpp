#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <thread>
#include <vector>

#include "core/ring.h"

using netdaq::detail::MpmcRing;
using netdaq::detail::SpscRing;

TEST(SpscRing, RoundsCapacityUpToPowerOfTwo) {
  SpscRing<int> r(5);
  EXPECT_EQ(r.capacity(), 8u);
  EXPECT_THROW(SpscRing<int>(0), std::invalid_argument);
}

TEST(SpscRing, FillsExactlyToCapacityThenRefuses) {
  SpscRing<int> r(4);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(r.push(i));
  EXPECT_FALSE(r.push(99));
  int v;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(r.pop(v));
    EXPECT_EQ(v, i);
  }
  EXPECT_FALSE(r.pop(v));
}

TEST(SpscRing, BurstsArePartialWhenShort) {
  SpscRing<int> r(8);
  int in[12];
  std::iota(in, in + 12, 0);
  EXPECT_EQ(r.push_burst(in, 12), 8u);
  int out[12];
  EXPECT_EQ(r.pop_burst(out, 5), 5u);
  EXPECT_EQ(r.pop_burst(out + 5, 12), 3u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], i);
}

TEST(SpscRing, WrapsIndicesAcrossManyLaps) {
  SpscRing<uint64_t> r(4);
  uint64_t expect = 0;
  for (uint64_t i = 0; i < 100000; ++i) {
    ASSERT_TRUE(r.push(i));
    if (i % 3 == 2) {
      uint64_t v;
      while (r.pop(v)) ASSERT_EQ(v, expect++);
    }
  }
}

TEST(SpscRing, TwoThreadsPreserveOrderAndCount) {
  SpscRing<uint64_t> r(256);
  constexpr uint64_t kN = 2'000'000;
  std::thread producer([&] {
    uint64_t items[32];
    for (uint64_t i = 0; i < kN;) {
      uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(32, kN - i));
      for (uint32_t k = 0; k < n; ++k) items[k] = i + k;
      uint32_t done = 0;
      while (done < n) done += r.push_burst(items + done, n - done);
      i += n;
    }
  });
  uint64_t expect = 0;
  uint64_t out[64];
  while (expect < kN) {
    uint32_t n = r.pop_burst(out, 64);
    for (uint32_t k = 0; k < n; ++k) ASSERT_EQ(out[k], expect++);
  }
  producer.join();
}

TEST(MpmcRing, BulkIsAllOrNothing) {
  MpmcRing<int> r(8);
  int in[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(r.enqueue_bulk(in, 6), 6u);
  EXPECT_EQ(r.enqueue_bulk(in, 3), 0u);   // only 2 free
  EXPECT_EQ(r.enqueue_burst(in, 3), 2u);  // burst takes what fits
  int out[8];
  EXPECT_EQ(r.dequeue_bulk(out, 9), 0u);
  EXPECT_EQ(r.dequeue_bulk(out, 8), 8u);
  EXPECT_EQ(r.dequeue_burst(out, 1), 0u);
}

// Several producers and consumers move every item exactly once.
TEST(MpmcRing, ManyThreadsMoveEveryItemExactlyOnce) {
  constexpr int kProducers = 3, kConsumers = 3;
  constexpr uint32_t kPerProducer = 300'000;
  MpmcRing<uint32_t> r(1024);
  std::vector<std::atomic<uint8_t>> seen(kProducers * kPerProducer);
  std::atomic<uint32_t> consumed{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p)
    threads.emplace_back([&, p] {
      uint32_t items[16];
      for (uint32_t i = 0; i < kPerProducer; i += 16) {
        for (uint32_t k = 0; k < 16; ++k) items[k] = p * kPerProducer + i + k;
        uint32_t done = 0;
        while (done < 16) {
          uint32_t n = r.enqueue_burst(items + done, 16 - done);
          if (!n) std::this_thread::yield();
          done += n;
        }
      }
    });
  for (int c = 0; c < kConsumers; ++c)
    threads.emplace_back([&] {
      uint32_t items[16];
      while (consumed.load() < kProducers * kPerProducer) {
        uint32_t n = r.dequeue_burst(items, 16);
        if (!n) std::this_thread::yield();
        for (uint32_t k = 0; k < n; ++k) seen[items[k]].fetch_add(1);
        consumed.fetch_add(n);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(consumed.load(), kProducers * kPerProducer);
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << "item " << i;
}
