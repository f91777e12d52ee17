// The /proc and /sys formats `netdaq check` parses (tools/netdaq/check/sys_values.h), and
// NVML's clock event reasons (nvml.h).
#include "check/sys_values.h"

#include <gtest/gtest.h>

#include "check/nvml.h"

namespace netdaq::cli::check {

TEST(CheckParse, CpuLists) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (CpuSet{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(""), CpuSet{});
  EXPECT_EQ(cpu_list_text({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(cpu_list_text({}), "");
}

TEST(CheckParse, KernelCommandLineStopsAtInitArguments) {
  const auto m = parse_cmdline("ro quiet isolcpus=domain,2-3 iommu=pt -- nohz_full=1");
  EXPECT_EQ(m.at("isolcpus"), "domain,2-3");
  EXPECT_EQ(m.at("iommu"), "pt");
  EXPECT_EQ(m.at("quiet"), "");
  EXPECT_FALSE(m.count("nohz_full"));
}

TEST(CheckParse, NvidiaDriverVersionAndOpenModule) {
  const auto open = parse_nvidia_version(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  (dvs-builder@U16)  Tue "
      "Mar  5 22:15:33 UTC 2024\nGCC version:  gcc version 12.2.0");
  ASSERT_TRUE(open);
  EXPECT_EQ(open->version, "550.54.15");
  EXPECT_EQ(open->major, 550);
  EXPECT_TRUE(open->open);
  const auto prop = parse_nvidia_version(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 "
      "01:15:15 UTC 2023");
  ASSERT_TRUE(prop);
  EXPECT_EQ(prop->major, 535);
  EXPECT_FALSE(prop->open);
  EXPECT_FALSE(parse_nvidia_version("garbage"));
}

TEST(CheckParse, PciAddresses) {
  EXPECT_EQ(normalize_bdf("00000000:3B:00.0").value_or(""), "0000:3b:00.0");
  EXPECT_EQ(normalize_bdf("3b:00.1").value_or(""), "0000:3b:00.1");
  EXPECT_FALSE(normalize_bdf("eth0"));
  EXPECT_EQ(pci_chain("/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:00.0/net/x"),
            (std::vector<std::string>{"0000:3a:00.0", "0000:3b:00.0", "0000:3c:00.0"}));
}

TEST(CheckParse, RoutesAndGids) {
  const auto routes = parse_routes({"Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask",
                                    "eth1\t00004D0A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0"});
  ASSERT_EQ(routes.size(), 1u);
  EXPECT_EQ(routes[0].iface, "eth1");
  EXPECT_EQ(routes[0].dest, 0x0a4d0000u);  // 10.77.0.0
  EXPECT_EQ(routes[0].mask, 0xffffff00u);
  EXPECT_EQ(ipv4_gid(*parse_ipv4("10.77.0.2")), "0000:0000:0000:0000:0000:ffff:0a4d:0002");
}

TEST(CheckParse, CapabilitiesLimitsAndBars) {
  EXPECT_EQ(parse_cap_eff({"Name:\tx", "CapEff:\t000001ffffffffff"}).value_or(0), 0x1ffffffffffull);
  const auto lim = parse_memlock({"Limit  Soft Limit  Hard Limit  Units",
                                  "Max locked memory         8388608              8388608              bytes"});
  EXPECT_TRUE(lim.found);
  EXPECT_EQ(lim.bytes.value_or(0), 8388608u);
  EXPECT_FALSE(parse_memlock({"Max locked memory         unlimited            unlimited            bytes"}).bytes);
  const std::vector<std::string> res{"0x00000000c0000000 0x00000000c0ffffff 0x0000000000040200",
                                     "0x0000020000000000 0x000002000fffffff 0x000000000014220c",
                                     "0x0000000000000000 0x0000000000000000 0x0000000000000000"};
  EXPECT_EQ(bar_size(res, 1), 256ull << 20);
  EXPECT_EQ(bar_size(res, 2), 0u);
  EXPECT_EQ(bytes_text(256ull << 20), "256 MiB");
}

// A config space with the capability list 0x40 (power management) -> 0x60 (PCI Express).
std::vector<uint8_t> pci_config(size_t size, uint32_t devcap, uint16_t devctl) {
  std::vector<uint8_t> b(size);
  b[0x06] = 0x10;  // Status: capability list
  b[0x34] = 0x40;
  b[0x40] = 0x01;
  b[0x41] = 0x60;
  b[0x60] = 0x10;
  for (int i = 0; i < 4; ++i) b[0x64 + i] = static_cast<uint8_t>(devcap >> (8 * i));
  b[0x68] = static_cast<uint8_t>(devctl);
  b[0x69] = static_cast<uint8_t>(devctl >> 8);
  return b;
}

TEST(CheckParse, PcieCapabilityMpsAndMrrs) {
  const auto p = parse_pcie_config(pci_config(256, 0x8002, 0x2910));  // supports 512; MPS 128, MRRS 512
  EXPECT_TRUE(p.complete);
  ASSERT_TRUE(p.express);
  EXPECT_EQ(p.cap, 0x60);
  EXPECT_EQ(p.mps_supported(), 512u);
  EXPECT_EQ(p.mps(), 128u);
  EXPECT_EQ(p.mrrs(), 512u);
  EXPECT_EQ(parse_pcie_config(pci_config(4096, 0x8001, 0x5930)).mrrs(), 4096u);
  // MRRS 4096 (5 << 12) and MPS 256 (1 << 5), the other bits kept.
  EXPECT_EQ(pcie_devctl_with(0x2910, 256, 4096), 0x5930);
  EXPECT_EQ(pcie_devctl_with(0xffff, 128, 128), 0x8f1f);
  EXPECT_EQ(pcie_size_code(128), 0);
  EXPECT_EQ(pcie_size_code(4096), 5);
}

TEST(CheckParse, PcieConfigShortOrConventional) {
  // Without root sysfs returns the first 64 bytes: the list points past them.
  auto short_read = pci_config(256, 0x8002, 0x2910);
  short_read.resize(64);
  const auto s = parse_pcie_config(short_read);
  EXPECT_FALSE(s.complete);
  EXPECT_FALSE(s.express);
  EXPECT_FALSE(parse_pcie_config({}).complete);
  // A conventional PCI device: capabilities, none of them PCI Express.
  auto pci = pci_config(256, 0, 0);
  pci[0x60] = 0x09;  // vendor specific
  const auto c = parse_pcie_config(pci);
  EXPECT_TRUE(c.complete);
  EXPECT_FALSE(c.express);
  // A list that loops ends.
  auto loop = pci_config(256, 0, 0);
  loop[0x41] = 0x40;
  EXPECT_FALSE(parse_pcie_config(loop).express);
}

TEST(CheckParse, NvmlClockEventReasons) {
  EXPECT_EQ(clock_reasons_text(0), "none");
  EXPECT_EQ(clock_reasons_text(0x1 | 0x4), "GpuIdle, SwPowerCap");
  EXPECT_EQ(clock_reasons_text(0x40 | 0x1000), "HwThermalSlowdown, 0x1000");
}

}  // namespace netdaq::cli::check
