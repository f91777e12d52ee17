// The Prometheus text of netdaq's stats (src/metrics): families, types, labels, escaping.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "metrics/listen_address.h"
#include "metrics/text_writer.h"
#include "netdaq/metrics.h"
#include "netdaq/session.h"
#include "netdaq/status.h"

namespace {

using netdaq::DropReason;
using netdaq::MetricsSnapshot;
using netdaq::QueueStats;

struct Exposition {
  std::map<std::string, std::string> type;  // family -> counter / gauge
  std::map<std::string, std::string> help;
  std::vector<std::string> samples;         // whole sample lines
  std::vector<std::string> errors;
};

// A strict reading of the text format: HELP then TYPE then the family's samples, each family
// once, every sample of the family just declared.
Exposition parse(const std::string& text) {
  Exposition e;
  std::istringstream in(text);
  std::string line, current;
  const std::regex help_re("# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)");
  const std::regex type_re("# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge)");
  const std::regex sample_re(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*\})? ([0-9]+|[0-9.e+-]+|NaN|[+-]Inf))");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, help_re)) {
      if (e.help.count(m[1])) e.errors.push_back("family twice: " + line);
      e.help[m[1]] = m[2];
      current = m[1];
    } else if (std::regex_match(line, m, type_re)) {
      if (m[1] != current) e.errors.push_back("TYPE without its HELP: " + line);
      e.type[m[1]] = m[2];
    } else if (std::regex_match(line, m, sample_re)) {
      if (m[1] != current || !e.type.count(current)) e.errors.push_back("sample outside its family: " + line);
      e.samples.push_back(line);
    } else {
      e.errors.push_back("unreadable line: '" + line + "'");
    }
  }
  if (!text.empty() && text.back() != '\n') e.errors.push_back("no final line feed");
  return e;
}

QueueStats queue(std::string iface, std::string name, bool rx) {
  QueueStats q;
  q.interface = std::move(iface);
  q.queue = std::move(name);
  q.is_rx = rx;
  q.packets = rx ? 1000 : 1001;
  q.bytes = 1472000;
  q.bursts = 16;
  q.pool_in_use = 7;
  q.mode = "direct recvmmsg";
  for (size_t i = 0; i < netdaq::kDropReasons; ++i) q.drops[i] = 100 + i;
  return q;
}

MetricsSnapshot full_snapshot() {
  MetricsSnapshot s;
  s.queues.push_back(queue("receiver", "receiver/rx0", true));
  s.queues.back().engine_counters = {{"rx_ring_full", 3}, {"rx_dropped", 4}};
  s.queues.push_back(queue("sender", "sender/tx0", false));
  netdaq::FlowStats f;
  f.interface = "receiver";
  f.flow = 7;
  f.queue = 2;
  f.packets = 11;
  f.bytes = 22;
  f.wrong_queue = 1;
  s.flows.push_back(f);
  f.unmatched = true;
  f.packets = 5;
  s.flows.push_back(f);
  netdaq::PipelineMetrics p;
  p.interface = "receiver";
  p.queue = "receiver/rx0";
  p.stats.packets_in = 10;
  p.stats.packets_placed = 9;
  p.stats.late = 1;
  p.stats.frames_complete = 3;
  s.pipelines.push_back(p);
  return s;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.starts_with(line + "\n");
}

netdaq::gpu::StreamStats stream_stats(uint64_t key, uint64_t base) {
  netdaq::gpu::StreamStats st;
  st.stream = key;
  st.packets_placed = base + 1;
  st.duplicate = base + 2;
  st.late = base + 3;
  st.no_buffer = base + 4;
  st.malformed = base + 5;
  st.packets = st.packets_placed + st.duplicate + st.late + st.no_buffer + st.malformed;
  st.frames_complete = base + 6;
  st.frames_incomplete = base + 7;
  st.frames_skipped = base + 8;
  st.frames_dropped = base + 9;
  st.bytes_missing = base + 10;
  return st;
}

// A span-mode pipeline with two streams (keys 4096 and 7) on rx0, a slot-mode one on rx1.
MetricsSnapshot span_snapshot() {
  MetricsSnapshot s;
  netdaq::PipelineMetrics p;
  p.interface = "receiver";
  p.queue = "receiver/rx0";
  p.streams = {stream_stats(4096, 0), stream_stats(7, 100)};
  for (const auto& st : p.streams) {
    p.stats.packets_in += st.packets;
    p.stats.packets_placed += st.packets_placed;
  }
  s.pipelines.push_back(p);
  p.queue = "receiver/rx1";
  p.stats = {};
  p.streams.clear();
  s.pipelines.push_back(p);
  return s;
}

}  // namespace

TEST(MetricsText, EscapesLabelValuesAndHelp) {
  using netdaq::metrics::escape_help;
  using netdaq::metrics::escape_label_value;
  EXPECT_EQ(escape_label_value(R"(a"b\c)" "\n" "d"), R"(a\"b\\c\nd)");
  EXPECT_EQ(escape_label_value("plain/rx0"), "plain/rx0");
  EXPECT_EQ(escape_help("x\\y\nz \"q\""), "x\\\\y\\nz \"q\"");  // HELP keeps double quotes
}

TEST(MetricsText, WriterRejectsBadNamesAndUntotalledCounters) {
  netdaq::metrics::TextWriter w;
  using netdaq::metrics::MetricType;
  EXPECT_THROW(w.family("netdaq_packets", "x", MetricType::counter), std::invalid_argument);
  EXPECT_THROW(w.family("9lives_total", "x", MetricType::counter), std::invalid_argument);
  EXPECT_THROW(w.family("net-daq", "x", MetricType::gauge), std::invalid_argument);
  w.family("netdaq_x", "x", MetricType::gauge);
  EXPECT_THROW(w.sample({{"bad-label", "v"}}, uint64_t{1}), std::invalid_argument);
  EXPECT_THROW(w.sample({{"__reserved", "v"}}, uint64_t{1}), std::invalid_argument);
}

TEST(MetricsText, EveryFamilyIsWellFormedAndTyped) {
  const std::string text = netdaq::prometheus_text(full_snapshot());
  const Exposition e = parse(text);
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << "\n" << text;
  for (const auto& [name, type] : e.type) {
    EXPECT_TRUE(name.starts_with("netdaq_")) << name;
    EXPECT_EQ(type == "counter", name.ends_with("_total")) << name << " is a " << type;
    EXPECT_FALSE(e.help.at(name).empty()) << name;
  }
  const std::map<std::string, std::string> expected = {
      {"netdaq_build_info", "gauge"},
      {"netdaq_rx_packets_total", "counter"},
      {"netdaq_rx_bytes_total", "counter"},
      {"netdaq_rx_bursts_total", "counter"},
      {"netdaq_rx_copied_bytes_total", "counter"},
      {"netdaq_rx_errors_total", "counter"},
      {"netdaq_rx_connections_total", "counter"},
      {"netdaq_rx_drops_total", "counter"},
      {"netdaq_rx_pool_buffers_in_use", "gauge"},
      {"netdaq_rx_engine_events_total", "counter"},
      {"netdaq_tx_packets_total", "counter"},
      {"netdaq_tx_bytes_total", "counter"},
      {"netdaq_tx_bursts_total", "counter"},
      {"netdaq_tx_copied_bytes_total", "counter"},
      {"netdaq_tx_errors_total", "counter"},
      {"netdaq_tx_connections_total", "counter"},
      {"netdaq_tx_drops_total", "counter"},
      {"netdaq_tx_pool_buffers_in_use", "gauge"},
      {"netdaq_queue_info", "gauge"},
      {"netdaq_flow_packets_total", "counter"},
      {"netdaq_flow_bytes_total", "counter"},
      {"netdaq_flow_wrong_queue_packets_total", "counter"},
      {"netdaq_unmatched_packets_total", "counter"},
      {"netdaq_unmatched_bytes_total", "counter"},
      {"netdaq_gpu_packets_in_total", "counter"},
      {"netdaq_gpu_packets_total", "counter"},
      {"netdaq_gpu_frames_total", "counter"},
      {"netdaq_gpu_missing_packets_total", "counter"},
      {"netdaq_gpu_missing_bytes_total", "counter"},
      {"netdaq_gpu_transferred_bytes_total", "counter"},
      {"netdaq_gpu_jobs_total", "counter"},
      {"netdaq_gpu_waits_total", "counter"},
      {"netdaq_gpu_errors_total", "counter"},
  };
  EXPECT_EQ(e.type, expected);
}

TEST(MetricsText, QueueCountersCarryTheirLabels) {
  const std::string text = netdaq::prometheus_text(full_snapshot());
  EXPECT_TRUE(has_line(text, R"(netdaq_rx_packets_total{interface="receiver",queue="receiver/rx0"} 1000)")) << text;
  EXPECT_TRUE(has_line(text, R"(netdaq_tx_packets_total{interface="sender",queue="sender/tx0"} 1001)")) << text;
  EXPECT_TRUE(has_line(text, R"(netdaq_rx_bytes_total{interface="receiver",queue="receiver/rx0"} 1472000)"));
  EXPECT_TRUE(has_line(text, R"(netdaq_rx_pool_buffers_in_use{interface="receiver",queue="receiver/rx0"} 7)"));
  EXPECT_TRUE(has_line(text, R"(netdaq_rx_engine_events_total{interface="receiver",queue="receiver/rx0",counter="rx_ring_full"} 3)"));
  EXPECT_TRUE(has_line(text, R"(netdaq_queue_info{interface="sender",queue="sender/tx0",direction="tx",mode="direct recvmmsg"} 1)"));
  EXPECT_TRUE(has_line(text, R"(netdaq_flow_packets_total{interface="receiver",flow="7",queue_id="2"} 11)"));
  EXPECT_TRUE(has_line(text, R"(netdaq_unmatched_packets_total{interface="receiver"} 5)"));
  EXPECT_TRUE(has_line(text, R"(netdaq_gpu_packets_total{interface="receiver",queue="receiver/rx0",result="late"} 1)"));
  EXPECT_TRUE(has_line(text, R"(netdaq_gpu_frames_total{interface="receiver",queue="receiver/rx0",result="complete"} 3)"));
  EXPECT_TRUE(has_line(text, std::string("netdaq_build_info{version=\"") + netdaq::version() + "\"} 1"));
}

TEST(MetricsText, EveryDropReasonOfEveryQueue) {
  const std::string text = netdaq::prometheus_text(full_snapshot());
  for (size_t i = 0; i < netdaq::kDropReasons; ++i) {
    const std::string reason = netdaq::to_string(static_cast<DropReason>(i));
    const std::string v = std::to_string(100 + i);
    EXPECT_TRUE(has_line(text, "netdaq_rx_drops_total{interface=\"receiver\",queue=\"receiver/rx0\",reason=\"" +
                                   reason + "\"} " + v))
        << reason;
    EXPECT_TRUE(has_line(text, "netdaq_tx_drops_total{interface=\"sender\",queue=\"sender/tx0\",reason=\"" + reason +
                                   "\"} " + v))
        << reason;
  }
}

TEST(MetricsText, OddNamesAreEscapedNotBroken) {
  MetricsSnapshot s;
  s.queues.push_back(queue("we\"ird\\if", "q\nrx0", true));
  const std::string text = netdaq::prometheus_text(s);
  const Exposition e = parse(text);
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << "\n" << text;
  EXPECT_TRUE(has_line(text, R"(netdaq_rx_packets_total{interface="we\"ird\\if",queue="q\nrx0"} 1000)")) << text;
}

TEST(MetricsText, OnlyWhatTheSessionHas) {
  MetricsSnapshot s;
  s.queues.push_back(queue("receiver", "receiver/rx0", true));
  const Exposition e = parse(netdaq::prometheus_text(s));
  EXPECT_TRUE(e.errors.empty());
  for (const auto& [name, type] : e.type) {
    EXPECT_FALSE(name.starts_with("netdaq_tx_")) << name;
    EXPECT_FALSE(name.starts_with("netdaq_gpu_")) << name;
    EXPECT_FALSE(name.starts_with("netdaq_flow_")) << name;
    EXPECT_NE(name, "netdaq_rx_engine_events_total");  // no engine counters in this snapshot
  }
  EXPECT_EQ(parse(netdaq::prometheus_text(MetricsSnapshot{})).type.size(), 1u);  // build info only
}

// Span modes (fields, spead, vita49): control and no_stream are packet results like the others,
// so the results still sum to packets_in; slot modes show them as 0, not missing.
TEST(MetricsText, SpanModeResultsAndMissingBytes) {
  MetricsSnapshot s;
  netdaq::PipelineMetrics p;
  p.interface = "receiver";
  p.queue = "receiver/rx0";
  p.stats.packets_in = 20;
  p.stats.packets_placed = 15;
  p.stats.malformed = 1;
  p.stats.control = 3;
  p.stats.no_stream = 1;
  p.stats.bytes_missing = 4096;
  s.pipelines.push_back(p);
  p.queue = "receiver/rx1";
  p.stats = {};
  s.pipelines.push_back(p);
  const std::string text = netdaq::prometheus_text(s);
  const Exposition e = parse(text);
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << "\n" << text;
  EXPECT_TRUE(has_line(text, R"(netdaq_gpu_packets_total{interface="receiver",queue="receiver/rx0",result="control"} 3)"))
      << text;
  EXPECT_TRUE(has_line(text, R"(netdaq_gpu_packets_total{interface="receiver",queue="receiver/rx0",result="no_stream"} 1)"));
  EXPECT_TRUE(has_line(text, R"(netdaq_gpu_missing_bytes_total{interface="receiver",queue="receiver/rx0"} 4096)"));
  EXPECT_TRUE(has_line(text, R"(netdaq_gpu_packets_total{interface="receiver",queue="receiver/rx1",result="control"} 0)"));
  EXPECT_TRUE(has_line(text, R"(netdaq_gpu_packets_total{interface="receiver",queue="receiver/rx1",result="no_stream"} 0)"));
  // Every packet under one result: the rx0 results sum to packets_in.
  uint64_t sum = 0;
  const std::string prefix = R"(netdaq_gpu_packets_total{interface="receiver",queue="receiver/rx0",result=")";
  for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) {
    const size_t end = text.find('\n', at);
    sum += std::stoull(text.substr(text.rfind(' ', end) + 1, end - text.rfind(' ', end) - 1));
  }
  EXPECT_EQ(sum, 20u) << text;
}

TEST(MetricsText, StreamFamiliesCarryTheStreamLabel) {
  const std::string text = netdaq::prometheus_text(span_snapshot());
  const Exposition e = parse(text);
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << "\n" << text;
  for (const char* family : {"netdaq_gpu_stream_packets_total", "netdaq_gpu_stream_frames_total",
                             "netdaq_gpu_stream_packets_in_total", "netdaq_gpu_stream_missing_bytes_total"}) {
    EXPECT_EQ(e.type.count(family) ? e.type.at(family) : "", "counter") << family;
    EXPECT_FALSE(e.help.count(family) && e.help.at(family).empty()) << family;
  }
  const std::string rx0 = R"({interface="receiver",queue="receiver/rx0",stream=")";
  const std::pair<const char*, uint64_t> packets[] = {
      {"placed", 1}, {"duplicate", 2}, {"late", 3}, {"malformed", 5}, {"no_buffer", 4}};
  const std::pair<const char*, uint64_t> frames[] = {{"complete", 6}, {"incomplete", 7}, {"skipped", 8}, {"dropped", 9}};
  for (const auto& [key, base] : {std::pair<const char*, uint64_t>{"4096", 0}, {"7", 100}}) {
    for (const auto& [result, v] : packets)
      EXPECT_TRUE(has_line(text, "netdaq_gpu_stream_packets_total" + rx0 + key + "\",result=\"" + result + "\"} " +
                                     std::to_string(base + v)))
          << key << " " << result << "\n" << text;
    for (const auto& [result, v] : frames)
      EXPECT_TRUE(has_line(text, "netdaq_gpu_stream_frames_total" + rx0 + key + "\",result=\"" + result + "\"} " +
                                     std::to_string(base + v)))
          << key << " " << result;
    EXPECT_TRUE(has_line(text, "netdaq_gpu_stream_packets_in_total" + rx0 + key + "\"} " + std::to_string(5 * base + 15)))
        << key;
    EXPECT_TRUE(has_line(text, "netdaq_gpu_stream_missing_bytes_total" + rx0 + key + "\"} " + std::to_string(base + 10)))
        << key;
  }
  // 2 streams x (5 packet results + 4 frame results + packets_in + missing bytes); none of rx1.
  size_t stream_samples = 0;
  for (const auto& line : e.samples) {
    if (!line.starts_with("netdaq_gpu_stream_")) continue;
    ++stream_samples;
    EXPECT_EQ(line.find("receiver/rx1"), std::string::npos) << line;
  }
  EXPECT_EQ(stream_samples, 22u) << text;
  // The pipeline families stay as they were, for both pipelines.
  EXPECT_TRUE(has_line(text, R"(netdaq_gpu_packets_in_total{interface="receiver",queue="receiver/rx1"} 0)")) << text;
}

TEST(MetricsText, NoStreamFamiliesWithoutStreams) {
  MetricsSnapshot s = span_snapshot();
  s.pipelines.erase(s.pipelines.begin());  // only the slot-mode pipeline
  const std::string text = netdaq::prometheus_text(s);
  EXPECT_TRUE(parse(text).errors.empty()) << text;
  EXPECT_EQ(text.find("netdaq_gpu_stream_"), std::string::npos) << text;
  EXPECT_NE(text.find("netdaq_gpu_packets_total"), std::string::npos) << text;
  EXPECT_EQ(netdaq::prometheus_text(full_snapshot()).find("netdaq_gpu_stream_"), std::string::npos);
}

TEST(MetricsText, PublishedPipelineStatsRoundTrip) {
  netdaq::gpu::PipelineStats in;
  in.packets_in = 1;
  in.gpu_errors = 15;
  in.bytes_to_gpu = uint64_t{1} << 60;
  in.control = 3;
  in.no_stream = 4;
  in.bytes_missing = 5;
  netdaq::PublishedPipelineStats p;
  EXPECT_EQ(p.load().packets_in, 0u);
  p.publish(in);
  const auto out = p.load();
  EXPECT_EQ(out.packets_in, 1u);
  EXPECT_EQ(out.gpu_errors, 15u);
  EXPECT_EQ(out.bytes_to_gpu, uint64_t{1} << 60);
  EXPECT_EQ(out.control, 3u);
  EXPECT_EQ(out.no_stream, 4u);
  EXPECT_EQ(out.bytes_missing, 5u);
  EXPECT_EQ(p.stream_capacity(), 0u);
  EXPECT_TRUE(p.load_streams().empty());
}

TEST(MetricsText, PublishedPipelineStatsRoundTripsStreams) {
  netdaq::PublishedPipelineStats p(2);
  EXPECT_EQ(p.stream_capacity(), 2u);
  EXPECT_TRUE(p.load_streams().empty());  // nothing published yet
  netdaq::gpu::PipelineStats in;
  in.packets_in = 42;
  const std::vector<netdaq::gpu::StreamStats> one = {stream_stats(4096, 0)};
  p.publish(in, one);
  EXPECT_EQ(p.load().packets_in, 42u);
  auto out = p.load_streams();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].stream, 4096u);
  EXPECT_EQ(out[0].late, 3u);
  EXPECT_EQ(out[0].bytes_missing, 10u);
  // More streams than the capacity: the first two, whole.
  std::vector<netdaq::gpu::StreamStats> three = {stream_stats(4096, 1000), stream_stats(7, 100), stream_stats(9, 200)};
  three[1].bytes_missing = uint64_t{1} << 62;
  p.publish(in, three);
  out = p.load_streams();
  ASSERT_EQ(out.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(std::memcmp(&out[i], &three[i], sizeof(out[i])), 0) << i;
  }
  // Stats alone leave the streams as they were.
  in.packets_in = 43;
  p.publish(in);
  EXPECT_EQ(p.load().packets_in, 43u);
  EXPECT_EQ(p.load_streams().size(), 2u);
  // Capacity 0: streams given are not kept.
  netdaq::PublishedPipelineStats none;
  none.publish(in, three);
  EXPECT_EQ(none.load().packets_in, 43u);
  EXPECT_TRUE(none.load_streams().empty());
}

TEST(MetricsAddress, ParsesHostPortForms) {
  using netdaq::metrics::parse_listen_address;
  auto a = parse_listen_address("127.0.0.1:9464");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9464);
  a = parse_listen_address("[::1]:0");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 0);
  EXPECT_EQ(parse_listen_address(":9464").host, "0.0.0.0");
  EXPECT_EQ(parse_listen_address("*:9464").host, "0.0.0.0");
  EXPECT_EQ(parse_listen_address("localhost:1").host, "localhost");
  for (const char* bad : {"9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:x", "::1:9464", "[::1]9464",
                          "[]:1", "host:-1"}) {
    try {
      parse_listen_address(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const netdaq::Error& e) {
      EXPECT_EQ(e.code(), netdaq::Errc::invalid_config) << bad;
      EXPECT_NE(std::string(e.what()).find("HOST:PORT"), std::string::npos) << e.what();
    }
  }
}
