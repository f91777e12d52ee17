// Datagrams the kernel drops because the application did not read in time are counted
// under DropReason::kernel, so delivered + kernel drops accounts for every datagram sent.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include "netdaq/netdaq.h"
#include "test_util.h"

using namespace netdaq;
using namespace ndqtest;

class KernelDrops : public ::testing::TestWithParam<bool> {};

TEST_P(KernelDrops, OverflowedSocketBufferIsCountedExactly) {
  const bool gro = GetParam();
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = "udp://127.0.0.1:" + std::to_string(port);
  rs.rx_queues = 1;
  rs.socket.gro = gro;
  rs.socket.rcvbuf = 64 * 1024;  // small: a few dozen datagrams fit, the rest overflow
  Session rx(rs.build());

  // An independent sender; nobody polls while it sends, so the socket buffer overflows.
  Socket peer = Socket::udp();
  constexpr uint64_t kSent = 3000;
  for (uint64_t i = 0; i < kSent; ++i) ASSERT_TRUE(peer.send_to("127.0.0.1", port, make_payload(i, 1000)));

  const auto got = collect(rx.rx_queue("if0"), kSent, 300ms, 50ms);
  const QueueStats st = rx.rx_queue("if0").stats();
  EXPECT_GT(st.drop(DropReason::kernel), 0u) << "the buffer should have overflowed";
  EXPECT_LT(got.size(), kSent);
  EXPECT_TRUE(all_accounted(kSent, got.size(), {st}));
  EXPECT_EQ(st.total_drops(), st.drop(DropReason::kernel)) << describe(st);
  // What did arrive is intact and in order.
  uint64_t last = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const uint64_t seq = payload_seq(got[i]);
    ASSERT_TRUE(check_payload(got[i], seq, 1000));
    if (i) {
      EXPECT_GT(seq, last);
    }
    last = seq;
  }
}

INSTANTIATE_TEST_SUITE_P(Gro, KernelDrops, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "GroOn" : "GroOff"; });
