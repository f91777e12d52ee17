// A whole fleet on one machine, every process real and in a namespace of its own
// (fleet_lab.h): 3 sensors (`netdaq run`, UDP in the netdaq payload format) -> 3 ingest nodes
// (`netdaq ingest`: the socket engine on two, afxdp on the third) -> UCX over the fleet's
// bridged veths -> 2 event builders (`netdaq build`, frame f built from the 3 nodes' fragments
// on builder f % 2, every present byte checked as the payload the sensor sent). Checked:
// sent == received + counted drops at every step, the builders' counts equal the ingests'
// acks, and one real Prometheus scraping the 5 processes sums to the same fleet totals; a
// builder killed mid-run is counted lost at the senders only for its frames, and rejoins when
// restarted. Every wait is bounded; namespaces and processes go when the test ends.
#include <gtest/gtest.h>
#include <signal.h>

#include <array>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fleet_lab.h"
#include "metrics_test_util.h"
#include "netns_lab.h"
#include "test_paths.h"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using nlohmann::json;
namespace fs = std::filesystem;
using ndqtest::Child;
using ndqtest::FleetLab;

constexpr unsigned kIngests = 3, kBuilders = 2;
constexpr unsigned kPayload = 1024, kPacketsPerFrame = 64;  // 64 KiB frames: seq = frame x 64 + index
constexpr uint16_t kSensorPort = 46000, kFleetPort = 13337, kMetricsPort = 9464, kPrometheusPort = 9090;

struct FleetOptions {
  std::string transport = "tcp";
  uint64_t frames = 300;      // per sensor
  uint32_t rate_pps = 15000;  // per sensor: 234 frames/s, 117 to each builder; 256 credits per
                              // builder cover 2 s of skew between the ingests (a loaded CI
                              // machine); the builders' timeout is 6 s
  bool afxdp_ingest = true;   // ingest 2 on the afxdp engine
  std::string when_full = "wait";
};

std::string ingest_config(const FleetLab& lab, unsigned i, const FleetOptions& o) {
  const auto& g = lab.ingest(i);
  const bool afxdp = o.afxdp_ingest && i == 2;
  std::string destinations;
  for (unsigned b = 0; b < kBuilders; ++b)
    destinations += (b ? "," : "") + lab.builder(b).fabric_ip + ":" + std::to_string(kFleetPort);
  std::string c = "memory_regions:\n  - {name: rx, kind: host, buf_size: 2048, num_bufs: 8192}\n"
                  "interfaces:\n  - name: sensor\n";
  if (afxdp)
    c += "    engine: afxdp\n    address: " + g.sensor_veth + "\n";
  else
    c += "    engine: socket\n    address: udp://" + g.sensor_ip + ":" + std::to_string(kSensorPort) + "\n" +
         "    socket: {rcvbuf: 16777216}\n";
  c += "    rx:\n      queues:\n        - {id: 0, batch_size: 64, memory_regions: [rx]}\n";
  if (afxdp) c += "      flows:\n        - {id: 0, queue: 0, match: {udp_dst: " + std::to_string(kSensorPort) + "}}\n";
  c += "      reorder:\n        - queue: 0\n          mode: fields\n          frames: host\n"
       "          fields:\n"
       "            frame: {offset: 8, bits: 64, byte_order: little, shift: 6}\n"
       "            index: {offset: 8, bits: 64, byte_order: little, mask: 63}\n"
       "          payload_offset: 0\n          payload_size: " + std::to_string(kPayload) + "\n" +
       "          packets_per_frame: " + std::to_string(kPacketsPerFrame) + "\n" +
       "          max_open_frames: 8\n          frame_buffers: 560\n          frame_timeout_us: 300000\n";
  c += "fleet:\n  node: " + std::to_string(i) + "\n  nodes: " + std::to_string(kIngests) +
       "\n  destinations: \"" + destinations + "\"\n  route: frame\n  credits: 256\n  when_full: " + o.when_full +
       "\n  wait_ms: 3000\n  reconnect_ms: 100\n  transport: " + o.transport + "\n";
  return c;
}

std::string builder_config(const FleetOptions& o) {
  return "fleet:\n  nodes: " + std::to_string(kIngests) + "\n  listen: \"0.0.0.0:" + std::to_string(kFleetPort) +
         "\"\n  transport: " + o.transport + "\n  buffers: 640\n  max_bytes: " +
         std::to_string(kIngests * kPayload * kPacketsPerFrame) + "\n  timeout_ms: 6000\n";
}

std::string sender_config(const FleetLab::Ingest& g, const FleetOptions& o) {
  return "memory_regions:\n  - {name: tx, kind: host, buf_size: 2048, num_bufs: 4096}\n"
         "interfaces:\n  - name: sensor\n    engine: socket\n    tx:\n"
         "      destination: udp://" + g.sensor_ip + ":" + std::to_string(kSensorPort) + "\n" +
         "      rate_pps: " + std::to_string(o.rate_pps) + "\n" +
         "      queues:\n        - {id: 0, batch_size: 64, ring_depth: 8, memory_regions: [tx]}\n"
         "run:\n  tx_packets: " + std::to_string(o.frames * kPacketsPerFrame) + "\n  tx_payload_size: " +
         std::to_string(kPayload) + "\n  duration_s: 0\n  drain_ms: 0\n";
}

std::string prometheus_config(const FleetLab& lab) {
  std::string t = "global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\nscrape_configs:\n"
                  "  - job_name: ingest\n    static_configs:\n      - targets: [";
  for (unsigned i = 0; i < kIngests; ++i)
    t += std::string(i ? ", " : "") + "'" + lab.ingest(i).fabric_ip + ":" + std::to_string(kMetricsPort) + "'";
  t += "]\n  - job_name: builder\n    static_configs:\n      - targets: [";
  for (unsigned b = 0; b < kBuilders; ++b)
    t += std::string(b ? ", " : "") + "'" + lab.builder(b).fabric_ip + ":" + std::to_string(kMetricsPort) + "'";
  return t + "]\n";
}

// argv run in namespace ns with the namespace's own /sys (UCX finds its network devices in
// /sys/class/net, as in a container), in a mount namespace of its own. nsenter, unshare and sh
// exec: the Child's pid is the command's.
std::vector<std::string> in_ns(const std::string& ns, std::vector<std::string> argv) {
  // --propagation unchanged: a chroot's / is no mount point, so "private" fails there; /sys
  // alone is made private, so the new sysfs is not seen outside.
  std::vector<std::string> full{"nsenter", "--net=/run/netns/" + ns, "--", "unshare", "--mount", "--propagation",
                                "unchanged", "--", "sh", "-c",
                                "mount --make-private /sys && mount -t sysfs sysfs /sys && exec \"$@\"", "sh"};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

template <class F>
bool wait_until(std::chrono::milliseconds timeout, F&& ok) {
  const auto end = Clock::now() + timeout;
  while (Clock::now() < end) {
    if (ok()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return ok();
}

std::optional<json> read_json(const fs::path& p) {
  if (!fs::exists(p)) return std::nullopt;
  auto j = json::parse(ndqtest::read_file(p), nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// GET from inside namespace ns (a thread that entered it).
ndqtest::HttpReply http_get_in(const std::string& ns, const std::string& host, uint16_t port, const std::string& path) {
  ndqtest::HttpReply r;
  std::thread t([&] {
    ndqtest::NetnsLab::enter(ns);
    r = ndqtest::http_get(host, port, path);
  });
  t.join();
  return r;
}

// The value of a Prometheus instant query with one series, or nullopt.
std::optional<double> prometheus_value(const FleetLab& lab, const std::string& encoded_query) {
  const auto r = http_get_in(lab.switch_ns(), lab.switch_ip(), kPrometheusPort, "/api/v1/query?query=" + encoded_query);
  if (r.status != 200) return std::nullopt;
  const auto j = json::parse(r.body, nullptr, false);
  if (j.is_discarded() || j.value("status", "") != "success") return std::nullopt;
  const auto& res = j["data"]["result"];
  if (!res.is_array() || res.size() != 1) return std::nullopt;
  return std::stod(res[0]["value"][1].get<std::string>());
}

uint64_t u64(const json& j, const char* a, const char* b) { return j.at(a).at(b).get<uint64_t>(); }

// One fleet: files in a temporary directory, processes that go with it.
class Fleet {
 public:
  Fleet(const FleetLab& lab, FleetOptions o) : lab_(lab), o_(std::move(o)) {
    for (unsigned i = 0; i < kIngests; ++i) {
      ndqtest::write_file(dir_.path() / ("ingest" + std::to_string(i) + ".yaml"), ingest_config(lab, i, o_));
      ndqtest::write_file(dir_.path() / ("sensor" + std::to_string(i) + ".yaml"), sender_config(lab.ingest(i), o_));
    }
    ndqtest::write_file(dir_.path() / "builder.yaml", builder_config(o_));
  }

  const fs::path& dir() const { return dir_.path(); }

  void start_prometheus() {
    ndqtest::write_file(dir() / "prometheus.yml", prometheus_config(lab_));
    prometheus_ = std::make_unique<Child>(
        in_ns(lab_.switch_ns(),
              {"prometheus", "--config.file=" + (dir() / "prometheus.yml").string(),
               "--storage.tsdb.path=" + (dir() / "tsdb").string(),
               "--web.listen-address=" + lab_.switch_ip() + ":" + std::to_string(kPrometheusPort), "--log.level=warn"}),
        dir() / "prometheus.log");
  }
  bool prometheus_ready() {
    return wait_until(30s, [&] {
      return http_get_in(lab_.switch_ns(), lab_.switch_ip(), kPrometheusPort, "/-/ready").status == 200;
    });
  }
  std::string prometheus_log() const { return prometheus_ ? prometheus_->log() : ""; }

  // Builder b (again: a new result file and log, generation g).
  Child& start_builder(unsigned b, unsigned generation = 0) {
    const std::string name = "builder" + std::to_string(b) + "." + std::to_string(generation);
    auto& slot = builders_[b];
    slot = std::make_unique<Child>(
        in_ns(lab_.builder(b).ns,
              {NETDAQ_CLI, "build", (dir() / "builder.yaml").string(), "--check-payload", std::to_string(kPayload),
               "--packets-per-frame", std::to_string(kPacketsPerFrame), "--idle-ms", "4000", "--json",
               (dir() / (name + ".json")).string(), "--metrics", "0.0.0.0:" + std::to_string(kMetricsPort),
               "--metrics-linger", "60"}),
        dir() / (name + ".log"));
    return *slot;
  }
  Child& start_ingest(unsigned i) {
    const std::string name = "ingest" + std::to_string(i);
    ingests_[i] = std::make_unique<Child>(
        in_ns(lab_.ingest(i).ns,
              {NETDAQ_CLI, "ingest", (dir() / (name + ".yaml")).string(), "--idle-ms", "2500", "--json",
               (dir() / (name + ".json")).string(), "--metrics", "0.0.0.0:" + std::to_string(kMetricsPort),
               "--metrics-linger", "60"}),
        dir() / (name + ".log"));
    return *ingests_[i];
  }
  Child& start_sensor(unsigned i) {
    const std::string name = "sensor" + std::to_string(i);
    sensors_[i] = std::make_unique<Child>(
        in_ns(lab_.ingest(i).sender_ns, {NETDAQ_CLI, "run", (dir() / (name + ".yaml")).string(), "-q", "--json",
                                         (dir() / (name + ".json")).string()}),
        dir() / (name + ".log"));
    return *sensors_[i];
  }
  // Builders, then ingests (each once it says it is up), then the sensors.
  bool start_all() {
    for (unsigned b = 0; b < kBuilders; ++b)
      if (!logged(start_builder(b), "listening on", 20s)) return false;
    for (unsigned i = 0; i < kIngests; ++i)
      if (!logged(start_ingest(i), "netdaq ingest: node", 20s)) return false;
    for (unsigned i = 0; i < kIngests; ++i) start_sensor(i);
    return true;
  }
  // Ctrl-C ends the ingests' and builders' linger; each exits 0.
  void stop_all() {
    auto stop = [&](std::unique_ptr<Child>& c) {
      if (!c) return;
      c->signal(SIGINT);
      EXPECT_EQ(c->wait_for(10s), std::optional<int>(0)) << logs();
    };
    for (auto& c : ingests_) stop(c);
    for (auto& c : builders_) stop(c);
  }
  Child& builder(unsigned b) { return *builders_[b]; }
  Child& ingest(unsigned i) { return *ingests_[i]; }
  Child& sensor(unsigned i) { return *sensors_[i]; }

  static bool logged(Child& c, const std::string& text, std::chrono::milliseconds timeout) {
    return wait_until(timeout, [&] { return c.log().find(text) != std::string::npos || !c.running(); }) &&
           c.log().find(text) != std::string::npos;
  }

  // Everything each process said, for a failure message.
  std::string logs() {
    std::string s;
    for (unsigned i = 0; i < kIngests; ++i) {
      if (sensors_[i]) s += "--- sensor " + std::to_string(i) + ":\n" + sensors_[i]->log();
      if (ingests_[i]) s += "--- ingest " + std::to_string(i) + ":\n" + ingests_[i]->log();
    }
    for (unsigned b = 0; b < kBuilders; ++b)
      if (builders_[b]) s += "--- builder " + std::to_string(b) + ":\n" + builders_[b]->log();
    return s;
  }

  // The packets a sensor's run sent (its JSON summary's tx queue).
  std::optional<uint64_t> sensor_sent(unsigned i) {
    const auto j = read_json(dir() / ("sensor" + std::to_string(i) + ".json"));
    if (!j || !j->contains("queues")) return std::nullopt;
    for (const auto& q : (*j)["queues"])
      if (q.value("direction", "") == "tx") return q["packets"].get<uint64_t>();
    return std::nullopt;
  }

 private:
  const FleetLab& lab_;
  FleetOptions o_;
  ndqtest::TempDir dir_;
  std::unique_ptr<Child> prometheus_;
  std::array<std::unique_ptr<Child>, kBuilders> builders_;
  std::array<std::unique_ptr<Child>, kIngests> ingests_, sensors_;
};

// The checks every fleet run ends with: packets at each ingest, and the sink's fates.
void expect_ingest_accounting(Fleet& f, unsigned i, const json& r) {
  SCOPED_TRACE("ingest " + std::to_string(i));
  const auto sent = f.sensor_sent(i);
  ASSERT_TRUE(sent.has_value()) << f.logs();
  EXPECT_EQ(*sent, u64(r, "packets", "received") + u64(r, "packets", "dropped")) << r.dump(1);
  EXPECT_TRUE(r["adds_up"].get<bool>()) << r.dump(1);
  EXPECT_TRUE(r["drained"].get<bool>()) << r.dump(1);
  const json& total = r["sink"]["total"];
  EXPECT_EQ(total["in_flight"].get<uint64_t>(), 0u) << r.dump(1);
  // Route frame, one frame -> one fragment to one builder.
  EXPECT_EQ(total["fragments"].get<uint64_t>(), u64(r, "frames", "sent")) << r.dump(1);
  EXPECT_EQ(u64(r, "frames", "sent"), u64(r, "frames", "complete") + u64(r, "frames", "incomplete"));
}

class FleetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    NDQ_REQUIRE(ndqtest::NetnsLab::supported(&why), why);
    NDQ_REQUIRE_TOOL("nsenter", "util-linux");
  }
};

TEST_F(FleetTest, fleetThreeIngestsTwoBuildersEveryFrameBuiltAndPrometheusSumsTheFleet) {
  NDQ_REQUIRE_TOOL("prometheus", "prometheus");
  FleetLab lab(kIngests, kBuilders);
  FleetOptions o;
  Fleet f(lab, o);
  f.start_prometheus();
  ASSERT_TRUE(f.prometheus_ready()) << f.prometheus_log();
  ASSERT_TRUE(f.start_all()) << f.logs();
  for (unsigned i = 0; i < kIngests; ++i) ASSERT_EQ(f.sensor(i).wait_for(60s), std::optional<int>(0)) << f.logs();

  std::vector<json> in(kIngests), out(kBuilders);
  for (unsigned i = 0; i < kIngests; ++i)
    ASSERT_TRUE(wait_until(30s, [&] { return read_json(f.dir() / ("ingest" + std::to_string(i) + ".json")).has_value(); }))
        << f.logs();
  for (unsigned b = 0; b < kBuilders; ++b)
    ASSERT_TRUE(wait_until(30s, [&] { return read_json(f.dir() / ("builder" + std::to_string(b) + ".0.json")).has_value(); }))
        << f.logs();
  for (unsigned i = 0; i < kIngests; ++i) in[i] = *read_json(f.dir() / ("ingest" + std::to_string(i) + ".json"));
  for (unsigned b = 0; b < kBuilders; ++b) out[b] = *read_json(f.dir() / ("builder" + std::to_string(b) + ".0.json"));

  uint64_t fragments = 0, acked = 0, placed = 0, built = 0, complete_in = 0;
  for (unsigned i = 0; i < kIngests; ++i) {
    expect_ingest_accounting(f, i, in[i]);
    const json& total = in[i]["sink"]["total"];
    // Nothing died and senders wait for credits: every fragment acked.
    EXPECT_EQ(total["acked"].get<uint64_t>(), total["fragments"].get<uint64_t>()) << in[i].dump(1) << f.logs();
    fragments += total["fragments"].get<uint64_t>();
    acked += total["acked"].get<uint64_t>();
    complete_in += u64(in[i], "frames", "complete");
    // Builder b's node i fragments equal what ingest i's sink saw acked by b.
    for (unsigned b = 0; b < kBuilders; ++b)
      EXPECT_EQ(in[i]["sink"]["destinations"][b]["acked"].get<uint64_t>(),
                out[b]["nodes"][i]["fragments"].get<uint64_t>())
          << "ingest " << i << ", builder " << b << "\n" << in[i].dump(1) << out[b].dump(1);
  }
  for (unsigned b = 0; b < kBuilders; ++b) {
    SCOPED_TRACE("builder " + std::to_string(b));
    const json& r = out[b];
    EXPECT_EQ(r["check"]["errors"].get<uint64_t>(), 0u) << r.dump(1);
    EXPECT_EQ(r["check"]["fragments"].get<uint64_t>(), r["receiver"]["placed"].get<uint64_t>()) << r.dump(1);
    for (const auto& n : r["nodes"]) EXPECT_EQ(n["missing"].get<uint64_t>(), 0u) << r.dump(1);
    EXPECT_EQ(u64(r, "frames", "built"), u64(r, "frames", "complete") + u64(r, "frames", "incomplete"));
    placed += r["receiver"]["placed"].get<uint64_t>();
    built += u64(r, "frames", "built");
  }
  // sent == built + counted drops, fleet-wide (no drops here), and every frame number built once.
  EXPECT_EQ(fragments, placed);
  EXPECT_EQ(acked, placed);
  EXPECT_EQ(built, o.frames) << "frames built by the two builders";
  if (complete_in == kIngests * o.frames) {  // no packet lost on the sensor links: every frame whole
    EXPECT_EQ(u64(out[0], "frames", "complete") + u64(out[1], "frames", "complete"), o.frames);
  }

  // One Prometheus sees the same fleet totals (the processes linger with their final counters).
  const std::vector<std::pair<std::string, uint64_t>> totals = {
      {"sum(netdaq_fleet_sink_acked_total)", acked},
      {"sum(netdaq_fleet_sink_fragments_total)", fragments},
      {"sum(netdaq_fleet_builder_fragments_total)", placed},
      {"sum(netdaq_fleet_builder_frames_total)", built},
  };
  for (const auto& [q, want] : totals) {
    std::string enc;
    for (char c : q) enc += c == '(' ? "%28" : c == ')' ? "%29" : std::string(1, c);
    std::optional<double> got;
    EXPECT_TRUE(wait_until(20s, [&] { return (got = prometheus_value(lab, enc)) && *got == double(want); }))
        << q << ": Prometheus " << (got ? std::to_string(*got) : "nothing") << ", the summaries " << want << "\n"
        << f.prometheus_log();
  }
  f.stop_all();
}

TEST_F(FleetTest, fleetABuilderKilledMidRunIsCountedLostAtTheSendersAndRejoinsWhenRestarted) {
  FleetLab lab(kIngests, kBuilders);
  FleetOptions o;
  // ~9 s at 7.5 kpps: builder 1 dies at ~1 s; a SIGKILLed builder takes 1-3 s to go and its
  // successor 1-3 s to listen on a loaded 2-core machine, and the run must outlast both. Half
  // the other tests' rate, so that the 256 credits a builder cover 4.4 s of skew between the
  // ingests: CI's sanitizer pass skewed them past 2.2 s (90 no_credit at builder 0), and more
  // buffers instead (1,600 of 192 KiB a builder) made the restarted builder too slow to come
  // back before the run ended.
  o.frames = 1000;
  o.rate_pps = 7500;
  // A sink never waits for a credit here: builder 1 holds the fragments of frames that some node
  // sent to its dead predecessor until they time out, and waiting for those credits would hold
  // up the frames for builder 0 too.
  o.when_full = "drop";
  Fleet f(lab, o);
  ASSERT_TRUE(f.start_all()) << f.logs();
  std::this_thread::sleep_for(1s);
  const auto killed = std::chrono::steady_clock::now();
  f.builder(1).signal(SIGKILL);
  ASSERT_TRUE(f.builder(1).wait_for(5s).has_value());
  std::this_thread::sleep_for(800ms);
  ASSERT_TRUE(Fleet::logged(f.start_builder(1, 1), "listening on", 20s)) << f.logs();
  const auto back = std::chrono::steady_clock::now();
  for (unsigned i = 0; i < kIngests; ++i) ASSERT_EQ(f.sensor(i).wait_for(60s), std::optional<int>(0)) << f.logs();
  const auto sent = std::chrono::steady_clock::now();
  auto ms = [&](auto t) { return std::chrono::duration_cast<std::chrono::milliseconds>(t - killed).count(); };
  const std::string timeline = "builder 1 listened again " + std::to_string(ms(back)) +
                               " ms after its kill, the sensors ended " + std::to_string(ms(sent)) + " ms after it";

  std::vector<json> in(kIngests);
  for (unsigned i = 0; i < kIngests; ++i) {
    const fs::path p = f.dir() / ("ingest" + std::to_string(i) + ".json");
    ASSERT_TRUE(wait_until(30s, [&] { return read_json(p).has_value(); })) << f.logs();
    in[i] = *read_json(p);
  }
  const fs::path p0 = f.dir() / "builder0.0.json", p1 = f.dir() / "builder1.1.json";
  ASSERT_TRUE(wait_until(30s, [&] { return read_json(p0) && read_json(p1); })) << f.logs();
  const json b0 = *read_json(p0), b1 = *read_json(p1);

  uint64_t fragments = 0, fates = 0, to_b0 = 0;
  for (unsigned i = 0; i < kIngests; ++i) {
    expect_ingest_accounting(f, i, in[i]);
    const json& d0 = in[i]["sink"]["destinations"][0];
    const json& d1 = in[i]["sink"]["destinations"][1];
    // Builder 0 is unaffected: every fragment it was sent was acked.
    EXPECT_EQ(d0["acked"].get<uint64_t>(), d0["fragments"].get<uint64_t>()) << in[i].dump(1);
    EXPECT_EQ(d0["disconnects"].get<uint64_t>(), 0u) << in[i].dump(1);
    // Builder 1's death is counted here, in the fates of its fragments only.
    EXPECT_GT(d1["peer_down"].get<uint64_t>() + d1["in_flight_lost"].get<uint64_t>(), 0u) << in[i].dump(1);
    EXPECT_GE(d1["disconnects"].get<uint64_t>(), 1u) << in[i].dump(1);
    EXPECT_GE(d1["connects"].get<uint64_t>(), 2u) << "ingest " << i << " did not reconnect\n" << in[i].dump(1);
    // The restarted builder's count of node i equals what node i saw acked since it reconnected.
    EXPECT_EQ(d1["acked_connection"].get<uint64_t>(), b1["nodes"][i]["fragments"].get<uint64_t>())
        << in[i].dump(1) << b1.dump(1);
    EXPECT_GT(d1["acked_connection"].get<uint64_t>(), 0u) << "builder 1 got nothing after its restart: " << timeline;
    EXPECT_EQ(d0["acked"].get<uint64_t>(), b0["nodes"][i]["fragments"].get<uint64_t>()) << b0.dump(1);
    const json& t = in[i]["sink"]["total"];
    fragments += t["fragments"].get<uint64_t>();
    fates += t["acked"].get<uint64_t>() + t["refused"].get<uint64_t>() + t["no_credit"].get<uint64_t>() +
             t["peer_down"].get<uint64_t>() + t["in_flight_lost"].get<uint64_t>();
    to_b0 += d0["fragments"].get<uint64_t>();
  }
  // sent == built (acked) + counted drops across the fleet.
  EXPECT_EQ(fragments, fates);
  // Builder 0 built every frame meant for it, whole and byte for byte.
  EXPECT_EQ(b0["check"]["errors"].get<uint64_t>(), 0u) << b0.dump(1);
  EXPECT_EQ(u64(b0, "frames", "built"), (o.frames + 1) / 2) << b0.dump(1);
  EXPECT_EQ(b0["receiver"]["placed"].get<uint64_t>(), to_b0) << b0.dump(1);
  // The restarted builder 1: what it built is right; frames some node could not send are
  // handed out with that node missing, counted once.
  EXPECT_EQ(b1["check"]["errors"].get<uint64_t>(), 0u) << b1.dump(1);
  EXPECT_GT(u64(b1, "frames", "built"), 0u) << b1.dump(1);
  f.stop_all();
}

// The same fleet with UCX on shared memory (the connection still made over the fleet's TCP
// network): every frame built, byte for byte.
TEST_F(FleetTest, fleetOverSharedMemoryBuildsEveryFrame) {
  FleetLab lab(kIngests, kBuilders);
  FleetOptions o;
  o.transport = "shm";
  o.frames = 200;
  Fleet f(lab, o);
  ASSERT_TRUE(f.start_all()) << f.logs();
  for (unsigned i = 0; i < kIngests; ++i) ASSERT_EQ(f.sensor(i).wait_for(60s), std::optional<int>(0)) << f.logs();
  uint64_t acked = 0, placed = 0, built = 0;
  for (unsigned i = 0; i < kIngests; ++i) {
    const fs::path p = f.dir() / ("ingest" + std::to_string(i) + ".json");
    ASSERT_TRUE(wait_until(30s, [&] { return read_json(p).has_value(); })) << f.logs();
    const json r = *read_json(p);
    expect_ingest_accounting(f, i, r);
    EXPECT_EQ(r["sink"]["total"]["acked"].get<uint64_t>(), r["sink"]["total"]["fragments"].get<uint64_t>()) << r.dump(1);
    acked += r["sink"]["total"]["acked"].get<uint64_t>();
  }
  for (unsigned b = 0; b < kBuilders; ++b) {
    const fs::path p = f.dir() / ("builder" + std::to_string(b) + ".0.json");
    ASSERT_TRUE(wait_until(30s, [&] { return read_json(p).has_value(); })) << f.logs();
    const json r = *read_json(p);
    EXPECT_EQ(r["check"]["errors"].get<uint64_t>(), 0u) << r.dump(1);
    placed += r["receiver"]["placed"].get<uint64_t>();
    built += u64(r, "frames", "built");
  }
  EXPECT_EQ(acked, placed);
  EXPECT_EQ(built, o.frames);
}

}  // namespace
