#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "netdaq/payload.h"

using netdaq::SequenceTracker;

namespace {
// received == unique + duplicates + late + malformed, always.
void expect_balanced(const SequenceTracker& t) {
  EXPECT_EQ(t.received(), t.unique() + t.duplicates() + t.late() + t.malformed());
}
}  // namespace

TEST(SequenceTracker, InOrder) {
  SequenceTracker t;
  for (uint64_t s = 0; s < 200000; ++s) EXPECT_TRUE(t.add(s));
  EXPECT_EQ(t.received(), 200000u);
  EXPECT_EQ(t.unique(), 200000u);
  EXPECT_EQ(t.lost_so_far(), 0u);
  t.finish(200000);
  EXPECT_EQ(t.lost(), 0u);
  EXPECT_EQ(t.reordered(), 0u);
  EXPECT_EQ(t.duplicates(), 0u);
  expect_balanced(t);
}

TEST(SequenceTracker, LossInTheMiddleAndTail) {
  SequenceTracker t(1024);
  for (uint64_t s = 0; s < 100; ++s)
    if (s % 10 != 3) t.add(s);
  EXPECT_EQ(t.missing(), 10u);
  EXPECT_EQ(t.lost(), 0u);  // still in the window
  EXPECT_EQ(t.lost_so_far(), 10u);
  t.finish(120);  // 100..119 never arrived
  EXPECT_EQ(t.lost(), 30u);
  EXPECT_EQ(t.missing(), 0u);
  EXPECT_EQ(t.unique(), 90u);
  expect_balanced(t);
}

TEST(SequenceTracker, LossFinalisedWhenLeavingTheWindow) {
  SequenceTracker t(64);
  t.add(0);
  t.add(2);  // 1 missing
  EXPECT_EQ(t.missing(), 1u);
  for (uint64_t s = 3; s < 66; ++s) t.add(s);  // window now [2, 66): 1 left it
  EXPECT_EQ(t.lost(), 1u);
  EXPECT_EQ(t.missing(), 0u);
  t.add(1);  // too old now: late, stays lost
  EXPECT_EQ(t.late(), 1u);
  EXPECT_EQ(t.lost(), 1u);
  EXPECT_EQ(t.reordered(), 0u);
  expect_balanced(t);
}

TEST(SequenceTracker, Duplicates) {
  SequenceTracker t;
  for (uint64_t s = 0; s < 10; ++s) t.add(s);
  EXPECT_FALSE(t.add(5));
  EXPECT_FALSE(t.add(9));
  EXPECT_FALSE(t.add(9));
  EXPECT_EQ(t.duplicates(), 3u);
  EXPECT_EQ(t.unique(), 10u);
  EXPECT_EQ(t.reordered(), 0u);
  t.finish(10);
  EXPECT_EQ(t.lost(), 0u);
  expect_balanced(t);
}

TEST(SequenceTracker, ReorderFillsGaps) {
  SequenceTracker t;
  for (uint64_t s : {0, 2, 1, 5, 4, 3, 6}) t.add(s);
  EXPECT_EQ(t.reordered(), 3u);  // 1 after 2; 4 and 3 after 5
  EXPECT_EQ(t.missing(), 0u);
  t.add(3);  // a duplicate of a reordered packet
  EXPECT_EQ(t.duplicates(), 1u);
  EXPECT_EQ(t.reordered(), 3u);
  t.finish(7);
  EXPECT_EQ(t.lost(), 0u);
  expect_balanced(t);
}

TEST(SequenceTracker, FarJumpForward) {
  SequenceTracker t(1024);
  t.add(0);
  t.add(1'000'000);  // 999'999 skipped, all but the last 1023 beyond the window at once
  EXPECT_EQ(t.lost(), 999'999u - 1023u);
  EXPECT_EQ(t.missing(), 1023u);
  EXPECT_EQ(t.lost_so_far(), 999'999u);
  t.add(999'999);  // in the window: a reordered fill
  EXPECT_EQ(t.reordered(), 1u);
  EXPECT_EQ(t.lost_so_far(), 999'998u);
  t.add(5);  // long gone
  EXPECT_EQ(t.late(), 1u);
  t.finish(1'000'001);
  EXPECT_EQ(t.lost(), 999'998u);
  EXPECT_EQ(t.unique(), 3u);
  expect_balanced(t);
}

TEST(SequenceTracker, HugeJumpDoesNotOverflow) {
  SequenceTracker t(64);
  t.add(0);
  t.add(uint64_t{1} << 62);
  EXPECT_EQ(t.lost_so_far(), (uint64_t{1} << 62) - 1);
  EXPECT_EQ(t.missing(), 63u);
  t.add((uint64_t{1} << 62) + 1);  // window [2^62 - 62, 2^62 + 2): two seen
  EXPECT_EQ(t.missing(), 62u);
  EXPECT_EQ(t.lost_so_far(), (uint64_t{1} << 62) - 1);
  expect_balanced(t);
}

TEST(SequenceTracker, WindowWrapsManyTimes) {
  // Every 7th packet missing, every 11th swapped with its successor, many windows long.
  SequenceTracker t(256);
  const uint64_t n = 256 * 100 + 17;
  std::vector<uint64_t> order;
  for (uint64_t s = 0; s < n; ++s)
    if (s % 7 != 0) order.push_back(s);
  uint64_t swaps = 0;
  for (size_t i = 0; i + 1 < order.size(); i += 11) {
    std::swap(order[i], order[i + 1]);
    ++swaps;
  }
  for (uint64_t s : order) t.add(s);
  t.finish(n);
  EXPECT_EQ(t.lost(), (n + 6) / 7);
  EXPECT_EQ(t.unique(), order.size());
  EXPECT_EQ(t.reordered(), swaps);
  EXPECT_EQ(t.duplicates(), 0u);
  expect_balanced(t);
}

TEST(SequenceTracker, RandomAgainstReference) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 20; ++round) {
    const uint64_t window = 64u << (round % 4);
    SequenceTracker t(window);
    std::set<uint64_t> seen;
    uint64_t highest_plus1 = 0, dups = 0, reord = 0, late = 0;
    const uint64_t n = 5000;
    for (int i = 0; i < 8000; ++i) {
      // Mostly ascending with jitter, occasional duplicates and holes.
      uint64_t s = std::min<uint64_t>(n - 1, static_cast<uint64_t>(i * n / 8000) + rng() % 40);
      if (rng() % 50 == 0) s = rng() % n;
      const uint64_t lo = highest_plus1 > window ? highest_plus1 - window : 0;
      if (s < highest_plus1 && s < lo) {
        ++late;
      } else if (seen.count(s)) {
        ++dups;
      } else {
        if (s < highest_plus1) ++reord;
        seen.insert(s);
      }
      highest_plus1 = std::max(highest_plus1, s + 1);
      t.add(s);
    }
    t.finish(n);
    EXPECT_EQ(t.duplicates(), dups);
    EXPECT_EQ(t.reordered(), reord);
    EXPECT_EQ(t.late(), late);
    EXPECT_EQ(t.unique(), seen.size());
    EXPECT_EQ(t.lost(), n - seen.size());
    expect_balanced(t);
  }
}

TEST(SequenceTracker, Malformed) {
  SequenceTracker t;
  t.add(0);
  t.add_malformed();
  t.add_malformed(2);
  t.add(1);
  EXPECT_EQ(t.malformed(), 3u);
  EXPECT_EQ(t.received(), 5u);
  EXPECT_EQ(t.unique(), 2u);
  expect_balanced(t);
}

TEST(SequenceTracker, FirstSequenceAndAfterFinish) {
  SequenceTracker t(64, 100);
  EXPECT_EQ(t.next_expected(), 100u);
  t.add(99);  // before the first expected
  EXPECT_EQ(t.late(), 1u);
  t.add(101);
  EXPECT_EQ(t.missing(), 1u);  // 100
  t.finish(3);                 // 100, 101, 102
  EXPECT_EQ(t.lost(), 2u);
  t.finish(3);  // idempotent
  EXPECT_EQ(t.lost(), 2u);
  t.add(100);  // after finish: late
  EXPECT_EQ(t.late(), 2u);
  EXPECT_EQ(t.lost(), 2u);
  expect_balanced(t);
}

TEST(SequenceTracker, WindowIsRoundedToPowerOfTwo) {
  EXPECT_EQ(SequenceTracker(1).window(), 64u);
  EXPECT_EQ(SequenceTracker(65).window(), 128u);
  EXPECT_EQ(SequenceTracker().window(), 65536u);
}
