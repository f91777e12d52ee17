// The dpdk engine's TX path on net_null (issue 34): a tx queue's region is a mempool of its
// own (mbufs allocated and freed in bulk, as testpmd's txonly), so every buffer must come back
// whether it was sent, refused or released unsent, and the port's counter must equal the
// queue's.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "accounting.h"
#include "dpdk_util.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {
DpdkIface null_tx(const std::string& device) {
  DpdkIface d;
  d.device = device;
  d.rx_queues = 0;
  d.tx_queues = 1;
  return d;
}
}  // namespace

TEST(DpdkTx, RegionMempoolSendsCountsAndGetsEveryBufferBack) {
  NDQ_REQUIRE_DPDK();
  Session s(null_tx("net_null5").build());
  auto& tx = s.tx_queue("d0", 0);
  constexpr size_t kPackets = 100'000;
  ASSERT_EQ(send_sequence(tx, 0, kPackets, 100), kPackets);
  auto st = tx.stats();
  EXPECT_NE(st.mode.find("region mempool"), std::string::npos) << st.mode;
  EXPECT_EQ(st.packets, kPackets);
  EXPECT_EQ(engine_counter(st, "port_opackets"), kPackets) << "the port counted what the queue says it sent";
  EXPECT_EQ(st.bytes, kPackets * 100) << "payload bytes, as Packet::size()";
  EXPECT_TRUE(sender_accounted(kPackets, st));
  EXPECT_EQ(engine_counter(st, "mbufs_in_flight"), 0u) << "net_null frees what it is given at once";

  // Hold bursts until the pool runs dry: each buffer is out once; releasing them unsent gives
  // every one back (tx_unsent) and the pool serves full bursts again.
  std::vector<TxBurst> held;
  size_t held_packets = 0;
  for (int i = 0; i < 10'000; ++i) {
    TxBurst b = tx.allocate(64);
    if (!b) break;
    held_packets += b.size();
    held.push_back(std::move(b));
  }
  ASSERT_FALSE(held.empty());
  EXPECT_LE(held_packets, 4096u);
  st = tx.stats();
  EXPECT_EQ(st.pool_in_use, held_packets);
  held.clear();
  st = tx.stats();
  EXPECT_EQ(st.drops[static_cast<size_t>(DropReason::tx_unsent)], held_packets);
  EXPECT_EQ(st.pool_in_use, 0u);
  TxBurst again = tx.allocate(64);
  EXPECT_EQ(again.size(), 64u);
}

TEST(DpdkTx, HeadersWrittenFromTheTemplateFollowEachPayloadSize) {
  NDQ_REQUIRE_DPDK();
  // net_ring: the frames come back whole; sizes alternate, so the template is rebuilt each time
  DpdkIface d;
  d.device = "net_ring5";
  d.tx_queues = 1;
  Session s(d.build());
  auto& tx = s.tx_queue("d0", 0);
  auto& rx = s.rx_queue("d0", 0);
  const uint32_t sizes[] = {100, 100, 1000, 64, 1000};
  TxBurst b = tx.allocate(5);
  ASSERT_EQ(b.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    ASSERT_TRUE(write_payload(b[i].buffer().first(sizes[i]), 0, i, 0));
    b[i].set_size(sizes[i]);
  }
  ASSERT_EQ(b.send(), 5u);
  size_t seen = 0;
  for (auto t0 = std::chrono::steady_clock::now(); seen < 5 && std::chrono::steady_clock::now() - t0 < 5s;) {
    for (const auto& p : rx.poll()) {
      const auto f = p.frame();
      ASSERT_LT(seen, 5u);
      ASSERT_EQ(f.size(), 42u + sizes[seen]);
      const uint32_t ip_len = (std::to_integer<uint32_t>(f[16]) << 8) | std::to_integer<uint32_t>(f[17]);
      const uint32_t udp_len = (std::to_integer<uint32_t>(f[38]) << 8) | std::to_integer<uint32_t>(f[39]);
      EXPECT_EQ(ip_len, 28u + sizes[seen]);
      EXPECT_EQ(udp_len, 8u + sizes[seen]);
      uint32_t sum = 0;  // the IPv4 header checksum verifies to 0xffff
      for (int k = 14; k < 34; k += 2) sum += (std::to_integer<uint32_t>(f[k]) << 8) | std::to_integer<uint32_t>(f[k + 1]);
      while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
      EXPECT_EQ(sum, 0xffffu) << "packet " << seen;
      ++seen;
    }
  }
  EXPECT_EQ(seen, 5u);
}

// Frames start (buffer index & 7) cache lines into their 2048-byte buffers (the region's
// stride would put every frame's first line in the same two L1 sets): frames filled to the
// capacity the queue reports, from most buffers of the pool (16 bursts held, then sent),
// arrive whole, with the right headers and sequence, and the port counts what the queue counts. A shift past the room the MTU leaves would overrun the next buffer
// (the pattern of another packet in flight) or the region's end.
TEST(DpdkTx, StaggeredFramesCarryTheirWholeCapacity) {
  NDQ_REQUIRE_DPDK();
  DpdkIface d;
  d.device = "net_ring6";
  d.tx_queues = 1;
  d.num_bufs = 2560;
  d.batch = 96;  // 16 bursts held (ring_depth) x 96
  Session s(d.build());
  auto& tx = s.tx_queue("d0", 0);
  auto& rx = s.rx_queue("d0", 0);
  EXPECT_NE(tx.stats().mode.find("frames staggered over 8 cache lines"), std::string::npos) << tx.stats().mode;
  const size_t cap = 2048 - 7 * 64 - 42;
  size_t sent = 0, seen = 0;
  auto receive = [&] {
    for (const auto& p : rx.poll()) {
      ASSERT_EQ(p.frame().size(), 42u + cap);
      PayloadHeader h;
      ASSERT_EQ(verify_payload(p, &h), PayloadStatus::ok) << "packet " << seen;
      ASSERT_EQ(h.stream, 3u);
      ASSERT_EQ(h.sequence, seen) << "in order, none lost";
      const auto f = p.frame();
      const uint32_t udp_len = (std::to_integer<uint32_t>(f[38]) << 8) | std::to_integer<uint32_t>(f[39]);
      ASSERT_EQ(udp_len, 8u + cap);
      ++seen;
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  for (int round = 0; round < 3; ++round) {
    std::vector<TxBurst> held;  // 1,536 of the pool's 2,560 buffers at once
    size_t n = 0;
    while (n < 1536) {
      TxBurst b = tx.allocate(96);
      if (!b) break;
      for (Packet& p : b) {
        ASSERT_EQ(p.buffer().size(), cap) << "every packet has the same capacity";
        ASSERT_TRUE(write_payload(p.buffer(), 3, sent++, 0));
        p.set_size(static_cast<uint32_t>(cap));
      }
      n += b.size();
      held.push_back(std::move(b));
    }
    ASSERT_EQ(n, 1536u);
    for (TxBurst& b : held) {
      while (b && std::chrono::steady_clock::now() - t0 < 10s) {
        b.send();
        receive();
      }
      ASSERT_FALSE(b) << "the loopback ring refused a burst for 10 s";
    }
    while (seen < sent && std::chrono::steady_clock::now() - t0 < 10s) receive();
    ASSERT_EQ(seen, sent);
  }
  const auto st = tx.stats();
  EXPECT_EQ(st.packets, sent);
  EXPECT_EQ(st.bytes, sent * cap);
  EXPECT_EQ(engine_counter(st, "port_opackets"), sent) << "the port counted what the queue says it sent";
  EXPECT_TRUE(sender_accounted(sent, st));
  EXPECT_EQ(st.pool_in_use, 0u);
}
