// `netdaq run --metrics`: what a user sees when the address is good or bad.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <regex>

#include "metrics_test_util.h"
#include "netdaq/metrics.h"
#include "test_paths.h"

namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string short_run(uint16_t port) {
  return ndqtest::loopback_config(port, {.rate_mbps = 200,
                                         .run_block = "run:\n  tx_packets: 2000\n  tx_payload_size: 1000\n  drain_ms: 100\n"});
}

struct RunOutput {
  int code = -1;
  std::string out;
};

RunOutput netdaq_run(const ndqtest::TempDir& dir, std::vector<std::string> extra) {
  ndqtest::write_file(dir.path() / "run.yaml", short_run(ndqtest::free_port(SOCK_DGRAM)));
  std::vector<std::string> argv = {NETDAQ_CLI, "run", (dir.path() / "run.yaml").string(), "-q"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  ndqtest::Child c(argv, dir.path() / "out.log");
  RunOutput r;
  r.code = c.wait_for(30s).value_or(-1);
  r.out = c.log();
  return r;
}

}  // namespace

TEST(CliMetrics, ServesOnAFreePortAndSaysWhere) {
  ndqtest::TempDir dir;
  const RunOutput r = netdaq_run(dir, {"--metrics", "127.0.0.1:0"});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nmetrics: http://127\\.0\\.0\\.1:[1-9][0-9]*/metrics\n"))) << r.out;
  EXPECT_EQ(r.out.find("serving the final counters"), std::string::npos) << "lingered without --metrics-linger";
}

TEST(CliMetrics, BadAddressStopsBeforeTraffic) {
  ndqtest::TempDir dir;
  RunOutput r = netdaq_run(dir, {"--metrics", "127.0.0.1"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("netdaq run: metrics address '127.0.0.1': no port"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("summary"), std::string::npos) << r.out;
  r = netdaq_run(dir, {"--metrics", "no-such-host.invalid:0"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("does not resolve"), std::string::npos) << r.out;
}

TEST(CliMetrics, TakenPortIsRefused) {
  netdaq::MetricsServer holder("127.0.0.1:0", [] { return netdaq::MetricsSnapshot{}; });
  ndqtest::TempDir dir;
  const std::string addr = "127.0.0.1:" + std::to_string(holder.port());
  const RunOutput r = netdaq_run(dir, {"--metrics", addr});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("metrics address '" + addr + "': cannot listen: Address already in use"), std::string::npos)
      << r.out;
}

TEST(CliMetrics, LingerNeedsMetrics) {
  ndqtest::TempDir dir;
  const RunOutput r = netdaq_run(dir, {"--metrics-linger", "1"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("--metrics"), std::string::npos) << r.out;
}

TEST(CliMetrics, LingersThenExits) {
  ndqtest::TempDir dir;
  const auto t0 = std::chrono::steady_clock::now();
  const RunOutput r = netdaq_run(dir, {"--metrics", "127.0.0.1:0", "--metrics-linger", "1.5"});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 1500ms);
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("metrics: serving the final counters at http://127\\.0\\.0\\.1:[0-9]+/metrics for 1\\.5 s more")))
      << r.out;
}
