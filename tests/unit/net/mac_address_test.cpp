// MAC addresses: the one parser the validator (afxdp/dpdk dst_mac) and the engines (the same
// options, the kernel's neighbour table) share.
#include "net/mac_address.h"

#include <gtest/gtest.h>

#include <string>

using namespace netdaq::detail;

namespace {

TEST(MacAddress, Parses) {
  EXPECT_EQ(parse_mac("02:00:00:00:00:01"), (MacAddress{2, 0, 0, 0, 0, 1}));
  EXPECT_EQ(parse_mac("ff:ff:ff:ff:ff:ff"), (MacAddress{255, 255, 255, 255, 255, 255}));
  EXPECT_EQ(parse_mac("00:00:00:00:00:00"), MacAddress{});
}

TEST(MacAddress, EitherCase) {
  EXPECT_EQ(parse_mac("AA:bb:Cc:dD:0e:F0"), (MacAddress{0xaa, 0xbb, 0xcc, 0xdd, 0x0e, 0xf0}));
}

TEST(MacAddress, RefusesOtherForms) {
  for (const char* bad : {"", "02:00:00:00:00", "02:00:00:00:00:01:02", "02:00:00:00:00:0g", "0x:00:00:00:00:01",
                          "2:0:0:0:0:1", "02-00-00-00-00-01", "0200.0000.0001", "020000000001", " 02:00:00:00:00:01",
                          "02:00:00:00:00:01 ", "02:00:00:00:00:01:", "02:00:00:00:00::1", "+2:00:00:00:00:01",
                          "02:00:00:00:00:1", "002:00:00:00:00:01", "02::00:00:00:00:01"})
    EXPECT_FALSE(parse_mac(bad)) << "'" << bad << "'";
  EXPECT_FALSE(parse_mac(std::string("02:00:00:00:00:0\0", 17)));
}

TEST(MacAddress, ToString) {
  EXPECT_EQ(to_string(MacAddress{2, 0, 0, 0xab, 0, 1}), "02:00:00:ab:00:01");
  EXPECT_EQ(to_string(*parse_mac("AA:BB:CC:DD:EE:FF")), "aa:bb:cc:dd:ee:ff");
}

}  // namespace
