#include "rings_cli_scenario.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <memory>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "afxdp_util.h"
#include "netns_lab.h"
#include "peer_process.h"
#include "test_util.h"

namespace ndqtest {

using namespace netdaq;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

constexpr uint16_t kPort = 46330;
constexpr uint32_t kSize = 1032, kPerFrame = 32;  // 8-byte sequence + 1,024 sample bytes

// An afxdp receiver on dev whose queue's rings go to the frame builder (frames: host, or gpu
// with the UMEM mapped into GPU 0). 64 frame
// buffers, more than any test here sends frames: on CI's 2 cores the sender and the builder's
// thread can keep the CLI's frame-taking thread off a core for milliseconds, and with 16 the
// builder then ran out of free frames (64 packets counted no_buffer: loss the run reported,
// not the one these tests look for; XskFrameReceiver's own tests starve it on purpose).
std::string rings_yaml(const std::string& dev, RingsFrames frames, const std::string& extra_reorder_keys = "") {
  const bool gpu = frames == RingsFrames::gpu;
  return std::string("memory_regions:\n  - {name: umem, kind: ") + (gpu ? "mapped, gpu: 0" : "host") +
         ", buf_size: 2048, num_bufs: 8192}\n"
         "interfaces:\n  - name: x0\n    engine: afxdp\n    address: " + dev +
         "\n    rx:\n      queues:\n        - {id: 0, mode: direct, batch_size: 64, ring_depth: 16, "
         "memory_regions: [umem]}\n"
         "      flows:\n        - {id: 1, queue: 0, match: {udp_dst: " + std::to_string(kPort) + "}}\n"
         "      reorder:\n        - queue: 0\n          launch: rings\n          frames: " + (gpu ? "gpu" : "host") + "\n"
         "          seq_offset: 0\n          seq_bits: 64\n          seq_byte_order: little\n"
         "          payload_offset: 8\n          payload_size: 1024\n          packets_per_frame: " +
         std::to_string(kPerFrame) + "\n          frame_buffers: 64\n          frame_timeout_us: 200000\n" +
         extra_reorder_keys + "run:\n  duration_s: 5\n  drain_ms: 0\n";
}

std::string write_config(const TempFile& f, const std::string& yaml) {
  std::ofstream(f.path) << yaml;
  return f.path;
}

// Sends `count` numbered payloads from the peer namespace (paced: veth's copy path keeps up).
void send_from_b(NetnsLab& lab, uint64_t first, size_t count) {
  Iface ts;
  ts.destination = "udp://" + lab.a().ip4 + ":" + std::to_string(kPort);
  ts.tx_queues = 1;
  ts.rate_pps = 50000;
  auto tx = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(ts.build()); });
  EXPECT_EQ(send_sequence(tx->tx_queue("if0"), first, count, kSize), count);
  EXPECT_TRUE(sender_accounted(count, tx->tx_queue("if0").stats()));
}

// GET /metrics of a netdaq in namespace ns ("" when nothing answers).
std::string scrape_in(NetnsLab& lab, const std::string& ns, uint16_t port) {
  return lab.run_in(ns, [&] {
    httplib::Client cli("127.0.0.1", port);
    cli.set_connection_timeout(2, 0);
    auto res = cli.Get("/metrics");
    return res && res->status == 200 ? res->body : std::string();
  });
}

json run_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, false);
}

}  // namespace

void rings_cli_places_every_packet(RingsFrames frames, const std::string& cli) {
  NDQ_REQUIRE_AFXDP();
  constexpr size_t kFrames = 60, kN = kFrames * kPerFrame;
  NetnsLab lab;
  TempFile cfg, out;
  const std::string path = write_config(cfg, rings_yaml(lab.a().veth, frames));
  constexpr uint16_t kMetrics = 46331;
  PeerProcess rx(lab.a().ns, {cli, "run", path, "--json", out.path, "--metrics",
                              "127.0.0.1:" + std::to_string(kMetrics), "--metrics-linger", "30"});
  ASSERT_TRUE(rx.wait_for_output("Ctrl-C stops", 15s)) << rx.command() << "\n" << rx.output();
  send_from_b(lab, 0, kN);
  // The final counters, served once the summary is out, until Ctrl-C.
  ASSERT_TRUE(rx.wait_for_output("metrics: serving the final counters", 20s)) << rx.output();
  const std::string metrics = scrape_in(lab, lab.a().ns, kMetrics);
  for (const std::string line :
       {"netdaq_rx_packets_total{interface=\"x0\",queue=\"x0/rx0\"} 1920",
        "netdaq_gpu_packets_total{interface=\"x0\",queue=\"x0/rx0\",result=\"placed\"} 1920",
        "netdaq_gpu_frames_total{interface=\"x0\",queue=\"x0/rx0\",result=\"complete\"} 60"})
    EXPECT_NE(metrics.find(line), std::string::npos) << line << "\n" << metrics;
  ASSERT_EQ(rx.stop(SIGINT, 10s), 0) << rx.output();
  const std::string text = rx.output();
  std::printf("%s", text.c_str());
  const json j = run_json(out.path);
  ASSERT_FALSE(j.is_discarded()) << text;
  ASSERT_EQ(j["gpu"].size(), 1u) << j.dump(1);
  const json& g = j["gpu"][0];
  EXPECT_EQ(g["packets_in"], kN) << j.dump(1);
  EXPECT_EQ(g["packets_placed"], kN);
  EXPECT_EQ(g["frames_complete"], kFrames);
  EXPECT_EQ(g["frames_out"], kFrames) << "every frame taken by the CLI's thread, the last at the stop";
  for (const char* k : {"frames_incomplete", "duplicate", "late", "malformed", "no_buffer", "packets_missing"})
    EXPECT_EQ(g[k], 0) << k;
  if (frames == RingsFrames::gpu)
    EXPECT_EQ(g["bytes_to_gpu"], kN * 1024) << "frames: gpu: every sample byte to the GPU";
  else
    EXPECT_EQ(g["bytes_to_gpu"], 0) << "frames: host: nothing goes to a GPU";
  EXPECT_TRUE(j["ok"].get<bool>()) << j.dump(1);
  EXPECT_EQ(j["totals"]["lost"], 0);
  // The rx queue's row counts the packets the rings' owner took (the queue itself saw none).
  ASSERT_EQ(j["queues"].size(), 1u) << j.dump(1);
  EXPECT_EQ(j["queues"][0]["packets"], kN) << j.dump(1);
  EXPECT_EQ(j["queues"][0]["bytes"], kN * kSize);
  EXPECT_NE(text.find("frames 60 complete"), std::string::npos) << text;
  EXPECT_NE(text.find("1,920 placed"), std::string::npos) << text;
  EXPECT_FALSE(xdp_attached(lab, lab.a())) << "the run leaves no XDP program";
}


void rings_cli_counts_missing_and_late(RingsFrames frames, const std::string& cli) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  TempFile cfg, out;
  const std::string path = write_config(cfg, rings_yaml(lab.a().veth, frames, "          max_open_frames: 2\n"));
  PeerProcess rx(lab.a().ns, {cli, "run", path, "--json", out.path});
  ASSERT_TRUE(rx.wait_for_output("Ctrl-C stops", 15s)) << rx.command() << "\n" << rx.output();
  constexpr size_t kGap = 4 * kPerFrame + 5;
  send_from_b(lab, 0, kGap);
  send_from_b(lab, kGap + 3, 10 * kPerFrame - kGap - 3);
  send_from_b(lab, kPerFrame, kPerFrame);
  const int status = rx.wait(20s);
  const json j = run_json(out.path);
  ASSERT_FALSE(j.is_discarded()) << rx.output();
  const json& g = j["gpu"][0];
  EXPECT_EQ(g["packets_in"], 11 * kPerFrame - 3) << j.dump(1);
  EXPECT_EQ(g["packets_placed"], 10 * kPerFrame - 3);
  EXPECT_EQ(g["late"], kPerFrame);
  EXPECT_EQ(g["packets_missing"], 3);
  EXPECT_EQ(g["frames_complete"], 9);
  EXPECT_EQ(g["frames_incomplete"], 1);
  EXPECT_EQ(j["totals"]["lost"], 3 + kPerFrame) << j.dump(1);
  EXPECT_FALSE(j["ok"].get<bool>()) << "late packets are in no frame: " << j.dump(1);
  EXPECT_EQ(status, 0) << "without --expect-no-loss the run still exits 0\n" << rx.output();
}

}  // namespace ndqtest
