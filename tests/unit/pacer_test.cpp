// Token-bucket pacing with an injected clock: exact admissions, no sleeping.
#include <gtest/gtest.h>

#include <vector>

#include "core/pacer.h"

using netdaq::detail::Pacer;

namespace {
// Packets of `size` bytes admitted when offering `offer` every `step_ns` for `total_ns`.
uint64_t admitted_over(Pacer& p, uint32_t size, uint32_t offer, uint64_t step_ns, uint64_t total_ns) {
  std::vector<uint32_t> sizes(offer, size);
  uint64_t n = 0;
  for (uint64_t t = 1; t <= total_ns; t += step_ns) n += p.admit(sizes.data(), offer, t);
  return n;
}
}  // namespace

TEST(Pacer, DisabledAdmitsEverything) {
  Pacer p(0, 0, 64);
  EXPECT_FALSE(p.enabled());
  uint32_t sizes[3] = {1, 2, 3};
  EXPECT_EQ(p.admit(sizes, 3, 123), 3u);
  EXPECT_EQ(p.wait_ns(1500, 123), 0u);
}

TEST(Pacer, PacketsPerSecondOverOneSecond) {
  Pacer p(0, 100'000, 64);  // bucket: max(64, 2 ms x 100k/s = 200) packets
  const uint64_t n = admitted_over(p, 1000, 64, 10'000, 1'000'000'000);
  EXPECT_GE(n, 100'000u);
  EXPECT_LE(n, 100'000u + 200 + 64);  // rate plus the initial bucket
}

TEST(Pacer, MegabitsPerSecondCountsBytes) {
  Pacer p(1000, 0, 16);  // 1 Gb/s; bucket max(16 x 9000 B, 2 ms) = 2 Mbit = 200 such packets
  const uint64_t n = admitted_over(p, 1250, 16, 10'000, 1'000'000'000);  // 10,000 bits per packet
  EXPECT_GE(n, 100'000u);
  EXPECT_LE(n, 100'000u + 200 + 16);
  // Twice the size, half the packets.
  Pacer q(1000, 0, 16);
  const uint64_t m = admitted_over(q, 2500, 16, 10'000, 1'000'000'000);
  EXPECT_NEAR(double(m), n / 2.0, 40.0);
}

TEST(Pacer, RefundReturnsTokensOfUnsentPackets) {
  Pacer p(0, 1000, 4);  // bucket max(4, 2) = 4 packets
  uint32_t sizes[8] = {64, 64, 64, 64, 64, 64, 64, 64};
  EXPECT_EQ(p.admit(sizes, 8, 1), 4u);
  EXPECT_EQ(p.admit(sizes, 8, 1), 0u);
  p.refund(sizes, 3);                   // the engine took only 1 of the 4
  EXPECT_EQ(p.admit(sizes, 8, 1), 3u);
  EXPECT_GT(p.wait_ns(64, 1), 0u);      // empty now: the next packet must wait ~1 ms
  EXPECT_LE(p.wait_ns(64, 1), 1'000'001u);
}
