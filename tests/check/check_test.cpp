// Runs `netdaq check` (docs/cli.md): on this machine (loopback, and a veth pair in a network
// namespace), and on recorded snapshots (tests/check/fixtures) for the failures no machine
// here can show: each must name the right fix.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "../require_env.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Result {
  int status = -1;
  std::string out;  // stdout (stderr too unless split)
};

// Runs a shell command line; its stdout (and stderr with merge) and exit status.
Result sh(const std::string& cmd, bool merge = true) {
  Result r;
  FILE* p = popen((cmd + (merge ? " 2>&1" : "")).c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

std::string cli() { return std::string("'") + NETDAQ_CLI + "'"; }
std::string fixture(const std::string& name) {
  return std::string(NETDAQ_SOURCE_DIR) + "/tests/check/fixtures/" + name;
}

// `netdaq check --json ARGS`: the parsed report (stdout only) and the exit status.
struct Report {
  int status = -1;
  json j;
  std::string text;
};
Report check_json(const std::string& args, const std::string& prefix = {}) {
  Report r;
  const Result res = sh(prefix + cli() + " check --json " + args, false);
  r.status = res.status;
  r.text = res.out;
  try {
    r.j = json::parse(res.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON (" << e.what() << "): " << res.out;
    r.j = json::object();
  }
  return r;
}
Report check_fixture(const std::string& name, const std::string& extra = {}) {
  return check_json("--root '" + fixture(name) + "' " + extra + " '" + fixture(name + ".yaml") + "'");
}

// The first check called `name` (whose subject contains `subject`); fails the test when none.
json find(const Report& r, const std::string& name, const std::string& subject = {}) {
  for (const auto& c : r.j.value("checks", json::array()))
    if (c.value("name", "") == name && c.value("subject", "").find(subject) != std::string::npos) return c;
  ADD_FAILURE() << "no check " << name << " [" << subject << "] in " << r.text;
  return json::object({{"status", "?"}, {"what", ""}, {"fix", ""}});
}

#define EXPECT_CHECK(report, name, want_status, fix_part)                                      \
  do {                                                                                         \
    const json c_ = find(report, name);                                                        \
    EXPECT_EQ(c_.value("status", ""), want_status) << c_.dump(2);                              \
    EXPECT_NE(c_.value("fix", "").find(fix_part), std::string::npos) << "fix: " << c_.dump(2); \
  } while (0)

int count(const Report& r, const std::string& status) {
  int n = 0;
  for (const auto& c : r.j.value("checks", json::array())) n += c.value("status", "") == status;
  return n;
}

// The rule of docs/cli.md: 1 any fail, else 2 with --strict and a warning, else 0.
int expected_exit(const Report& r, bool strict) {
  if (count(r, "fail")) return 1;
  return strict && count(r, "warn") ? 2 : 0;
}

bool root_or_fail(const char* what) {
  if (geteuid() == 0) return true;
  if (ndqtest::in_ci()) ADD_FAILURE() << what << " needs root (CI=true: no skipping)";
  return false;
}

}  // namespace

TEST(CheckFixture, ProprietaryDriverWithoutPeermemFails) {
  const Report r = check_fixture("gpu-proprietary");
  EXPECT_EQ(r.status, 1) << r.text;
  EXPECT_CHECK(r, "gpu.driver", "warn", "kernel-open");
  EXPECT_CHECK(r, "gpu.peermem", "fail", "modprobe nvidia_peermem");
  EXPECT_CHECK(r, "gpu.bar1", "fail", "Above 4G Decoding");
  EXPECT_NE(find(r, "gpu.bar1").value("what", "").find("256 MiB < 512 MiB"), std::string::npos) << r.text;
  EXPECT_EQ(find(r, "gpu.attributes").value("status", ""), "skip");  // live-only under --root
  EXPECT_EQ(find(r, "gpu.dmabuf_probe").value("status", ""), "skip");
  const json pcie = find(r, "topology.pcie");
  EXPECT_EQ(pcie.value("status", ""), "pass");
  EXPECT_NE(pcie.value("what", "").find("same PCIe switch"), std::string::npos) << pcie.dump(2);
  const json gid = find(r, "nic.rdma");
  EXPECT_EQ(gid.value("status", ""), "pass");
  EXPECT_NE(gid.value("what", "").find("mlx5_0 port 1 GID index 3 (RoCE v2)"), std::string::npos) << gid.dump(2);
  EXPECT_EQ(find(r, "nic.mtu").value("status", ""), "pass");  // 9000 >= rdma mtu 4096 + headers
}

TEST(CheckFixture, GpuWithoutDriverFails) {
  // The GPU server's snapshot without its driver: GPUs on the bus, no NVIDIA module loaded.
  const fs::path root = fs::temp_directory_path() / ("netdaq_check_nodriver_" + std::to_string(getpid()));
  fs::copy(fixture("gpu-proprietary"), root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::remove_all(root / "proc/driver/nvidia");
  fs::remove_all(root / "sys/module/nvidia");
  const Report r = check_json("--root '" + root.string() + "' '" + fixture("gpu-proprietary.yaml") + "'");
  fs::remove_all(root);
  EXPECT_EQ(r.status, 1) << r.text;
  EXPECT_CHECK(r, "gpu.driver", "fail", "kernel-open");
  EXPECT_NE(find(r, "gpu.driver").value("what", "").find("1 NVIDIA GPU(s) on the PCI bus but no NVIDIA kernel driver"),
            std::string::npos)
      << r.text;
}

TEST(CheckFixture, UntunedNicAndHostNameEachFix) {
  const Report r = check_fixture("untuned-nic");
  EXPECT_EQ(r.status, 1) << r.text;
  EXPECT_CHECK(r, "nic.mtu", "fail", "ip link set dev ens2f0 mtu 9000");
  EXPECT_CHECK(r, "nic.offloads", "warn", "ethtool -K ens2f0 gro off");
  EXPECT_CHECK(r, "nic.rings", "warn", "ethtool -G ens2f0 rx 8192");
  EXPECT_CHECK(r, "nic.pause", "warn", "ethtool -A ens2f0 rx on tx on");
  EXPECT_CHECK(r, "nic.queues", "fail", "ethtool -L ens2f0 combined 4");
  EXPECT_CHECK(r, "nic.xdp", "pass", "");
  EXPECT_CHECK(r, "cpu.isolation", "warn", "isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3");
  EXPECT_CHECK(r, "cpu.governor", "warn", "cpupower frequency-set -g performance");
  EXPECT_CHECK(r, "cpu.irq_affinity", "warn", "echo 0-1 > /proc/irq/50/smp_affinity_list");
  EXPECT_CHECK(r, "cpu.hugepages", "fail", "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
  EXPECT_CHECK(r, "cpu.memlock", "fail", "ulimit -l unlimited");
  EXPECT_CHECK(r, "cpu.capabilities", "fail", "setcap cap_net_admin");
  EXPECT_CHECK(r, "cpu.iommu", "warn", "iommu=pt");
  EXPECT_EQ(find(r, "gpu.driver").value("status", ""), "skip");  // no NVIDIA GPU on that bus
  EXPECT_EQ(find(r, "gpu.clocks").value("status", ""), "skip");
}

TEST(CheckFixture, PciePayloadBelowWhatThePathSupportsWarns) {
  // The E810 runs MPS 128 (supports 512) under a root port supporting and running 256, MRRS 512.
  const Report r = check_fixture("untuned-nic");
  const json p = find(r, "topology.pcie_payload", "ens2f0");
  EXPECT_EQ(p.value("status", ""), "warn") << p.dump(2);
  const std::string what = p.value("what", "");
  for (const char* s : {"0000:01:00.0: MPS 128 (supports 512), MRRS 512", "upstream bridge 0000:00:02.0: MPS 256",
                        "MPS 128 < 256 the path supports", "MRRS 512 < 4096"})
    EXPECT_NE(what.find(s), std::string::npos) << s << " in " << p.dump(2);
  const std::string fix = p.value("fix", "");
  // 0x2910 -> 0x5930: MRRS field 2 -> 5 (4096), MPS field 0 -> 1 (256), every other bit kept.
  EXPECT_EQ(fix.rfind("setpci -s 0000:01:00.0 CAP_EXP+8.w=5930 ", 0), 0u) << p.dump(2);
  EXPECT_NE(fix.find("bits 14:12 MRRS 2 -> 5 = 4096 bytes, bits 7:5 MPS 0 -> 1 = 256 bytes"), std::string::npos)
      << p.dump(2);
  EXPECT_NE(fix.find("does not survive a reboot"), std::string::npos) << p.dump(2);
}

TEST(CheckFixture, PciePayloadShortConfigSpaceSkips) {
  // Without root, sysfs gives the first 64 bytes of config space: the PCI Express capability is beyond.
  const fs::path root = fs::temp_directory_path() / ("netdaq_check_short_" + std::to_string(getpid()));
  fs::copy(fixture("untuned-nic"), root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::resize_file(root / "sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0/config", 64);
  const Report r = check_json("--root '" + root.string() + "' '" + fixture("untuned-nic.yaml") + "'");
  fs::remove_all(root);
  const json p = find(r, "topology.pcie_payload", "ens2f0");
  EXPECT_EQ(p.value("status", ""), "skip") << p.dump(2);
  EXPECT_NE(p.value("what", "").find("config space reads 64 bytes"), std::string::npos) << p.dump(2);
  EXPECT_NE(p.value("what", "").find("root"), std::string::npos) << p.dump(2);
}

TEST(CheckFixture, NumaMismatchWarnsAndStrictExitsTwo) {
  const Report r = check_fixture("numa-mismatch");
  EXPECT_EQ(count(r, "fail"), 0) << r.text;
  EXPECT_EQ(r.status, 0) << r.text;
  const json pcie = find(r, "topology.pcie");
  EXPECT_EQ(pcie.value("status", ""), "warn");
  EXPECT_NE(pcie.value("what", "").find("(SYS)"), std::string::npos) << pcie.dump(2);
  const json numa = find(r, "topology.numa");
  EXPECT_EQ(numa.value("status", ""), "warn");
  EXPECT_NE(numa.value("what", "").find("polls on core 2 (node 0)"), std::string::npos) << numa.dump(2);
  EXPECT_NE(numa.value("what", "").find("region 'staging' on gpu 0 (node 0)"), std::string::npos) << numa.dump(2);
  EXPECT_NE(numa.value("fix", "").find("to a core of node 1 (8-15)"), std::string::npos) << numa.dump(2);
  for (const char* pass : {"gpu.driver", "gpu.peermem", "gpu.bar1", "cpu.isolation", "cpu.governor", "cpu.iommu",
                           "cpu.irq_affinity", "cpu.hugepages", "nic.driver", "nic.mtu"})
    EXPECT_EQ(find(r, pass).value("status", ""), "pass") << pass << ": " << find(r, pass).dump(2);
  // The ConnectX at MPS 256 (all its root port supports) and MRRS 4096; the GPU at MPS 256.
  const json nic_payload = find(r, "topology.pcie_payload", "ens5f0np0");
  EXPECT_EQ(nic_payload.value("status", ""), "pass") << nic_payload.dump(2);
  EXPECT_NE(nic_payload.value("what", "").find("MPS 256 (supports 512), MRRS 4096"), std::string::npos)
      << nic_payload.dump(2);
  EXPECT_EQ(find(r, "topology.pcie_payload", "gpu 0").value("status", ""), "pass") << r.text;
  const json clocks = find(r, "gpu.clocks", "gpu 0");  // live only (NVML)
  EXPECT_EQ(clocks.value("status", ""), "skip") << clocks.dump(2);
  EXPECT_NE(clocks.value("what", "").find("--root"), std::string::npos) << clocks.dump(2);
  const Report strict = check_fixture("numa-mismatch", "--strict");
  EXPECT_EQ(strict.status, 2) << strict.text;
  EXPECT_EQ(strict.j.value("exit_code", -1), 2);
}

TEST(CheckFixture, TextReportShowsWhyAndFix) {
  const Result r = sh(cli() + " check --root '" + fixture("untuned-nic") + "' '" + fixture("untuned-nic.yaml") + "'");
  EXPECT_EQ(r.status, 1) << r.out;
  for (const char* s :
       {"\ngpudirect\n", "\ntopology\n", "\ncpu\n", "\nnic\n", "  fail  nic.mtu [ens2f0]",
        "        why: a packet larger than the MTU", "        fix: ip link set dev ens2f0 mtu 9000", "summary: "})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << " in:\n" << r.out;
}

TEST(CheckFixture, BadConfigNamesTheFile) {
  const Result missing = sh(cli() + " check /nonexistent/netdaq-check.yaml");
  EXPECT_EQ(missing.status, 1) << missing.out;
  EXPECT_NE(missing.out.find("/nonexistent/netdaq-check.yaml"), std::string::npos) << missing.out;
  const fs::path bad = fs::temp_directory_path() / ("netdaq_check_bad_" + std::to_string(getpid()) + ".yaml");
  std::ofstream(bad) << "memory_regions:\n  - {name: r, kind: hots}\ninterfaces: []\n";
  const Result invalid = sh(cli() + " check '" + bad.string() + "'");
  fs::remove(bad);
  EXPECT_EQ(invalid.status, 1) << invalid.out;
  EXPECT_NE(invalid.out.find(bad.string() + ":2:"), std::string::npos) << invalid.out;  // file:line:col
  EXPECT_NE(invalid.out.find("kind"), std::string::npos) << invalid.out;
  const Result no_root = sh(cli() + " check --root /nonexistent/snapshot");
  EXPECT_EQ(no_root.status, 1) << no_root.out;
  EXPECT_NE(no_root.out.find("/nonexistent/snapshot"), std::string::npos) << no_root.out;
}

TEST(CheckMachine, LoopbackReportHasEveryCategoryAndTheExitRule) {
  const std::string cfg = std::string(NETDAQ_SOURCE_DIR) + "/examples/loopback.yaml";
  const Report r = check_json("'" + cfg + "'");
  std::set<std::string> categories;
  for (const auto& c : r.j.value("checks", json::array())) {
    categories.insert(c.value("category", ""));
    EXPECT_TRUE(std::set<std::string>({"pass", "warn", "fail", "skip"}).count(c.value("status", ""))) << c.dump();
    EXPECT_FALSE(c.value("what", "").empty()) << c.dump();
    if (c.value("status", "") == "fail") {
      EXPECT_FALSE(c.value("fix", "").empty()) << c.dump();
    }
  }
  EXPECT_EQ(categories, (std::set<std::string>{"gpudirect", "topology", "cpu", "nic"})) << r.text;
  EXPECT_EQ(r.j.value("command", ""), "check");
  EXPECT_EQ(r.status, expected_exit(r, false)) << r.text;
  EXPECT_EQ(r.j.value("exit_code", -1), r.status);
  const Report strict = check_json("--strict '" + cfg + "'");
  EXPECT_EQ(strict.status, expected_exit(strict, true)) << strict.text;
  // lo carries both loopback interfaces.
  const json link = find(r, "nic.link", "lo");
  EXPECT_EQ(link.value("status", ""), "pass") << link.dump(2);
  EXPECT_EQ(find(r, "topology.pcie_payload", "lo").value("status", ""), "skip");  // no PCIe link
  // Every GPU gets a clocks check (NVML), skipped with a reason where there is no GPU or NVML.
  const json clocks = find(r, "gpu.clocks");
  EXPECT_FALSE(clocks.value("what", "").empty()) << clocks.dump(2);
  if (clocks.value("status", "") == "warn") {
    EXPECT_NE(clocks.value("fix", "").find("nvidia-smi -i "), std::string::npos) << clocks.dump(2);
  }
}

TEST(CheckMachine, WithoutConfigChecksNicsThatAreUpButLo) {
  const Report r = check_json("");
  EXPECT_EQ(r.status, expected_exit(r, false)) << r.text;
  EXPECT_EQ(r.j.value("config", ""), "no config");
  for (const auto& c : r.j.value("checks", json::array()))
    if (c.value("category", "") == "nic") {
      EXPECT_NE(c.value("subject", ""), "lo") << c.dump();
    }
}

TEST(CheckMachine, VethPairInNamespace) {
  if (!root_or_fail("a network namespace")) GTEST_SKIP() << "needs root (ip netns add)";
  const std::string ns = "ndqchk" + std::to_string(getpid());
  struct Cleanup {
    std::string ns;
    ~Cleanup() { sh("ip netns del " + ns); }
  } cleanup{ns};
  // nsenter enters only the network namespace: `ip -n` and `ip netns exec` also remount / and
  // /sys, which fails where / is not a mount point (a chroot, as in the fresh-root check).
  const std::string in_ns = "nsenter --net=/run/netns/" + ns + " -- ";
  const Result setup =
      sh("ip netns add " + ns + " && ip link add ndqc0 netns " + ns + " type veth peer name ndqc1 netns " + ns +
         " && " + in_ns + "ip addr add 10.231.0.1/24 dev ndqc0 && " + in_ns + "ip link set ndqc0 up && " + in_ns +
         "ip link set ndqc1 up && " + in_ns + "ip link set ndqc0 mtu 1500");
  ASSERT_EQ(setup.status, 0) << setup.out;
  const fs::path cfg = fs::temp_directory_path() / ("netdaq_check_veth_" + std::to_string(getpid()) + ".yaml");
  std::ofstream(cfg) << "memory_regions:\n  - {name: rx, kind: host, buf_size: 9216, num_bufs: 4096}\n"
                        "  - {name: tx, kind: host, buf_size: 9216, num_bufs: 4096}\n"
                        "interfaces:\n  - name: receiver\n    engine: socket\n    address: udp://10.231.0.1:47000\n"
                        "    rx:\n      queues:\n        - {id: 0, memory_regions: [rx]}\n"
                        "  - name: sender\n    engine: socket\n    tx:\n      destination: udp://10.231.0.1:47000\n"
                        "      queues:\n        - {id: 0, memory_regions: [tx]}\n"
                        "run: {tx_payload_size: 8000}\n";  // 8028-byte packets: more than ndqc0's MTU
  // /sys/class/net shows the namespace that mounted sysfs: netdaq check gets its own sysfs,
  // mounted in a private mount namespace (nothing propagates back to this one's /sys).
  const std::string own_sysfs =
      "unshare --mount --propagation unchanged sh -c 'mount --make-rprivate /sys && mount -t sysfs sysfs /sys && "
      "exec \"$0\" \"$@\"' ";
  const Report r = check_json("'" + cfg.string() + "'", in_ns + own_sysfs);
  fs::remove(cfg);
  EXPECT_EQ(r.status, 1) << r.text;
  const json driver = find(r, "nic.driver", "ndqc0");
  EXPECT_NE(driver.value("what", "").find("veth (virtual device)"), std::string::npos) << driver.dump(2);
  EXPECT_EQ(find(r, "nic.link", "ndqc0").value("status", ""), "pass");
  const json mtu = find(r, "nic.mtu", "ndqc0");
  EXPECT_EQ(mtu.value("status", ""), "fail") << mtu.dump(2);
  EXPECT_NE(mtu.value("fix", "").find("ip link set dev ndqc0 mtu 9000"), std::string::npos) << mtu.dump(2);
  // The socket engine's UDP GRO wants GRO on: veth starts with it off.
  const json gro = find(r, "nic.offloads", "ndqc0");
  EXPECT_TRUE(gro.value("status", "") == "warn" || gro.value("status", "") == "pass") << gro.dump(2);
  EXPECT_EQ(find(r, "nic.xdp", "ndqc0").value("status", ""), "pass");
  EXPECT_EQ(r.status, expected_exit(r, false));
}
