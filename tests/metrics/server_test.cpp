// MetricsServer: binds, serves GET /metrics on its thread, reports its port, fails clearly.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

#include "metrics_test_util.h"
#include "netdaq/metrics.h"
#include "netdaq/status.h"

namespace {

netdaq::MetricsSnapshot one_queue(uint64_t packets) {
  netdaq::MetricsSnapshot s;
  netdaq::QueueStats q;
  q.interface = "receiver";
  q.queue = "receiver/rx0";
  q.packets = packets;
  s.queues.push_back(q);
  return s;
}

}  // namespace

TEST(MetricsServer, PortZeroServesFreshSnapshots) {
  std::atomic<uint64_t> n{41};
  netdaq::MetricsServer srv("127.0.0.1:0", [&] { return one_queue(++n); });
  ASSERT_NE(srv.port(), 0);
  EXPECT_EQ(srv.url(), "http://127.0.0.1:" + std::to_string(srv.port()) + "/metrics");
  auto r = ndqtest::http_get("127.0.0.1", srv.port(), "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, netdaq::kPrometheusContentType);
  EXPECT_NE(r.body.find("netdaq_rx_packets_total{interface=\"receiver\",queue=\"receiver/rx0\"} 42\n"), std::string::npos)
      << r.body;
  r = ndqtest::http_get("127.0.0.1", srv.port(), "/metrics");
  EXPECT_NE(r.body.find("queue=\"receiver/rx0\"} 43\n"), std::string::npos) << r.body;
  EXPECT_EQ(srv.scrapes(), 2u);
  EXPECT_EQ(ndqtest::http_get("127.0.0.1", srv.port(), "/").status, 200);
  EXPECT_EQ(ndqtest::http_get("127.0.0.1", srv.port(), "/nothing").status, 404);
}

TEST(MetricsServer, AddsPipelines) {
  netdaq::MetricsServer srv("127.0.0.1:0", [] { return one_queue(1); });
  netdaq::PublishedPipelineStats published;
  netdaq::gpu::PipelineStats st;
  st.packets_in = 77;
  published.publish(st);
  srv.add_pipeline("receiver", "receiver/rx0", published);
  srv.add_pipeline("other", "other/rx1", [] {
    netdaq::gpu::PipelineStats s;
    s.jobs = 5;
    return s;
  });
  const auto r = ndqtest::http_get("127.0.0.1", srv.port(), "/metrics");
  EXPECT_NE(r.body.find("netdaq_gpu_packets_in_total{interface=\"receiver\",queue=\"receiver/rx0\"} 77\n"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("netdaq_gpu_jobs_total{interface=\"other\",queue=\"other/rx1\"} 5\n"), std::string::npos);
}

TEST(MetricsServer, AddsPipelineStreams) {
  netdaq::MetricsServer srv("127.0.0.1:0", [] { return one_queue(1); });
  netdaq::PublishedPipelineStats published(4);
  netdaq::gpu::StreamStats st;
  st.stream = 4096;
  st.frames_complete = 12;
  const netdaq::gpu::StreamStats streams[] = {st};
  published.publish(netdaq::gpu::PipelineStats{}, streams);
  srv.add_pipeline("receiver", "receiver/rx0", published);
  srv.add_pipeline(
      "other", "other/rx1", [] { return netdaq::gpu::PipelineStats{}; },
      [] {
        netdaq::gpu::StreamStats s;
        s.stream = 3;
        s.packets = 9;
        return std::vector<netdaq::gpu::StreamStats>{s};
      });
  const auto r = ndqtest::http_get("127.0.0.1", srv.port(), "/metrics");
  EXPECT_NE(r.body.find("netdaq_gpu_stream_frames_total{interface=\"receiver\",queue=\"receiver/rx0\",stream=\"4096\","
                        "result=\"complete\"} 12\n"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("netdaq_gpu_stream_packets_in_total{interface=\"other\",queue=\"other/rx1\",stream=\"3\"} 9\n"),
            std::string::npos)
      << r.body;
}

TEST(MetricsServer, StopEndsServing) {
  netdaq::MetricsServer srv("127.0.0.1:0", [] { return one_queue(1); });
  const uint16_t port = srv.port();
  EXPECT_EQ(ndqtest::http_get("127.0.0.1", port, "/metrics").status, 200);
  srv.stop();
  srv.stop();  // idempotent
  EXPECT_EQ(ndqtest::http_get("127.0.0.1", port, "/metrics").status, 0);
}

TEST(MetricsServer, CollectorErrorsAre500) {
  netdaq::MetricsServer srv("127.0.0.1:0", []() -> netdaq::MetricsSnapshot { throw std::runtime_error("boom"); });
  const auto r = ndqtest::http_get("127.0.0.1", srv.port(), "/metrics");
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(r.body.find("boom"), std::string::npos);
}

TEST(MetricsServer, TakenPortIsASystemError) {
  netdaq::MetricsServer first("127.0.0.1:0", [] { return netdaq::MetricsSnapshot{}; });
  const std::string addr = "127.0.0.1:" + std::to_string(first.port());
  try {
    netdaq::MetricsServer second(addr, [] { return netdaq::MetricsSnapshot{}; });
    FAIL() << "a second server bound " << addr;
  } catch (const netdaq::Error& e) {
    EXPECT_EQ(e.code(), netdaq::Errc::system);
    EXPECT_NE(std::string(e.what()).find(addr), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
}

TEST(MetricsServer, BadAddressesSayWhy) {
  const auto code_of = [](const char* addr) {
    try {
      netdaq::MetricsServer s(addr, [] { return netdaq::MetricsSnapshot{}; });
    } catch (const netdaq::Error& e) {
      return std::make_pair(e.code(), std::string(e.what()));
    }
    return std::make_pair(netdaq::Errc::state, std::string("accepted"));
  };
  auto [c1, w1] = code_of("127.0.0.1");
  EXPECT_EQ(c1, netdaq::Errc::invalid_config) << w1;
  auto [c2, w2] = code_of("no-such-host.invalid:9464");
  EXPECT_EQ(c2, netdaq::Errc::not_found) << w2;
  EXPECT_NE(w2.find("no-such-host.invalid"), std::string::npos) << w2;
  auto [c3, w3] = code_of("192.0.2.1:0");  // TEST-NET-1: not an address of this host
  EXPECT_EQ(c3, netdaq::Errc::system) << w3;
  EXPECT_NE(w3.find("192.0.2.1:0"), std::string::npos) << w3;
}

TEST(MetricsServer, Ipv6Loopback) {
  const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  const bool v6 = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (fd >= 0) ::close(fd);
  if (!v6) GTEST_SKIP() << "no IPv6 loopback here";
  netdaq::MetricsServer srv("[::1]:0", [] { return one_queue(3); });
  EXPECT_EQ(srv.url(), "http://[::1]:" + std::to_string(srv.port()) + "/metrics");
  EXPECT_EQ(ndqtest::http_get("::1", srv.port(), "/metrics").status, 200);
}
