// GPU frames through a fleet, as a user runs it (docs/fleet.md, "GPU frames"): a sensor
// (`netdaq run`, UDP on the loopback, the netdaq payload format) -> `netdaq ingest` with a
// reorder of `frames: gpu` on the socket engine (frames built in GPU memory by the
// FramePipeline, copied into pinned host staging buffers, sent over UCX) -> `netdaq build`
// (one node, UCX over TCP on 127.0.0.1, --check-payload: every byte of every frame checked
// against what the sensor sent). Every frame must be built, complete and byte for byte, and the
// counters of the three processes must add up. Skips, saying why, without a GPU (CI) or
// without the fleet (UCX) in the build; NETDAQ_REQUIRE_GPU=1 (scripts/gpu-check.sh) fails
// instead of skipping where no GPU is usable.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test_util.h"
#include "metrics_test_util.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr uint64_t kPacketsPerFrame = 64;
constexpr uint64_t kPacketBytes = 1024;
constexpr uint64_t kFrames = 40;

using ndqtest::Child;

// A netdaq CLI process, output in log (tests/metrics' Child: killed if still running at the end).
std::unique_ptr<Child> cli(std::vector<std::string> args, const fs::path& log) {
  args.insert(args.begin(), NETDAQ_CLI);
  return std::make_unique<Child>(args, log);
}

// Waits up to `seconds` for the log to hold `text` (false if the process ended first).
bool logged(Child& c, const std::string& text, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (c.log().find(text) != std::string::npos) return true;
    if (!c.running()) return c.log().find(text) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Its exit status within `seconds` (-1: still running).
int exit_code(Child& c, double seconds) {
  return c.wait_for(std::chrono::milliseconds(int64_t(seconds * 1000))).value_or(-1);
}

// The reorder entry of the ingest node: the payload's own 64-bit sequence number (bytes 8..15,
// little-endian) places packet seq at byte (seq % 64) x 1024 of frame seq / 64, either as a
// slot mode (sequence) or by a decoder's spans (fields).
std::string reorder_yaml(const std::string& mode) {
  std::string r = "        - queue: 0\n          gpu: 0\n          frames: gpu\n          mode: " + mode + "\n";
  if (mode == "sequence")
    r += "          seq_offset: 8\n          seq_bits: 64\n          seq_byte_order: little\n";
  else
    r += "          fields:\n"
         "            frame: {offset: 8, bits: 64, byte_order: little, shift: 6}\n"
         "            index: {offset: 8, bits: 64, byte_order: little, mask: 63}\n";
  r += "          payload_offset: 0\n          payload_size: 1024\n          packets_per_frame: 64\n"
       "          max_open_frames: 4\n          frame_buffers: 16\n          frame_timeout_us: 300000\n"
       "          staging: copy\n";
  return r;
}

class FleetGpuFrames : public ::testing::TestWithParam<const char*> {};

TEST_P(FleetGpuFrames, SensorToGpuFramesToBuilderEveryByteChecked) {
  NDQ_REQUIRE_GPU();
#if !NETDAQ_TEST_HAVE_FLEET
  GTEST_SKIP() << "fleet GPU test skipped: this build has no fleet (UCX not found: apt-get install libucx-dev; "
                  "on the GPU machine scripts/make-carry.sh carries it)";
#endif
  const std::string mode = GetParam();
  const fs::path dir = fs::path(::testing::TempDir()) / ("fleet_gpu_" + mode + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const uint16_t udp = ndqtest::free_port(SOCK_DGRAM), ucx = ndqtest::free_port(SOCK_STREAM);
  ASSERT_NE(udp, 0);
  ASSERT_NE(ucx, 0);
  const std::string ucx_addr = "127.0.0.1:" + std::to_string(ucx);

  std::ofstream(dir / "builder.yaml") << "fleet:\n  nodes: 1\n  listen: \"" << ucx_addr
                                      << "\"\n  transport: tcp\n  buffers: 16\n  max_bytes: 65536\n"
                                         "  timeout_ms: 500\n";
  std::ofstream(dir / "ingest.yaml")
      << "memory_regions:\n  - {name: rx_bufs, kind: pinned, gpu: 0, buf_size: 2048, num_bufs: 8192}\n"
         "interfaces:\n  - name: sensor\n    engine: socket\n    address: udp://127.0.0.1:"
      << udp
      << "\n    rx:\n      queues:\n        - {id: 0, mode: direct, batch_size: 64, memory_regions: [rx_bufs]}\n"
         "      reorder:\n"
      << reorder_yaml(mode)
      << "    socket: {rcvbuf: 16777216}\n"
         "fleet:\n  node: 0\n  nodes: 1\n  destinations: \""
      << ucx_addr
      << "\"\n  route: frame\n  credits: 8\n  when_full: wait\n  wait_ms: 2000\n  transport: tcp\n";
  std::ofstream(dir / "sensor.yaml")
      << "memory_regions:\n  - {name: tx, kind: host, buf_size: 2048, num_bufs: 4096}\n"
         "interfaces:\n  - name: sensor\n    engine: socket\n    tx:\n      destination: udp://127.0.0.1:"
      << udp
      << "\n      rate_pps: 20000\n      queues:\n        - {id: 0, batch_size: 64, ring_depth: 8, "
         "memory_regions: [tx]}\n"
         "run:\n  tx_packets: "
      << kFrames * kPacketsPerFrame << "\n  tx_payload_size: " << kPacketBytes
      << "\n  duration_s: 0\n  drain_ms: 0\n";

  auto builder = cli({"build", (dir / "builder.yaml").string(), "--check-payload", std::to_string(kPacketBytes),
                "--packets-per-frame", std::to_string(kPacketsPerFrame), "--frames", std::to_string(kFrames),
                "--idle-ms", "3000", "--duration", "60", "--json", (dir / "builder.json").string()},
               dir / "builder.log");
  ASSERT_TRUE(logged(*builder, "listening on", 30)) << builder->log();
  auto ingest = cli({"ingest", (dir / "ingest.yaml").string(), "--frames", std::to_string(kFrames), "--idle-ms", "3000",
               "--duration", "60", "--json", (dir / "ingest.json").string(), "--expect-no-loss"},
              dir / "ingest.log");
  // Setup done (the pipeline's GPU buffers and the staging's pinned ones) before the sensor sends.
  ASSERT_TRUE(logged(*ingest, "frames in GPU memory", 60)) << ingest->log();
  auto sensor = cli({"run", (dir / "sensor.yaml").string(), "-q", "--json", (dir / "sensor.json").string()},
                    dir / "sensor.log");
  EXPECT_EQ(exit_code(*sensor, 60), 0) << sensor->log();
  const int ingest_rc = exit_code(*ingest, 90), builder_rc = exit_code(*builder, 60);
  ASSERT_EQ(ingest_rc, 0) << ingest->log();
  ASSERT_EQ(builder_rc, 0) << builder->log();

  const json in = json::parse(ndqtest::read_file(dir / "ingest.json"));
  const json bu = json::parse(ndqtest::read_file(dir / "builder.json"));
  // The ingest node: every packet placed on the GPU, every frame staged and acked.
  EXPECT_EQ(in["packets"]["received"], kFrames * kPacketsPerFrame) << in.dump(2);
  EXPECT_EQ(in["packets"]["dropped"], 0u);
  EXPECT_EQ(in["frames"]["assembler"]["placed"], kFrames * kPacketsPerFrame);
  EXPECT_EQ(in["frames"]["sent"], kFrames);
  EXPECT_EQ(in["frames"]["complete"], kFrames);
  const json& st = in["frames"]["gpu_staging"];
  ASSERT_TRUE(st.is_object()) << in.dump(2);
  EXPECT_EQ(st["frames_staged"], kFrames);
  EXPECT_EQ(st["bytes_staged"], kFrames * kPacketsPerFrame * kPacketBytes);
  EXPECT_EQ(st["dropped_no_staging"], 0u);
  EXPECT_EQ(st["copy_failed"], 0u);
  EXPECT_EQ(in["sink"]["frames"], kFrames);
  EXPECT_EQ(in["sink"]["total"]["acked"], kFrames);
  EXPECT_EQ(in["sink"]["total"]["bytes_acked"], kFrames * kPacketsPerFrame * kPacketBytes);
  EXPECT_TRUE(in["adds_up"].get<bool>());
  EXPECT_TRUE(in["drained"].get<bool>());
  // The builder: every frame built complete, every packet-sized chunk the sensor's bytes.
  EXPECT_EQ(bu["frames"]["built"], kFrames) << bu.dump(2);
  EXPECT_EQ(bu["frames"]["complete"], kFrames);
  EXPECT_EQ(bu["frames"]["timed_out"], 0u);
  EXPECT_EQ(bu["check"]["chunks"], kFrames * kPacketsPerFrame);
  EXPECT_EQ(bu["check"]["chunks_missing"], 0u);
  EXPECT_EQ(bu["check"]["errors"], 0u) << bu["check"]["first_error"];
  EXPECT_EQ(bu["receiver"]["bytes"], kFrames * kPacketsPerFrame * kPacketBytes);
  std::printf("gpu fleet (%s): %llu frames: sensor -> GPU -> %llu bytes staged -> UCX tcp -> built, %llu chunks checked\n",
              mode.c_str(), (unsigned long long)kFrames, (unsigned long long)st["bytes_staged"].get<uint64_t>(),
              (unsigned long long)bu["check"]["chunks"].get<uint64_t>());
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(fleet, FleetGpuFrames, ::testing::Values("sequence", "fields"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
