// A real Prometheus server scrapes `netdaq run --metrics`: its query API returns the received
// packets counter equal to the run's summary (read after the traffic ended, during
// --metrics-linger). The served text also passes promtool. Bounded waits; Prometheus and
// netdaq are always killed and their files removed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "metrics_test_util.h"
#include "test_paths.h"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// ~2.4 s of traffic at 100 Mb/s: scraped while it runs too.
std::string run_config(uint16_t port) {
  return ndqtest::loopback_config(
      port, {.rx_bufs = 16384, .tx_bufs = 4096, .rcvbuf = 33554432, .rate_mbps = 100,
             .run_block = "run:\n  tx_packets: 20000\n  tx_payload_size: 1472\n  stats_interval_ms: 500\n  drain_ms: 200\n"});
}

std::string prometheus_config(uint16_t target_port) {
  return "global:\n"
         "  scrape_interval: 1s\n"
         "  scrape_timeout: 1s\n"
         "scrape_configs:\n"
         "  - job_name: netdaq\n"
         "    static_configs:\n"
         "      - targets: ['127.0.0.1:" + std::to_string(target_port) + "']\n";
}

// The value of an instant query's single series, or nullopt (no answer / no series yet).
std::optional<std::string> query_one(uint16_t prom_port, const std::string& encoded_query) {
  const auto r = ndqtest::http_get("127.0.0.1", prom_port, "/api/v1/query?query=" + encoded_query);
  if (r.status != 200) return std::nullopt;
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded() || j.value("status", "") != "success") return std::nullopt;
  const auto& res = j["data"]["result"];
  if (!res.is_array() || res.size() != 1) return std::nullopt;
  return res[0]["value"][1].get<std::string>();
}

// The rx queue's packets in the run's JSON summary, once the file is complete.
std::optional<uint64_t> summary_rx_packets(const fs::path& json) {
  const auto j = nlohmann::json::parse(ndqtest::read_file(json), nullptr, false);
  if (j.is_discarded() || !j.contains("queues")) return std::nullopt;
  for (const auto& q : j["queues"])
    if (q.value("direction", "") == "rx" && q.value("name", "") == "receiver/rx0") return q["packets"].get<uint64_t>();
  return std::nullopt;
}

template <class F>
bool wait_until(std::chrono::milliseconds timeout, F&& ok) {
  const auto end = Clock::now() + timeout;
  while (Clock::now() < end) {
    if (ok()) return true;
    std::this_thread::sleep_for(200ms);
  }
  return ok();
}

}  // namespace

TEST(MetricsPrometheus, ScrapesTheFinalCounterOfARun) {
  NDQ_REQUIRE_TOOL("prometheus", "prometheus");
  NDQ_REQUIRE_TOOL("promtool", "prometheus");
  ndqtest::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const uint16_t metrics_port = ndqtest::free_port(SOCK_STREAM);
  const uint16_t prom_port = ndqtest::free_port(SOCK_STREAM);
  ndqtest::write_file(dir.path() / "prometheus.yml", prometheus_config(metrics_port));
  ndqtest::write_file(dir.path() / "run.yaml", run_config(ndqtest::free_port(SOCK_DGRAM)));

  ndqtest::Child prom({"prometheus", "--config.file=" + (dir.path() / "prometheus.yml").string(),
                       "--storage.tsdb.path=" + (dir.path() / "tsdb").string(),
                       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port), "--log.level=warn"},
                      dir.path() / "prometheus.log");
  ASSERT_TRUE(wait_until(20s, [&] { return ndqtest::http_get("127.0.0.1", prom_port, "/-/ready").status == 200; }))
      << "Prometheus not ready in 20 s:\n" << prom.log();

  const fs::path json = dir.path() / "summary.json";
  ndqtest::Child run({NETDAQ_CLI, "run", (dir.path() / "run.yaml").string(), "-q", "--json", json.string(),
                      "--metrics", "127.0.0.1:" + std::to_string(metrics_port), "--metrics-linger", "30"},
                     dir.path() / "netdaq.log");
  std::optional<uint64_t> expected;
  ASSERT_TRUE(wait_until(20s, [&] { return (expected = summary_rx_packets(json)).has_value(); }))
      << "no summary in 20 s:\n" << run.log();
  ASSERT_GT(*expected, 0u) << run.log();
  ASSERT_TRUE(run.running()) << "netdaq did not linger:\n" << run.log();

  // The text the run serves after the traffic: the summary's count, and promtool is happy.
  const auto served = ndqtest::http_get("127.0.0.1", metrics_port, "/metrics");
  ASSERT_EQ(served.status, 200) << run.log();
  EXPECT_NE(served.body.find("netdaq_rx_packets_total{interface=\"receiver\",queue=\"receiver/rx0\"} " +
                             std::to_string(*expected) + "\n"),
            std::string::npos)
      << served.body;
  ndqtest::write_file(dir.path() / "served.txt", served.body);
  const std::string check = "promtool check metrics < '" + (dir.path() / "served.txt").string() + "' > '" +
                            (dir.path() / "promtool.out").string() + "' 2>&1";
  const int st = std::system(check.c_str());
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << ndqtest::read_file(dir.path() / "promtool.out");

  // Prometheus' view: the counter of its latest scrape equals the summary.
  const std::string q = "netdaq_rx_packets_total%7Bjob%3D%22netdaq%22%2Cqueue%3D%22receiver%2Frx0%22%7D";
  std::optional<std::string> got;
  const bool same = wait_until(15s, [&] { return (got = query_one(prom_port, q)) == std::to_string(*expected); });
  EXPECT_TRUE(same) << "Prometheus says " << got.value_or("nothing") << ", the summary " << *expected << "\n"
                    << prom.log();

  // Ctrl-C ends the linger; the run still exits 0.
  run.signal(SIGINT);
  const auto code = run.wait_for(10s);
  EXPECT_EQ(code, std::optional<int>(0)) << run.log();
  EXPECT_NE(run.log().find("metrics: serving the final counters at http://127.0.0.1:"), std::string::npos) << run.log();
  prom.signal(SIGTERM);
  EXPECT_TRUE(prom.wait_for(10s).has_value()) << "Prometheus did not stop on SIGTERM (killed)";
}
