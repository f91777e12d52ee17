// Socket engine between two network namespaces joined by a veth pair (netns_lab): UDP
// unicast IPv4/IPv6 with exact counts (datagrams above the MTU included), multicast joined
// on the veth, TCP across. Needs root; with CI=true these tests fail instead of skipping.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <future>
#include <memory>

#include "netns_lab.h"
#include "test_util.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

std::string url(const char* proto, const std::string& host, uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return std::string(proto) + "://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// Receiver in namespace A, sender in namespace B; the sessions are opened in their
// namespaces (sockets belong to the namespace they were created in) and driven from here.
void send_across(NetnsLab& lab, const Iface& rs, const Iface& ts, const std::vector<Bytes>& payloads) {
  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(rs.build()); });
  auto tx = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(ts.build()); });
  auto& q = rx->rx_queue("if0");
  auto got = std::async(std::launch::async, [&] { return collect(q, payloads.size(), 5000ms); });
  EXPECT_EQ(send_payloads(tx->tx_queue("if0"), payloads, 5000ms), payloads.size());
  const auto received = got.get();
  EXPECT_TRUE(all_accounted(payloads.size(), received.size(), {q.stats()}));
  const QueueStats sent_stats = tx->tx_queue("if0").stats();
  EXPECT_TRUE(sender_accounted(payloads.size(), sent_stats));
  ASSERT_EQ(received.size(), payloads.size());
  for (size_t i = 0; i < payloads.size(); ++i) ASSERT_EQ(received[i], payloads[i]) << "packet " << i;
  const QueueStats st = q.stats();
  EXPECT_EQ(st.packets, payloads.size());
  EXPECT_EQ(st.total_drops(), 0u);
  EXPECT_EQ(sent_stats.packets, payloads.size());
}

std::vector<Bytes> mixed_payloads(size_t n, size_t max_size) {
  std::vector<Bytes> v;
  for (size_t i = 0; i < n; ++i) v.push_back(make_payload(i, 8 + ((i / 5) * 211) % (max_size - 7)));
  return v;
}

class NetnsUdp : public ::testing::TestWithParam<bool> {};

// Unicast over the veth pair, GSO/GRO on, sizes up to 4000 bytes (above the 1500 MTU: those
// go as IP fragments and without GSO).
TEST_P(NetnsUdp, UnicastAcrossVethExactCounts) {
  NDQ_REQUIRE_ROOT();
  const bool v6 = GetParam();
  NetnsLab lab;
  const uint16_t port = 47000;
  Iface rs;
  rs.address = url("udp", v6 ? lab.a().ip6 : lab.a().ip4, port);
  rs.rx_queues = 1;
  rs.buf_size = 4096;
  rs.ring_depth = 64;
  rs.num_bufs = 4096;
  Iface ts;
  ts.destination = rs.address;
  ts.tx_queues = 1;
  ts.buf_size = 4096;
  send_across(lab, rs, ts, mixed_payloads(2000, 4000));
}

// Multicast: the receiver joins the group on its veth end; the sender sends through its end.
TEST_P(NetnsUdp, MulticastJoinedOnVeth) {
  NDQ_REQUIRE_ROOT();
  const bool v6 = GetParam();
  NetnsLab lab;
  const uint16_t port = 47001;
  const std::string group = v6 ? "ff15::4e44:51" : "239.77.1.2";
  Iface rs;
  rs.address = url("udp", group, port);
  rs.rx_queues = 1;
  rs.socket.multicast_interface = lab.a().veth;
  Iface ts;
  ts.destination = rs.address;
  ts.tx_queues = 1;
  ts.rate_pps = 50000;  // a bounded burst: the veth/ip stack may not buffer a blast
  ts.socket.multicast_interface = lab.b().veth;  // the sender's way out to the group
  send_across(lab, rs, ts, mixed_payloads(500, 1400));
}

INSTANTIATE_TEST_SUITE_P(Families, NetnsUdp, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "IPv6" : "IPv4"; });

TEST(NetnsTcp, MessagesAcrossVethExactInOrder) {
  NDQ_REQUIRE_ROOT();
  NetnsLab lab;
  Iface rs;
  rs.address = url("tcp", lab.a().ip4, 47002);
  rs.rx_queues = 1;
  Iface ts;
  ts.destination = rs.address;
  ts.tx_queues = 1;
  send_across(lab, rs, ts, mixed_payloads(1000, 2048));
}

// The lab itself: names are unique, the pair is reachable, and nothing is left behind.
TEST(NetnsLabTest, CreatesAndRemovesEverything) {
  NDQ_REQUIRE_ROOT();
  std::string a, b;
  {
    NetnsLab lab;
    a = lab.a().ns;
    b = lab.b().ns;
    EXPECT_NE(a, b);
    // A plain datagram from A reaches B over IPv4 and IPv6.
    for (const std::string& dst : {lab.b().ip4, lab.b().ip6}) {
      const bool v6 = dst.find(':') != std::string::npos;
      Socket r = lab.run_in(lab.b().ns, [&] { return Socket::udp_bound(dst, 47010); });
      ASSERT_GE(r.fd(), 0);
      lab.run_in(lab.a().ns, [&] { EXPECT_TRUE(Socket::udp(v6).send_to(dst, 47010, make_payload(1, 32))); });
      char buf[64];
      timeval tv{2, 0};
      setsockopt(r.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      EXPECT_EQ(recv(r.fd(), buf, sizeof(buf), 0), 32) << dst;
    }
    // Outside the lab's namespaces the veth does not exist.
    std::string out;
    EXPECT_NE(run_command({"ip", "link", "show", lab.a().veth}, &out), 0);
  }
  std::string out;
  run_command({"ip", "netns", "list"}, &out);
  EXPECT_EQ(out.find(a), std::string::npos) << out;
  EXPECT_EQ(out.find(b), std::string::npos) << out;
}

}  // namespace
