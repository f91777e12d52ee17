// Whole-frame TX (afxdp.tx_raw_frames, dpdk.tx_raw_frames; roce_sw: the RoCEv2 emulator sets the
// IP ID and flags its ICRC covers): the application writes every byte of each frame, the engine
// adds nothing. Over a veth pair between two namespaces this test creates, netdaq in B sends
// IPv4/UDP frames with chosen IP IDs, DF, TTL and a zero UDP checksum, and frames of a local
// experimental ethertype; an AF_PACKET socket on A's veth (not netdaq) must see each frame
// exactly once, byte for byte.
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <thread>

#include "dpdk_util.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

constexpr uint16_t kExperimental = 0x88b5;  // IEEE local experimental ethertype
constexpr uint16_t kPort = 4791;

// Frame i: every third one of the experimental ethertype, the others IPv4/UDP to kPort with
// IP ID 0x1000+i, DF, TTL 33 and UDP checksum 0 (what no engine-written header has).
std::vector<Bytes> make_frames(const NetnsLab& lab, size_t n) {
  const auto dst = mac_bytes(lab.mac(lab.a())), src = mac_bytes(lab.mac(lab.b()));
  in_addr sip{}, dip{};
  inet_pton(AF_INET, lab.b().ip4.c_str(), &sip);
  inet_pton(AF_INET, lab.a().ip4.c_str(), &dip);
  std::vector<Bytes> frames;
  for (size_t i = 0; i < n; ++i) {
    const Bytes payload = make_payload(i, 200 + (i * 37) % 1200);
    std::vector<uint8_t> f(dst.begin(), dst.end());
    f.insert(f.end(), src.begin(), src.end());
    if (i % 3 == 0) {
      f.push_back(kExperimental >> 8);
      f.push_back(kExperimental & 0xff);
    } else {
      const size_t udp_len = 8 + payload.size(), ip_len = 20 + udp_len;
      const uint16_t id = static_cast<uint16_t>(0x1000 + i);
      const uint8_t ip[20] = {0x45, 0, uint8_t(ip_len >> 8), uint8_t(ip_len), uint8_t(id >> 8), uint8_t(id), 0x40, 0,
                              33,   17, 0, 0};
      std::vector<uint8_t> h(ip, ip + 20);
      std::memcpy(h.data() + 12, &sip, 4);
      std::memcpy(h.data() + 16, &dip, 4);
      uint32_t sum = 0;
      for (size_t k = 0; k < 20; k += 2) sum += (h[k] << 8) | h[k + 1];
      while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
      h[10] = static_cast<uint8_t>(~sum >> 8);
      h[11] = static_cast<uint8_t>(~sum);
      f.push_back(0x08);
      f.push_back(0x00);
      f.insert(f.end(), h.begin(), h.end());
      const uint8_t udp[8] = {0x04, 0xd2, kPort >> 8, kPort & 0xff, uint8_t(udp_len >> 8), uint8_t(udp_len), 0, 0};
      f.insert(f.end(), udp, udp + 8);
    }
    Bytes b(reinterpret_cast<const std::byte*>(f.data()), reinterpret_cast<const std::byte*>(f.data() + f.size()));
    b.insert(b.end(), payload.begin(), payload.end());
    frames.push_back(std::move(b));
  }
  return frames;
}

// Every frame arriving on A's veth from B's MAC (AF_PACKET, all protocols), counted by bytes.
class Capture {
 public:
  Capture(NetnsLab& lab) : src_(mac_bytes(lab.mac(lab.b()))) {
    fd_ = open_capture(lab, lab.a(), ETH_P_ALL, 16 << 20);
  }
  ~Capture() { ::close(fd_); }
  // Reads until `count` frames from B came or `timeout` passed (then 50 ms more for extras).
  std::map<Bytes, size_t> frames(size_t count, std::chrono::milliseconds timeout) {
    std::map<Bytes, size_t> out;
    for (Bytes& f : capture_frames(fd_, count, timeout, [&](std::span<const std::byte> f) {
           if (f.size() < 14 || std::memcmp(f.data() + 6, src_.data(), 6) != 0) return false;
           const auto type = (uint16_t(f[12]) << 8) | uint16_t(f[13]);
           return type == 0x0800 || type == kExperimental;  // not B's own IPv6/ARP chatter
         }))
      ++out[std::move(f)];
    return out;
  }

 private:
  std::array<uint8_t, 6> src_;
  int fd_ = -1;
};

// Each frame sent arrived exactly once, and nothing else from B.
void expect_exactly(const std::vector<Bytes>& sent, const std::map<Bytes, size_t>& got) {
  size_t found = 0, total = 0;
  for (const auto& [bytes, n] : got) total += n;
  for (size_t i = 0; i < sent.size(); ++i) {
    auto it = got.find(sent[i]);
    ASSERT_NE(it, got.end()) << "frame " << i << " (" << sent[i].size() << " bytes) never arrived intact";
    EXPECT_EQ(it->second, 1u) << "frame " << i;
    ++found;
  }
  EXPECT_EQ(found, sent.size());
  EXPECT_EQ(total, sent.size()) << "frames from B that were not sent by the test";
}

TEST(TxRawFrames, roce_sw_AfxdpSendsWholeFramesIntact) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  constexpr size_t kN = 300;
  const std::vector<Bytes> frames = make_frames(lab, kN);
  Capture cap(lab);
  AfxdpIface t;
  t.dev = lab.b().veth;
  t.tx_queue = 0;
  t.afxdp.tx_raw_frames = true;
  const Config cfg = t.build();
  const auto caps = capabilities_of(cfg.interfaces[0]);
  ASSERT_TRUE(caps && caps->tx_whole_frames);
  auto tx = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(cfg); });
  auto& q = tx->tx_queue("x0");
  ASSERT_EQ(send_payloads(q, frames, 10s), kN);
  expect_exactly(frames, cap.frames(kN, 10s));
  const QueueStats st = q.stats();
  EXPECT_EQ(st.packets, kN);
  uint64_t bytes = 0;
  for (const auto& f : frames) bytes += f.size();
  EXPECT_EQ(st.bytes, bytes) << "bytes counted are the whole frames";
  EXPECT_NE(st.mode.find("raw frames"), std::string::npos) << st.mode;
}

TEST(TxRawFrames, roce_sw_DpdkSendsWholeFramesIntact) {
  NDQ_REQUIRE_DPDK();
  NetnsLab lab;
  constexpr size_t kN = 300;
  const std::vector<Bytes> frames = make_frames(lab, kN);
  Capture cap(lab);
  DpdkIface d;
  d.device = "net_af_packet0,iface=" + lab.b().veth + ",blocksz=12288,framesz=1536,framecnt=4096";
  d.rx_queues = 0;
  d.tx_queues = 1;
  d.destination = "";
  d.dpdk.dst_mac = "";
  d.dpdk.src_ip = "";
  d.dpdk.tx_raw_frames = true;
  const Config cfg = d.build();
  const auto caps = capabilities_of(cfg.interfaces[0]);
  ASSERT_TRUE(caps && caps->tx_whole_frames);
  auto tx = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(cfg); });
  auto& q = tx->tx_queue("d0");
  ASSERT_EQ(send_payloads(q, frames, 10s), kN);
  expect_exactly(frames, cap.frames(kN, 10s));
  const QueueStats st = q.stats();
  EXPECT_EQ(st.packets, kN);
  EXPECT_NE(st.mode.find("raw frames"), std::string::npos) << st.mode;
}

TEST(TxRawFrames, roce_sw_HeaderOptionsAreRefused) {
  AfxdpIface t;
  t.dev = "veth0";
  t.tx_queue = 0;
  t.afxdp.tx_raw_frames = true;
  EXPECT_EQ(issues(t.build()), "");
  t.destination = "udp://10.0.0.2:4791";
  t.dst_mac = "02:00:00:00:00:01";
  const std::string r = issues(t.build());
  EXPECT_NE(r.find("tx.destination = 'udp://10.0.0.2:4791': is not used with afxdp.tx_raw_frames"), std::string::npos) << r;
  EXPECT_NE(r.find("afxdp.dst_mac"), std::string::npos) << r;
}

}  // namespace
