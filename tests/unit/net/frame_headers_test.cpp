// Frame header code shared by afxdp and dpdk: finding the UDP payload of any received frame without
// reading past its end, and the IPv4/UDP headers it writes for sending.
#include "net/frame_headers.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace netdaq::detail;

namespace {

using Frame = std::vector<std::byte>;

Frame ipv4_frame(uint16_t payload, bool vlan = false) {
  Ipv4UdpHeaders h(Mac{2, 0, 0, 0, 0, 1}, Mac{2, 0, 0, 0, 0, 2}, htonl(0x0a000001), htonl(0x0a000002), 4000, 5000);
  Frame f(Ipv4UdpHeaders::kSize + payload);
  h.write(f.data(), payload);
  for (uint16_t i = 0; i < payload; ++i) f[Ipv4UdpHeaders::kSize + i] = std::byte(i);
  if (vlan) {  // insert an 802.1Q tag after the MAC addresses
    const std::byte tag[4] = {std::byte{0x81}, std::byte{0x00}, std::byte{0x00}, std::byte{0x64}};
    f.insert(f.begin() + 12, tag, tag + 4);
  }
  return f;
}

Frame ipv6_frame(uint16_t payload) {
  Frame f(14 + 40 + 8 + payload);
  f[12] = std::byte{0x86}, f[13] = std::byte{0xdd};
  f[14] = std::byte{0x60};
  f[14 + 6] = std::byte{17};
  f[14 + 40 + 4] = std::byte(uint8_t((8 + payload) >> 8));
  f[14 + 40 + 5] = std::byte(uint8_t(8 + payload));
  return f;
}

uint16_t ip_checksum(const std::byte* ip) {
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += uint32_t(uint8_t(ip[i])) << 8 | uint8_t(ip[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return uint16_t(~sum);
}

TEST(AfxdpFrameHeaders, WrittenIpv4HeadersAreValidAndFoundAgain) {
  for (uint16_t payload : {0, 1, 18, 1472}) {
    const Frame f = ipv4_frame(payload);
    EXPECT_EQ(ip_checksum(f.data() + 14), 0) << "checksum over a valid header folds to 0";
    EXPECT_EQ(uint16_t(uint8_t(f[16])) << 8 | uint8_t(f[17]), 28 + payload);
    const UdpPayload u = find_udp_payload(f.data(), uint32_t(f.size()));
    ASSERT_TRUE(u.ok) << payload;
    EXPECT_EQ(u.offset, 42u);
    EXPECT_EQ(u.size, payload);
  }
}

TEST(AfxdpFrameHeaders, VlanAndIpv6) {
  const Frame v = ipv4_frame(100, true);
  const UdpPayload u = find_udp_payload(v.data(), uint32_t(v.size()));
  ASSERT_TRUE(u.ok);
  EXPECT_EQ(u.offset, 46u);
  EXPECT_EQ(u.size, 100u);
  EXPECT_EQ(v[u.offset + 7], std::byte{7});
  const Frame s = ipv6_frame(300);
  const UdpPayload w = find_udp_payload(s.data(), uint32_t(s.size()));
  ASSERT_TRUE(w.ok);
  EXPECT_EQ(w.offset, 62u);
  EXPECT_EQ(w.size, 300u);
}

// Every truncation of a valid frame is either rejected or (padding aside) unchanged; each
// length is copied into a buffer of exactly that size so ASan catches a read past the end.
TEST(AfxdpFrameHeaders, TruncatedFramesNeverReadPastTheEnd) {
  for (const Frame& full : {ipv4_frame(64), ipv4_frame(64, true), ipv6_frame(64)}) {
    for (size_t len = 0; len < full.size(); ++len) {
      std::vector<std::byte> cut(full.begin(), full.begin() + long(len));
      EXPECT_FALSE(find_udp_payload(cut.data(), uint32_t(len)).ok) << len;
    }
  }
}

TEST(AfxdpFrameHeaders, RejectsWhatIsNotWholeUdp) {
  Frame f = ipv4_frame(64);
  Frame frag = f;
  frag[14 + 6] = std::byte{0x20};  // more fragments
  EXPECT_FALSE(find_udp_payload(frag.data(), uint32_t(frag.size())).ok);
  Frame tcp = f;
  tcp[14 + 9] = std::byte{6};
  EXPECT_FALSE(find_udp_payload(tcp.data(), uint32_t(tcp.size())).ok);
  Frame long_udp = f;
  long_udp[14 + 20 + 5] = std::byte{0xff};  // UDP length beyond the frame
  EXPECT_FALSE(find_udp_payload(long_udp.data(), uint32_t(long_udp.size())).ok);
  Frame short_udp = f;
  short_udp[14 + 20 + 4] = std::byte{0}, short_udp[14 + 20 + 5] = std::byte{7};  // below the UDP header
  EXPECT_FALSE(find_udp_payload(short_udp.data(), uint32_t(short_udp.size())).ok);
  Frame ihl = f;
  ihl[14] = std::byte{0x44};  // IHL 16 bytes
  EXPECT_FALSE(find_udp_payload(ihl.data(), uint32_t(ihl.size())).ok);
  Frame arp = f;
  arp[12] = std::byte{0x08}, arp[13] = std::byte{0x06};
  EXPECT_FALSE(find_udp_payload(arp.data(), uint32_t(arp.size())).ok);
  Frame padded = f;  // Ethernet padding after the datagram: payload size from the UDP length
  padded.resize(f.size() + 10);
  const UdpPayload u = find_udp_payload(padded.data(), uint32_t(padded.size()));
  EXPECT_TRUE(u.ok);
  EXPECT_EQ(u.size, 64u);
}

}  // namespace
