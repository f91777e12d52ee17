// promtool (Prometheus' own checker) accepts what a real session serves: a socket-engine
// session on loopback carries packets, its MetricsServer is fetched over HTTP.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "metrics_test_util.h"
#include "netdaq/netdaq.h"

namespace {

using namespace std::chrono_literals;

// Sends count packets of 200 bytes and receives what arrives within 5 s; returns received.
uint64_t carry(netdaq::Session& s, uint64_t count) {
  auto& in = s.rx_queue("receiver", 0);
  auto& out = s.tx_queue("sender", 0);
  uint64_t queued = 0, received = 0;
  netdaq::TxBurst tx;
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (received < count && std::chrono::steady_clock::now() < deadline) {
    if (!tx && queued < count) {
      tx = out.allocate(count - queued);
      for (auto& p : tx) {
        p.set_size(200);
        ++queued;
      }
    }
    if (tx) tx.send();
    if (auto b = in.poll())
      received += b.size();
    else
      std::this_thread::sleep_for(50us);
  }
  return received;
}

int promtool_check(const std::filesystem::path& metrics, const std::filesystem::path& out) {
  const std::string cmd = "promtool check metrics < '" + metrics.string() + "' > '" + out.string() + "' 2>&1";
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace

TEST(MetricsPromtool, RealSessionPassesPromtool) {
  NDQ_REQUIRE_TOOL("promtool", "prometheus");
  ndqtest::TempDir dir;
  netdaq::Session session(netdaq::Config::parse(ndqtest::loopback_config(ndqtest::free_port(SOCK_DGRAM)), "promtool_test"));
  netdaq::MetricsServer srv("127.0.0.1:0", session);
  const uint64_t received = carry(session, 2000);
  ASSERT_GT(received, 0u);
  const auto r = ndqtest::http_get("127.0.0.1", srv.port(), "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("netdaq_rx_packets_total{interface=\"receiver\",queue=\"receiver/rx0\"} " +
                        std::to_string(received) + "\n"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("netdaq_rx_drops_total{interface=\"receiver\",queue=\"receiver/rx0\",reason=\"kernel\"}"),
            std::string::npos);
  EXPECT_NE(r.body.find("netdaq_tx_packets_total{interface=\"sender\",queue=\"sender/tx0\"} "), std::string::npos);
  ndqtest::write_file(dir.path() / "metrics.txt", r.body);
  EXPECT_EQ(promtool_check(dir.path() / "metrics.txt", dir.path() / "promtool.out"), 0)
      << ndqtest::read_file(dir.path() / "promtool.out") << "\n" << r.body;
}

// Pipeline families, and the span modes' per-stream ones, have no session to come from here
// (no GPU needed): a snapshot of a span-mode pipeline with two streams and a slot-mode one.
TEST(MetricsPromtool, PipelineAndStreamFamiliesPassPromtool) {
  NDQ_REQUIRE_TOOL("promtool", "prometheus");
  ndqtest::TempDir dir;
  netdaq::MetricsSnapshot s;
  netdaq::PipelineMetrics p;
  p.interface = "receiver";
  p.queue = "receiver/rx0";
  p.stats.packets_in = 30;
  p.stats.packets_placed = 30;
  for (uint64_t key : {4096u, 7u}) {
    netdaq::gpu::StreamStats st;
    st.stream = key;
    st.packets = st.packets_placed = 15;
    st.frames_complete = 3;
    p.streams.push_back(st);
  }
  s.pipelines.push_back(p);
  p.queue = "receiver/rx1";
  p.streams.clear();
  s.pipelines.push_back(p);
  const std::string text = netdaq::prometheus_text(s);
  ASSERT_NE(text.find("netdaq_gpu_stream_packets_total{interface=\"receiver\",queue=\"receiver/rx0\",stream=\"7\","
                      "result=\"placed\"} 15\n"),
            std::string::npos)
      << text;
  ndqtest::write_file(dir.path() / "metrics.txt", text);
  EXPECT_EQ(promtool_check(dir.path() / "metrics.txt", dir.path() / "promtool.out"), 0)
      << ndqtest::read_file(dir.path() / "promtool.out") << "\n" << text;
}

TEST(MetricsPromtool, PromtoolFlagsABrokenText) {  // the checker above checks something
  NDQ_REQUIRE_TOOL("promtool", "prometheus");
  ndqtest::TempDir dir;
  ndqtest::write_file(dir.path() / "bad.txt", "# TYPE netdaq_rx_packets counter\nnetdaq_rx_packets 1\n");
  EXPECT_NE(promtool_check(dir.path() / "bad.txt", dir.path() / "out"), 0) << ndqtest::read_file(dir.path() / "out");
}
