// `netdaq replay FILE --to CONFIG` as a user runs it (label cli): the config's rx interface fed
// from a capture, the same summary (and JSON) as `netdaq run`, every record accounted, loops,
// pace, whole frames, and clear errors for missing, truncated and corrupt files. The last test
// replays real veth traffic recorded with `netdaq capture` (root and the afxdp engine; with
// CI=true their absence fails it).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "afxdp_util.h"
#include "netns_lab.h"
#include "replay_util.h"
#include "test_paths.h"

using namespace ndqtest;
using Json = nlohmann::json;

namespace {

constexpr uint16_t kLoopbackPort = 46000;  // examples/loopback.yaml's receiver
constexpr size_t kN = 2000, kSize = 1472;

std::string example(const std::string& name) { return std::string(NETDAQ_SOURCE_DIR) + "/examples/" + name; }

struct Cli {
  int status = -1;
  std::string out;
};
Cli run_netdaq(std::vector<std::string> args) {
  args.insert(args.begin(), NETDAQ_CLI);
  Cli r;
  r.status = run_command(args, &r.out);
  return r;
}

Json read_json(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return Json::parse(s.str(), nullptr, false);
}

// kN netdaq payloads to 127.0.0.1:46000 (stream 0), 1 ms apart, with 10 ARP records, 5 UDP
// records to another port and 4 cut short in the capture mixed in.
struct Mixed {
  std::vector<Record> records;
  size_t arp = 10, other_port = 5, cut = 4;
};
Mixed mixed_file() {
  Mixed m;
  const uint64_t t0 = 1'700'000'000'000'000'000ull;
  for (size_t i = 0; i < kN; ++i) {
    m.records.push_back({t0 + i * 1'000'000, udp_frame(netdaq_payload(0, i, kSize), kLoopbackPort)});
    if (i % 200 == 1) m.records.push_back({t0 + i * 1'000'000 + 1, arp_frame()});
    if (i % 400 == 2) m.records.push_back({t0 + i * 1'000'000 + 2, udp_frame(netdaq_payload(1, i, 64), 9999)});
    if (i % 600 == 3) {
      Bytes f = udp_frame(netdaq_payload(0, 99999, 800), kLoopbackPort);
      const auto wire = uint32_t(f.size());
      f.resize(96);
      m.records.push_back({t0 + i * 1'000'000 + 3, f, wire});
    }
  }
  return m;
}

const Json& rx_queue_of(const Json& j) {
  for (const auto& q : j["queues"])
    if (q["direction"] == "rx") return q;
  static const Json none;
  ADD_FAILURE() << "no rx queue in " << j.dump();
  return none;
}

}  // namespace

TEST(ReplayCli, FeedsTheLoopbackExampleFromAFileWithTheRunSummaryAndEveryRecordCounted) {
  TempFile pcap, json;
  const Mixed m = mixed_file();
  write_pcap(pcap.path, m.records);
  const Cli r = run_netdaq({"replay", pcap.path, "--to", example("loopback.yaml"), "-q", "--json", json.path});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("netdaq replay: " + pcap.path + " -> " + example("loopback.yaml") + " interface receiver"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("summary ("), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("interrupted"), std::string::npos) << "the end of the file ends the run\n" << r.out;
  EXPECT_NE(r.out.find("total: lost 0, drops 19, malformed 0"), std::string::npos) << r.out;
  const Json j = read_json(json.path);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["totals"]["rx_packets"], kN);
  EXPECT_EQ(j["totals"]["tx_packets"], 0);
  EXPECT_EQ(j["totals"]["lost"], 0);
  EXPECT_EQ(j["totals"]["malformed"], 0);
  ASSERT_EQ(j["streams"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["streams"][0]["unique"], kN);
  EXPECT_EQ(j["streams"][0]["received"], kN);
  const Json& q = rx_queue_of(j);
  EXPECT_EQ(q["bytes"], kN * kSize);
  EXPECT_EQ(q["drops"]["malformed"], m.arp + m.cut) << q.dump(2);
  EXPECT_EQ(q["drops"]["flow_miss"], m.other_port) << "UDP to another port than the receiver's address";
  EXPECT_EQ(q["engine"]["records"], m.records.size()) << "records read == delivered + drops";
  EXPECT_EQ(q["packets"].get<uint64_t>() + j["totals"]["drops"].get<uint64_t>(), m.records.size());
  // drops are loss to --expect-no-loss
  EXPECT_EQ(run_netdaq({"replay", pcap.path, "--to", example("loopback.yaml"), "-q", "--expect-no-loss"}).status, 2);
}

TEST(ReplayCli, LoopPaceFramesAndAllAreOptions) {
  TempFile pcap, json;
  const Mixed m = mixed_file();
  write_pcap(pcap.path, m.records);
  const std::string cfg = example("loopback.yaml");
  Cli r = run_netdaq({"replay", pcap.path, "--to", cfg, "-q", "--loop", "3", "--json", json.path});
  ASSERT_EQ(r.status, 0) << r.out;
  Json j = read_json(json.path);
  EXPECT_EQ(j["totals"]["rx_packets"], 3 * kN);
  EXPECT_EQ(j["streams"][0]["unique"], kN);
  EXPECT_EQ(j["streams"][0]["duplicates"], 2 * kN) << "passes 2 and 3 repeat the sequence numbers";
  EXPECT_EQ(rx_queue_of(j)["engine"]["passes"], 3);
  EXPECT_NE(r.out.find("udp payloads, asap, 3 passes"), std::string::npos) << r.out;

  // --all: the payloads to port 9999 too (stream 1)
  r = run_netdaq({"replay", pcap.path, "--to", cfg, "-q", "--all", "--json", json.path});
  ASSERT_EQ(r.status, 0) << r.out;
  j = read_json(json.path);
  EXPECT_EQ(j["totals"]["rx_packets"], kN + m.other_port);
  EXPECT_EQ(rx_queue_of(j)["drops"]["flow_miss"], 0);

  // --frames: whole frames, counted only (ARP included; the cut ones are still malformed)
  r = run_netdaq({"replay", pcap.path, "--to", cfg, "-q", "--frames", "--all", "--json", json.path});
  ASSERT_EQ(r.status, 0) << r.out;
  j = read_json(json.path);
  EXPECT_EQ(j["totals"]["rx_packets"], m.records.size() - m.cut);
  EXPECT_EQ(rx_queue_of(j)["bytes"].get<uint64_t>() > kN * kSize, true);

  // --speed implies the recorded pace: 2 s recorded at x8, about 0.25 s (loose bounds)
  r = run_netdaq({"replay", pcap.path, "--to", cfg, "-q", "--speed", "8", "--json", json.path});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("recorded pace x8"), std::string::npos) << r.out;
  j = read_json(json.path);
  EXPECT_EQ(j["totals"]["rx_packets"], kN);
  EXPECT_GE(j["seconds"].get<double>(), 0.2) << "recorded pace: about 2 s / 8";
  EXPECT_LT(j["seconds"].get<double>(), 30.0);
}

TEST(ReplayCli, MissingTruncatedAndCorruptFilesAreClearErrors) {
  const std::string cfg = example("loopback.yaml");
  Cli r = run_netdaq({"replay", "/nonexistent/capture.pcap", "--to", cfg});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("/nonexistent/capture.pcap: cannot open the capture: No such file or directory"),
            std::string::npos)
      << r.out;

  TempFile pcap;
  Bytes b = pcap_bytes(mixed_file().records);
  b.resize(b.size() - 100);
  write_file(pcap.path, b);
  r = run_netdaq({"replay", pcap.path, "--to", cfg, "-q"});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(pcap.path + ": record [0-9]+: truncated"))) << r.out;
  EXPECT_EQ(r.out.find("summary"), std::string::npos) << "nothing runs from a bad file\n" << r.out;

  write_file(pcap.path, Bytes(64, std::byte{0x42}));
  r = run_netdaq({"replay", pcap.path, "--to", cfg, "-q"});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find(pcap.path + ": not a readable pcap or pcapng file"), std::string::npos) << r.out;

  // a config with rx queues on two interfaces needs --interface
  TempFile two;
  std::ofstream(two.path) << "memory_regions:\n  - {name: b, buf_size: 2048, num_bufs: 8192}\n"
                             "interfaces:\n"
                             "  - {name: a, address: 'udp://127.0.0.1:46001', rx: {queues: [{id: 0, memory_regions: [b]}]}}\n"
                             "  - {name: c, address: 'udp://127.0.0.1:46002', rx: {queues: [{id: 0, memory_regions: [b]}]}}\n";
  write_pcap(pcap.path, {});
  r = run_netdaq({"replay", pcap.path, "--to", two.path, "-q"});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("rx queues on several interfaces (a, c): choose one with --interface NAME"), std::string::npos)
      << r.out;
  r = run_netdaq({"replay", pcap.path, "--to", two.path, "-q", "--interface", "c"});
  EXPECT_EQ(r.status, 0) << "an empty capture: nothing to replay, a clean end\n" << r.out;
}

TEST(ReplayCli, ReplaysARealNetdaqCaptureWithoutLoss) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  TempFile pcap, json;
  std::vector<Bytes> payloads;
  for (size_t i = 0; i < kN; ++i) payloads.push_back(netdaq_payload(0, i, kSize, 1000 + i));
  const Captured cap = capture_stream(lab, 46330, payloads, pcap.path);
  ASSERT_TRUE(cap.ok);
  // The capture's destination is A's address: --all lets every UDP payload through.
  const Cli r = run_netdaq({"replay", pcap.path, "--to", example("loopback.yaml"), "--all", "-q", "--expect-no-loss",
                        "--json", json.path});
  ASSERT_EQ(r.status, 0) << r.out;
  const Json j = read_json(json.path);
  EXPECT_EQ(j["totals"]["rx_packets"], kN);
  EXPECT_EQ(j["totals"]["lost"], 0);
  EXPECT_EQ(j["totals"]["drops"], 0);
  EXPECT_EQ(j["totals"]["malformed"], 0) << "every pattern byte checked";
  EXPECT_EQ(j["streams"][0]["unique"], kN);
  EXPECT_EQ(rx_queue_of(j)["bytes"], kN * kSize);
  EXPECT_EQ(rx_queue_of(j)["engine"]["records"], kN);
}
