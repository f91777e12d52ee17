// Socket engine, socket.ip_headers (roce_sw: the RoCEv2 ICRC covers the IP header): over a veth
// pair between two namespaces this test creates, a plain UDP socket in B sends to netdaq in A.
// Packet::frame() must hold a zero Ethernet header and then exactly the IP/UDP bytes the kernel
// received (captured independently with AF_PACKET on A's veth), the payloads intact, recvmmsg
// batches > 1, other ports' datagrams never delivered, and no ICMP port unreachable for ours.
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <map>
#include <sstream>
#include <thread>

#include "netns_lab.h"
#include "test_util.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

// A counter of /proc/net/snmp in namespace ns ("Icmp", "OutDestUnreachs").
uint64_t snmp(const NetnsLab& lab, const std::string& ns, const std::string& group, const std::string& name) {
  std::string out;
  if (lab.exec_in(ns, {"cat", "/proc/net/snmp"}, &out) != 0) throw std::runtime_error("cannot read /proc/net/snmp");
  std::istringstream in(out);
  std::string names, values;
  while (std::getline(in, names) && std::getline(in, values)) {
    if (names.rfind(group + ":", 0) != 0) continue;
    std::istringstream n(names), v(values);
    std::string key, val;
    while (n >> key && v >> val)
      if (key == name) return std::stoull(val);
  }
  throw std::runtime_error("no " + group + " " + name + " in /proc/net/snmp");
}

// Every IPv4 frame received on A's veth (AF_PACKET), keyed by its UDP payload's sequence.
class Capture {
 public:
  explicit Capture(int fd) : fd_(fd) {}
  ~Capture() { if (fd_ >= 0) ::close(fd_); }
  // Reads what waits; returns the frames to UDP port `port`, keyed by payload_seq.
  std::map<uint64_t, Bytes> frames_to(uint16_t port) {
    std::map<uint64_t, Bytes> out;
    std::byte buf[4096];
    const auto deadline = std::chrono::steady_clock::now() + 500ms;
    while (std::chrono::steady_clock::now() < deadline) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0) {
        std::this_thread::sleep_for(1ms);
        continue;
      }
      if (n < 42) continue;
      const auto* ip = reinterpret_cast<const uint8_t*>(buf + 14);
      const size_t ihl = (ip[0] & 0xf) * 4u;
      if (ip[9] != IPPROTO_UDP || static_cast<size_t>(n) < 14 + ihl + 8 + 8) continue;
      if (((ip[ihl + 2] << 8) | ip[ihl + 3]) != port) continue;
      Bytes payload(buf + 14 + ihl + 8, buf + n);
      out[payload_seq(payload)] = Bytes(buf, buf + n);
    }
    return out;
  }

 private:
  int fd_;
};

TEST(SocketIpHeaders, roce_sw_FrameIsTheReceivedIpUdpHeaderAndPayloadIntact) {
  NDQ_REQUIRE_ROOT();
  NetnsLab lab;
  const uint16_t port = 4791, other = 4792;
  constexpr size_t kCount = 400, kSize = 1000, kOther = 7;

  Iface rs;
  rs.address = "udp://" + lab.a().ip4 + ":" + std::to_string(port);
  rs.rx_queues = 1;
  rs.batch = 32;
  rs.socket.ip_headers = true;
  const Config cfg = rs.build();
  const auto caps = capabilities_of(cfg.interfaces[0]);
  ASSERT_TRUE(caps && caps->whole_frames) << "socket.ip_headers: Packet::frame() holds the frame";

  auto session = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(cfg); });
  auto& rq = session->rx_queue("if0");
  Capture cap(open_capture(lab, lab.a(), ETH_P_IP, 16 << 20));  // every frame of the test waits there

  const uint64_t unreach0 = snmp(lab, lab.a().ns, "Icmp", "OutDestUnreachs");
  const uint64_t noports0 = snmp(lab, lab.a().ns, "Udp", "NoPorts");
  const uint64_t inerrors0 = snmp(lab, lab.a().ns, "Udp", "InErrors");
  // All datagrams first, so they wait in the socket and recvmmsg takes them in batches.
  lab.run_in(lab.b().ns, [&] {
    Socket s = Socket::udp();
    sockaddr_in to{};
    to.sin_family = AF_INET;
    inet_pton(AF_INET, lab.a().ip4.c_str(), &to.sin_addr);
    for (size_t i = 0; i < kCount; ++i) {
      to.sin_port = htons(port);
      const Bytes p = make_payload(i, kSize);
      ASSERT_EQ(::sendto(s.fd(), p.data(), p.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to),
                static_cast<ssize_t>(p.size()));
      if (i < kOther) {  // to a port nobody holds: neither delivered nor silent (ICMP)
        to.sin_port = htons(other);
        const Bytes q = make_payload(1000000 + i, 100);
        ::sendto(s.fd(), q.data(), q.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
      }
    }
  });
  const auto wire = cap.frames_to(port);
  ASSERT_EQ(wire.size(), kCount) << "the capture saw every datagram";

  size_t got = 0, max_burst = 0;
  auto deadline = std::chrono::steady_clock::now() + 5s;
  bool settling = false;
  while (std::chrono::steady_clock::now() < deadline) {
    RxBurst b = rq.poll();
    if (!b) continue;
    max_burst = std::max(max_burst, b.size());
    for (const Packet& p : b) {
      const Bytes payload = bytes_of(p);
      const uint64_t seq = payload_seq(payload);
      ASSERT_LT(seq, kCount) << "a datagram of another port was delivered";
      ASSERT_TRUE(check_payload(payload, seq, kSize));
      const auto frame = p.frame();
      const Bytes& w = wire.at(seq);
      ASSERT_EQ(frame.size(), w.size());
      for (size_t k = 0; k < 12; ++k) ASSERT_EQ(frame[k], std::byte{0}) << "synthetic Ethernet: zero MACs";
      ASSERT_EQ(frame[12], std::byte{0x08});
      ASSERT_EQ(frame[13], std::byte{0x00});
      ASSERT_EQ(0, std::memcmp(frame.data() + 14, w.data() + 14, w.size() - 14))
          << "datagram " << seq << ": the IP/UDP header and payload differ from what the kernel received";
      ++got;
    }
    if (got >= kCount && !settling) {  // a little longer: room for a stray other-port datagram
      settling = true;
      deadline = std::chrono::steady_clock::now() + 50ms;
    }
  }
  EXPECT_EQ(got, kCount);
  EXPECT_GT(max_burst, 1u) << "recvmmsg batches";
  const QueueStats st = rq.stats();
  EXPECT_EQ(st.packets, kCount);
  EXPECT_EQ(st.total_drops(), 0u);
  EXPECT_EQ(st.bytes, kCount * kSize);
  // The other port (nobody bound) is answered with ICMP; ours never: the holder socket works.
  // NoPorts counts each datagram to a port nobody holds; the ICMP replies are rate limited
  // (icmp_ratelimit's burst), so at least one and at most one per such datagram.
  EXPECT_EQ(snmp(lab, lab.a().ns, "Udp", "NoPorts") - noports0, kOther);
  // The port's UDP socket drops its copy of each datagram (its queue stays empty): the
  // kernel counts those in InErrors, as docs/socket-engine.md says.
  EXPECT_EQ(snmp(lab, lab.a().ns, "Udp", "InErrors") - inerrors0, kCount);
  const uint64_t unreach = snmp(lab, lab.a().ns, "Icmp", "OutDestUnreachs") - unreach0;
  EXPECT_GE(unreach, 1u);
  EXPECT_LE(unreach, kOther);
}

TEST(SocketIpHeaders, roce_sw_RejectsIpv6AndSeveralQueues) {
  Iface rs;
  rs.address = "udp://[::1]:4791";
  rs.rx_queues = 1;
  rs.socket.ip_headers = true;
  std::string r = issues(rs.build());
  EXPECT_NE(r.find("socket.ip_headers"), std::string::npos) << r;
  EXPECT_NE(r.find("IPv4"), std::string::npos) << r;
  rs.address = "udp://127.0.0.1:4791";
  rs.rx_queues = 2;
  r = issues(rs.build());
  EXPECT_NE(r.find("one rx queue"), std::string::npos) << r;
  rs.rx_queues = 1;
  EXPECT_EQ(issues(rs.build()), "");
}

}  // namespace
