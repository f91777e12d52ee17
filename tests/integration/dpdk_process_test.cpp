// The dpdk engine as whole processes (the netdaq CLI): two at once, hugepages taken and given
// back, and every way a start can fail or a process can die leaves no EAL runtime directory
// and no hugepage in use behind.
#include <signal.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "dpdk_util.h"
#include "test_paths.h"

using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

std::string to_text(const Bytes& b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

struct RingRun {
  std::string device = "net_ring0";
  std::string eal = "{hugepages: false, memory_mb: 128}";
  uint64_t tx_packets = 50000;
  double duration_s = 20;
  std::string yaml() const {
    return "memory_regions:\n"
           "  - {name: rx, kind: host, buf_size: 2048, num_bufs: 8192}\n"
           "  - {name: tx, kind: host, buf_size: 2048, num_bufs: 8192}\n"
           "interfaces:\n"
           "  - name: ring\n    engine: dpdk\n    address: " + device + "\n"
           "    rx:\n      queues:\n        - {id: 0, batch_size: 64, memory_regions: [rx]}\n" +
           (tx_packets ? "    tx:\n      destination: udp://10.0.0.2:5000\n"
                         "      queues:\n        - {id: 0, batch_size: 64, memory_regions: [tx]}\n"
                       : std::string()) +
           "    dpdk: {dst_mac: \"02:00:00:00:00:02\", src_ip: 10.0.0.1, rx_desc: 512, tx_desc: 512}\n"
           "eal: " + eal + "\n"
           "run:\n  duration_s: " + std::to_string(duration_s) + "\n  tx_packets: " + std::to_string(tx_packets) +
           "\n  drain_ms: 100\nlog:\n  level: info\n";
  }
};

struct CliRun {
  TempFile cfg, out;
  std::unique_ptr<Subprocess> child;
  explicit CliRun(const std::string& yaml, const std::vector<std::string>& extra_args = {}) {
    std::ofstream(cfg.path) << yaml;
    // stderr (logs, errors) into the same file; exec keeps the pid netdaq's.
    std::vector<std::string> argv{"sh", "-c", "exec \"$0\" run \"$@\" 2>&1", NETDAQ_CLI, cfg.path};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    child = std::make_unique<Subprocess>(argv, out.path);
  }
  int wait(std::chrono::milliseconds t = 60s) { return child->wait(t); }
  std::string output() const { return to_text(read_file(out.path)); }
};

// `netdaq run --json FILE`'s summary (docs/cli.md), or a failure naming what is wrong with it.
::testing::AssertionResult read_summary(const std::string& path, nlohmann::json* j) {
  try {
    *j = nlohmann::json::parse(to_text(read_file(path)));
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "no JSON summary in " << path << ": " << e.what();
  }
  return ::testing::AssertionSuccess();
}

std::string runtime_dir(pid_t pid) { return "/var/run/dpdk/netdaq-" + std::to_string(pid); }

// A queue of the summary's "queues" as a QueueStats: its counters and every drop reason.
netdaq::QueueStats queue_stats(const nlohmann::json& q) {
  netdaq::QueueStats s;
  s.queue = q.at("name").get<std::string>();
  s.interface = q.at("interface").get<std::string>();
  s.is_rx = q.at("direction").get<std::string>() == "rx";
  s.packets = q.at("packets").get<uint64_t>();
  s.bytes = q.at("bytes").get<uint64_t>();
  s.bursts = q.at("bursts").get<uint64_t>();
  s.copies = q.at("copies").get<uint64_t>();
  s.errors = q.at("errors").get<uint64_t>();
  s.connections = q.at("connections").get<uint64_t>();
  const auto& drops = q.at("drops");
  for (size_t r = 0; r < netdaq::kDropReasons; ++r)
    s.drops[r] = drops.at(netdaq::to_string(static_cast<netdaq::DropReason>(r))).get<uint64_t>();
  return s;
}

// A run of one tx queue sending `sent` packets to one rx queue: both accounted for every one.
::testing::AssertionResult run_accounted(const nlohmann::json& j, uint64_t sent) {
  try {
    std::vector<netdaq::QueueStats> rx, tx;
    for (const auto& q : j.at("queues")) (q.at("direction") == "rx" ? rx : tx).push_back(queue_stats(q));
    if (rx.size() != 1 || tx.size() != 1)
      return ::testing::AssertionFailure() << rx.size() << " rx and " << tx.size() << " tx queues: " << j.dump(1);
    if (auto r = sender_accounted(sent, tx[0]); !r) return r;
    return all_accounted(sent, rx[0]);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "the summary's queues: " << e.what() << "\n" << j.dump(1);
  }
}

}  // namespace

TEST(DpdkProcess, TwoProcessesAtOnceEachLoseNothing) {
  NDQ_REQUIRE_DPDK();
  RingRun r;
  r.tx_packets = 200000;
  TempFile json1, json2;
  CliRun one(r.yaml(), {"--json", json1.path}), two(r.yaml(), {"--json", json2.path});
  // Both run at the same time: each has its own EAL runtime directory.
  bool both = false;
  for (auto t0 = std::chrono::steady_clock::now(); !both && std::chrono::steady_clock::now() - t0 < 10s;) {
    both = std::filesystem::exists(runtime_dir(one.child->pid())) && std::filesystem::exists(runtime_dir(two.child->pid()));
    if (!both) std::this_thread::sleep_for(5ms);
  }
  const pid_t p1 = one.child->pid(), p2 = two.child->pid();
  EXPECT_EQ(one.wait(), 0) << one.output();
  EXPECT_EQ(two.wait(), 0) << two.output();
  EXPECT_TRUE(both) << "the two processes were not running at the same time";
  for (const auto& [run, json] : {std::pair{&one, &json1}, std::pair{&two, &json2}}) {
    nlohmann::json j;
    ASSERT_TRUE(read_summary(json->path, &j)) << run->output();
    EXPECT_TRUE(run_accounted(j, 200000));
    const auto& totals = j.at("totals");
    EXPECT_EQ(totals.at("tx_packets").get<uint64_t>(), 200000u) << j.dump(1);
    EXPECT_EQ(totals.at("rx_packets").get<uint64_t>(), 200000u) << j.dump(1);
    EXPECT_EQ(totals.at("lost").get<uint64_t>(), 0u) << j.dump(1);
    EXPECT_EQ(totals.at("drops").get<uint64_t>(), 0u) << j.dump(1);
    ASSERT_EQ(j.at("streams").size(), 1u) << j.dump(1);
    const auto& stream = j.at("streams").at(0);
    EXPECT_EQ(stream.at("sent").get<uint64_t>(), 200000u) << j.dump(1);
    EXPECT_EQ(stream.at("received").get<uint64_t>(), 200000u) << j.dump(1);
    EXPECT_EQ(stream.at("unique").get<uint64_t>(), 200000u) << j.dump(1);
    EXPECT_TRUE(j.at("ok").get<bool>()) << j.dump(1);
  }
  EXPECT_FALSE(std::filesystem::exists(runtime_dir(p1)));
  EXPECT_FALSE(std::filesystem::exists(runtime_dir(p2)));
}

// `netdaq run` on raw frames (dpdk.raw_frames: frames are counted and released, as testpmd's
// rxonly does, the benchmark's receiver): every frame net_null made is counted once, with its
// 64 bytes (RxBurst::bytes() from the engine), over the run's second.
TEST(DpdkProcess, RawFramesRunCountsEveryFrameAndItsBytes) {
  NDQ_REQUIRE_DPDK();
  const std::string yaml =
      "memory_regions:\n"
      "  - {name: rx, kind: host, buf_size: 2048, num_bufs: 8192}\n"
      "interfaces:\n"
      "  - name: gen\n    engine: dpdk\n    address: \"net_null0,size=64\"\n"
      "    rx:\n      queues:\n        - {id: 0, mode: direct, batch_size: 64, memory_regions: [rx]}\n"
      "    dpdk: {raw_frames: true}\n"
      "eal: {hugepages: false, memory_mb: 128}\n"
      "run: {duration_s: 1}\nlog: {level: warn}\n";
  CliRun run(yaml);
  ASSERT_EQ(run.wait(), 0) << run.output();
  const std::string o = run.output();
  // "  gen/rx0 rx     118,777,216    7,601,741,824     1.00 118.34 Mpps ..."
  std::smatch m;
  ASSERT_TRUE(std::regex_search(o, m, std::regex(R"(gen/rx0 rx +([0-9,]+) +([0-9,]+) +([0-9.]+) )"))) << o;
  auto number = [](std::string t) {
    t.erase(std::remove(t.begin(), t.end(), ','), t.end());
    return std::stoull(t);
  };
  const uint64_t packets = number(m[1]), bytes = number(m[2]);
  const double seconds = std::stod(m[3]);
  EXPECT_GT(packets, 100000u) << o;
  EXPECT_EQ(bytes, 64 * packets) << o;
  EXPECT_GT(seconds, 0.8) << o;
  EXPECT_LT(seconds, 1.5) << o;
  std::smatch port;
  ASSERT_TRUE(std::regex_search(o, port, std::regex(R"(port_ipackets=([0-9,]+))"))) << o;
  EXPECT_EQ(number(port[1]), packets) << "every frame the port received was counted once: " << o;
  EXPECT_NE(o.find("total: lost 0, drops 0"), std::string::npos) << o;
}

TEST(DpdkProcess, HugepagesAreUsedAndGivenBack) {
  NDQ_REQUIRE_DPDK();
  Hugepages hp(160);
  NDQ_REQUIRE(hp.ok(), hp.why());
  const unsigned free_before = Hugepages::free_pages();
  RingRun r;
  r.eal = "{hugepages: true, memory_mb: 256, file_prefix: ndqtest-huge}";
  TempFile json;
  CliRun run(r.yaml(), {"--json", json.path});
  // While it runs, its 128 pages of 2 MiB (memory_mb: 256) are taken from the free ones.
  unsigned fewest_free = free_before;
  int status = -1;
  for (const auto t0 = std::chrono::steady_clock::now(); status == -1 && std::chrono::steady_clock::now() - t0 < 60s;) {
    fewest_free = std::min(fewest_free, Hugepages::free_pages());
    status = run.wait(2ms);
  }
  EXPECT_EQ(status, 0) << run.output();
  EXPECT_LE(fewest_free + 128, free_before) << "the run never held its 256 MB of hugepages: " << free_before
                                            << " free before, never fewer than " << fewest_free << " free during the run";
  const std::string o = run.output();
  EXPECT_NE(o.find("--in-memory"), std::string::npos) << o;
  EXPECT_NE(o.find("total: lost 0, drops 0"), std::string::npos) << o;
  nlohmann::json j;
  const ::testing::AssertionResult summary = read_summary(json.path, &j);
  EXPECT_TRUE(summary) << o;
  if (summary) {
    EXPECT_TRUE(run_accounted(j, r.tx_packets));
  }
  EXPECT_EQ(Hugepages::free_pages(), free_before) << "hugepages still in use after the process ended";
  EXPECT_TRUE(dpdk_files("ndqtest-huge").empty());
}

TEST(DpdkProcess, FailedStartsLeaveNoFilesAndNoHugepages) {
  NDQ_REQUIRE_DPDK();
  Hugepages hp(100);
  NDQ_REQUIRE(hp.ok(), hp.why());
  const unsigned free_before = Hugepages::free_pages();
  RingRun r;
  r.tx_packets = 0;
  r.duration_s = 1;
  {  // Not enough hugepages: refused before EAL starts, with how to reserve them.
    r.eal = "{hugepages: true, memory_mb: " + std::to_string(free_before * 2 + 512) + ", file_prefix: ndqtest-fail}";
    CliRun run(r.yaml());
    EXPECT_NE(run.wait(), 0);
    const std::string o = run.output();
    EXPECT_NE(o.find("Reserve them as root: echo"), std::string::npos) << o;
    EXPECT_NE(o.find("nr_hugepages"), std::string::npos) << o;
    EXPECT_NE(o.find("eal.hugepages: false"), std::string::npos) << o;
  }
  {  // EAL fails after taking its hugepages (a device it cannot create).
    r.eal = "{hugepages: true, memory_mb: 128, file_prefix: ndqtest-fail, args: [\"--vdev=net_nosuchdriver0\"]}";
    CliRun run(r.yaml());
    EXPECT_NE(run.wait(), 0);
    const std::string o = run.output();
    EXPECT_NE(o.find("rte_eal_init failed"), std::string::npos) << o;
    EXPECT_EQ(Hugepages::free_pages(), free_before);
  }
  {  // EAL starts, the interface's device does not exist.
    r.eal = "{hugepages: true, memory_mb: 128, file_prefix: ndqtest-fail}";
    r.device = "net_nosuchdriver1";
    CliRun run(r.yaml());
    EXPECT_NE(run.wait(), 0);
    const std::string o = run.output();
    EXPECT_NE(o.find("DPDK cannot open device 'net_nosuchdriver1'"), std::string::npos) << o;
    EXPECT_EQ(Hugepages::free_pages(), free_before);
  }
  EXPECT_TRUE(dpdk_files("ndqtest-fail").empty()) << dpdk_files("ndqtest-fail").front();
}

TEST(DpdkProcess, TheNextStartRemovesWhatAKilledProcessLeft) {
  NDQ_REQUIRE_DPDK();
  RingRun r;
  r.tx_packets = 0;
  r.duration_s = 60;
  CliRun killed(r.yaml());
  const pid_t killed_pid = killed.child->pid();
  const std::string dir = runtime_dir(killed_pid);
  for (auto t0 = std::chrono::steady_clock::now();
       !std::filesystem::exists(dir) && std::chrono::steady_clock::now() - t0 < 10s;)
    std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(std::filesystem::exists(dir)) << killed.output();
  std::this_thread::sleep_for(200ms);
  ASSERT_EQ(kill(killed_pid, SIGKILL), 0);
  killed.wait(5s);
  ASSERT_TRUE(std::filesystem::exists(dir)) << "SIGKILL gives EAL no chance to clean up";

  r.duration_s = 0.5;
  CliRun next(r.yaml());
  EXPECT_EQ(next.wait(), 0) << next.output();
  EXPECT_FALSE(std::filesystem::exists(dir)) << next.output();
  EXPECT_NE(next.output().find("left by netdaq process " + std::to_string(killed_pid)), std::string::npos)
      << next.output();
}
