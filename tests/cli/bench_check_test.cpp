// netdaq bench's accounting check (tools/netdaq/bench_check.h) on QueueStats as the socket
// engine fills them: exact where drops are counted per datagram, a range only where the
// queue's mode says its kernel drops are GRO batches. (The CLI test provokes a real failure.)
#include <gtest/gtest.h>

#include "bench_check.h"

namespace netdaq::cli {
namespace {

QueueStats rx(const std::string& mode, uint64_t kernel) {
  QueueStats s;
  s.queue = "bench-rx/rx0";
  s.is_rx = true;
  s.mode = mode;
  s.drops[static_cast<size_t>(DropReason::kernel)] = kernel;
  return s;
}

QueueStats tx(uint64_t full, uint64_t error, uint64_t unsent) {
  QueueStats s;
  s.queue = "bench-tx/tx0";
  s.is_rx = false;
  s.drops[static_cast<size_t>(DropReason::tx_full)] = full;
  s.drops[static_cast<size_t>(DropReason::tx_error)] = error;
  s.drops[static_cast<size_t>(DropReason::tx_unsent)] = unsent;
  return s;
}

// udp_rx.cpp's modes
const char* kPerDatagram = "udp GRO, kernel drops counted per datagram (eBPF fexit/udp_queue_rcv_one_skb)";
const char* kPerBatch = "udp GRO, kernel drops counted per batch of up to 64 datagrams (no CAP_BPF)";

TEST(BenchCheck, ExactWhereDropsAreCountedPerDatagram) {
  const std::vector<QueueStats> q{rx(kPerDatagram, 100), tx(5000, 0, 0)};
  EXPECT_TRUE(bench_accounting(100, q, 64).holds());  // tx_full is retried, not lost
  auto a = bench_accounting(101, q, 64);
  EXPECT_FALSE(a.holds());
  EXPECT_EQ(a.kernel_drops_counted, "per datagram");
  EXPECT_EQ(a.describe(), "lost 101 != counted drops 100 (kernel=100)");
  EXPECT_FALSE(bench_accounting(99, q, 64).holds());  // more counted than lost is wrong too
}

TEST(BenchCheck, GroBatchesOnlyWhereTheModeSaysSo) {
  const std::vector<QueueStats> q{rx(kPerBatch, 10), tx(0, 0, 0)};
  auto a = bench_accounting(10 * 128, q, 64);  // each drop up to min(128, 65507 / 64) datagrams
  EXPECT_TRUE(a.holds()) << a.describe();
  EXPECT_EQ(a.kernel_drops_counted, "per batch");
  EXPECT_FALSE(bench_accounting(10 * 128 + 1, q, 64).holds());
  EXPECT_FALSE(bench_accounting(9, q, 64).holds());
  EXPECT_TRUE(bench_accounting(10 * 7, q, 8972).holds());  // 65507 / 8972 = 7 per GSO message
  EXPECT_FALSE(bench_accounting(10 * 7 + 1, q, 8972).holds());
  EXPECT_EQ(bench_accounting(71, q, 8972).describe(),
            "lost 71 != counted drops 10 to 70 (10 kernel drops of GRO batches of up to 7 datagrams) (kernel=10)");
}

TEST(BenchCheck, SentButFailedIsCountedNeverSentIsNot) {
  // tx_error: the engine took the packet (sent counts it) and the send failed: lost, counted.
  // tx_unsent: released without being sent: never in sent, so it explains no loss.
  const std::vector<QueueStats> q{rx("udp", 0), tx(0, 30, 7)};
  EXPECT_TRUE(bench_accounting(30, q, 1472).holds());
  EXPECT_FALSE(bench_accounting(37, q, 1472).holds());
}

}  // namespace
}  // namespace netdaq::cli
