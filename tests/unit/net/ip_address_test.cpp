// IP literals: the one parser the validator (flows, afxdp/dpdk tx addresses, endpoints) and the
// engines share.
#include "net/ip_address.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <string>

using namespace netdaq::detail;

namespace {

IpAddress v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  IpAddress ip;
  ip.family = IpFamily::v4;
  ip.bytes[0] = a, ip.bytes[1] = b, ip.bytes[2] = c, ip.bytes[3] = d;
  return ip;
}

TEST(IpAddress, ParsesIpv4) {
  const auto ip = parse_ip("10.0.0.1");
  ASSERT_TRUE(ip);
  EXPECT_TRUE(ip->is_v4());
  EXPECT_EQ(*ip, v4(10, 0, 0, 1));
  EXPECT_EQ(ip->size(), 4u);
  EXPECT_EQ(ip->af(), AF_INET);
  EXPECT_EQ(ip->v4_network_order(), htonl(0x0a000001));
  EXPECT_EQ(ip->to_string(), "10.0.0.1");
  EXPECT_EQ(parse_ip("0.0.0.0"), v4(0, 0, 0, 0));
  EXPECT_EQ(parse_ip("255.255.255.255"), v4(255, 255, 255, 255));
}

TEST(IpAddress, ParsesIpv6) {
  const auto ip = parse_ip("fd00::1");
  ASSERT_TRUE(ip);
  EXPECT_TRUE(ip->is_v6());
  EXPECT_EQ(ip->size(), 16u);
  EXPECT_EQ(ip->af(), AF_INET6);
  EXPECT_EQ(ip->bytes[0], 0xfd);
  EXPECT_EQ(ip->bytes[15], 1);
  EXPECT_EQ(ip->to_string(), "fd00::1");
  EXPECT_EQ(parse_ip("FD00:0:0:0:0:0:0:1"), ip);  // either case, any spelling: one address
  EXPECT_EQ(parse_ip("::")->to_string(), "::");
  EXPECT_EQ(parse_ip("::1")->bytes[15], 1);
}

TEST(IpAddress, V4MappedIpv6IsIpv6) {
  const auto ip = parse_ip("::ffff:1.2.3.4");
  ASSERT_TRUE(ip);
  EXPECT_TRUE(ip->is_v6());
  EXPECT_EQ(ip->bytes[10], 0xff);
  EXPECT_EQ(ip->bytes[11], 0xff);
  EXPECT_EQ(ip->bytes[12], 1);
  EXPECT_EQ(ip->bytes[15], 4);
  EXPECT_NE(*ip, *parse_ip("1.2.3.4"));
  EXPECT_FALSE(parse_ipv4("::ffff:1.2.3.4"));
}

TEST(IpAddress, RefusesWhatIsNotALiteral) {
  for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.0.0.1", "1.2.3.-1", "01.2.3.4", "0x1.2.3.4", " 1.2.3.4",
                          "1.2.3.4 ", "1.2.3.4/24", "localhost", "example.com", "[::1]", "fe80::1%eth0", "::1::2",
                          "12345::", "1:2:3:4:5:6:7:8:9", "fd00::g"})
    EXPECT_FALSE(parse_ip(bad)) << "'" << bad << "'";
  EXPECT_FALSE(parse_ip(std::string("1.2.3.4\0junk", 12)));  // not cut short at a NUL
}

TEST(IpAddress, Ipv4Only) {
  EXPECT_EQ(parse_ipv4("192.168.1.2"), v4(192, 168, 1, 2));
  EXPECT_FALSE(parse_ipv4("fd00::1"));
  EXPECT_FALSE(parse_ipv4("host"));
}

TEST(IpAddress, Classifies) {
  EXPECT_TRUE(parse_ip("0.0.0.0")->is_unspecified());
  EXPECT_TRUE(parse_ip("::")->is_unspecified());
  EXPECT_FALSE(parse_ip("::1")->is_unspecified());
  EXPECT_TRUE(parse_ip("224.0.0.1")->is_multicast());
  EXPECT_TRUE(parse_ip("239.255.255.255")->is_multicast());
  EXPECT_FALSE(parse_ip("240.0.0.1")->is_multicast());
  EXPECT_FALSE(parse_ip("223.255.255.255")->is_multicast());
  EXPECT_TRUE(parse_ip("ff02::1")->is_multicast());
  EXPECT_FALSE(parse_ip("fe80::1")->is_multicast());
  EXPECT_TRUE(parse_ip("255.255.255.255")->is_broadcast());
  EXPECT_FALSE(parse_ip("255.255.255.254")->is_broadcast());
  EXPECT_FALSE(parse_ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")->is_broadcast());
  EXPECT_STREQ(family_name(IpFamily::v4), "IPv4");
  EXPECT_STREQ(family_name(IpFamily::v6), "IPv6");
}

TEST(IpAddress, RoundTrips) {
  for (const char* text : {"10.1.2.3", "fd00::1", "::ffff:1.2.3.4", "2001:db8::8:800:200c:417a"})
    EXPECT_EQ(parse_ip(text)->to_string(), text);
}

}  // namespace
