// The /proc and /sys text formats `netdaq check` parses (tools/netdaq/check/sys_values.h).
#include "check/sys_values.h"

#include <gtest/gtest.h>

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

}  // namespace netdaq::cli::check
