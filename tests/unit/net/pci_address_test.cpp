// PCI addresses: the one parser the validator (dpdk address, eal.allow) and the dpdk engine share.
#include "net/pci_address.h"

#include <gtest/gtest.h>

using namespace netdaq::detail;

namespace {

TEST(PciAddress, ParsesLongAndShortForms) {
  const auto a = parse_pci("0000:3b:00.0");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->domain, 0);
  EXPECT_EQ(a->bus, 0x3b);
  EXPECT_EQ(a->device, 0);
  EXPECT_EQ(a->function, 0);
  EXPECT_EQ(parse_pci("3b:00.0"), a);  // the short form is domain 0
  const auto b = parse_pci("abcd:ef:1f.7");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->domain, 0xabcd);
  EXPECT_EQ(b->bus, 0xef);
  EXPECT_EQ(b->device, 0x1f);
  EXPECT_EQ(b->function, 7);
}

TEST(PciAddress, EitherCaseIsOneAddress) {
  EXPECT_EQ(parse_pci("0000:3B:00.0"), parse_pci("3b:00.0"));
  EXPECT_EQ(parse_pci("ABCD:EF:0A.1"), parse_pci("abcd:ef:0a.1"));
}

TEST(PciAddress, CanonicalText) {
  EXPECT_EQ(parse_pci("3B:00.0")->to_string(), "0000:3b:00.0");
  EXPECT_EQ(parse_pci("0001:af:1e.3")->to_string(), "0001:af:1e.3");
  EXPECT_EQ(PciAddress{}.to_string(), "0000:00:00.0");
}

TEST(PciAddress, RefusesOtherForms) {
  for (const char* bad : {"", "3b:00.8", "3b:00.9", "3b:00.a", "0000:3b:00.8", "3b:0.0", "3:00.0", "3b:000.0",
                          "000:3b:00.0", "00000:3b:00.0", "0000-3b:00.0", "0000:3b-00.0", "0000:3b:00:0",
                          "3b:00.", "3b:00.00", "3g:00.0", "3b:0x.0", "0000:3b:00.0 ", " 3b:00.0", "zzzz:3b:00.0",
                          "net_ring0", "net_af_xdp0,iface=veth1", "3b:00.0,arg=1", "+b:00.0"})
    EXPECT_FALSE(parse_pci(bad)) << "'" << bad << "'";
}

}  // namespace
