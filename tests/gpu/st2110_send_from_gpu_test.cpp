// Issue 33, sending video whose frames are in GPU memory: DeviceFrameReader brings frame k into
// pinned slot k % 2 while frame k - 1 is sent, and `netdaq video-send --from-gpu` sends through
// it. Checked end to end: the CLI sends pattern frames held on the GPU over loopback, netdaq's
// socket engine receives them (mode rtp_video, host frames), and every frame must equal the
// pattern frame it was made from, byte for byte.
#include <cuda_runtime_api.h>

#include <chrono>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test_util.h"
#include "netdaq/device_frames.h"
#include "netdaq/host_frames.h"
#include "netdaq/session.h"
#include "sensors/video_sender.h"

using namespace netdaq;

namespace {

std::vector<std::byte> distinct_frames(size_t frame_bytes, size_t count) {
  std::vector<std::byte> v(frame_bytes * count);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::byte((i / frame_bytes) * 37 + i * 7 + (i >> 11));
  return v;
}

}  // namespace

TEST(st2110GpuSend, ReaderPutsFrameKInSlotKMod2) {
  NDQ_REQUIRE_GPU();
  constexpr size_t kBytes = 3 << 20, kCount = 3;
  const auto host = distinct_frames(kBytes, kCount);
  gpu::DeviceCopy dev(host, 0);
  gpu::DeviceFrameReader r(dev.data(), kBytes, kCount, 0);
  ASSERT_EQ(r.slots().size(), 2 * kBytes);
  // in order (each prefetched by the call before), then a jump (read at once), then in order
  for (uint64_t k : {0, 1, 2, 3, 4, 9, 10, 11}) {
    r.begin_frame(k);
    const auto slot = r.slots().subspan((k % 2) * kBytes, kBytes);
    ASSERT_EQ(std::memcmp(slot.data(), host.data() + (k % kCount) * kBytes, kBytes), 0) << "frame " << k;
  }
}

TEST(st2110GpuSend, VideoSendFromGpuFramesArriveByteForByte) {
  NDQ_REQUIRE_GPU();
  constexpr uint16_t kPort = 47311;
  constexpr uint32_t kFrames = 12, kPatterns = 5;
  const std::string yaml =
      "memory_regions:\n"
      "  - {name: bufs, kind: host, buf_size: 2048, num_bufs: 16384}\n"
      "interfaces:\n"
      "  - name: video\n"
      "    engine: socket\n"
      "    address: udp://127.0.0.1:" + std::to_string(kPort) + "\n"
      "    rx:\n"
      "      queues:\n"
      "        - {id: 0, mode: direct, batch_size: 64, memory_regions: [bufs]}\n"
      "      reorder:\n"
      "        - queue: 0\n"
      "          mode: rtp_video\n"
      "          frames: host\n"
      "          video: {width: 1280, height: 720, sampling: YCbCr-4:2:2, depth: 10, exactframerate: 60}\n"
      "          frame_timeout_us: 1000000\n"
      "    socket: {rcvbuf: 67108864}\n"
      "log: {level: warn}\n";
  const Config cfg = Config::parse(yaml, "st2110_send_from_gpu");
  Session rx(cfg);
  RxQueue& rq = *rx.rx_queues().front();
  HostFrameAssembler frames(cfg.interfaces[0].rx.reorder[0]);

  const std::string out = ::testing::TempDir() + "video_send_from_gpu.json";
  const std::string cmd = std::string(NETDAQ_CLI) + " video-send --from-gpu 0 --width 1280 --height 720 -n " +
                          std::to_string(kFrames) + " --pattern-frames " + std::to_string(kPatterns) +
                          " --destination udp://127.0.0.1:" + std::to_string(kPort) + " --json > " + out + " 2>&1";
  std::atomic<int> status{-1};
  std::thread sender([&] { status = std::system(("timeout 60 " + cmd).c_str()); });

  std::vector<std::vector<std::byte>> got;
  std::vector<bool> complete;
  const auto take = [&] {
    HostFrameView f;
    while (frames.pop(f)) {
      got.emplace_back(f.bytes.begin(), f.bytes.end());
      complete.push_back(f.complete);
      frames.release(f);
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(70);
  std::chrono::steady_clock::time_point settle{};
  while (std::chrono::steady_clock::now() < deadline) {
    RxBurst b = rq.poll();
    if (!b.empty()) {
      frames.receive(b, static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
      b.release();
      take();
      continue;
    }
    if (status >= 0 && settle == std::chrono::steady_clock::time_point{})
      settle = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    if (settle != std::chrono::steady_clock::time_point{} && std::chrono::steady_clock::now() > settle) break;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  sender.join();
  frames.flush();
  take();
  std::stringstream json;
  json << std::ifstream(out).rdbuf();
  ASSERT_EQ(status.load(), 0) << cmd << "\n" << json.str();
  EXPECT_NE(json.str().find("\"from_gpu\""), std::string::npos) << json.str();
  EXPECT_EQ(rq.stats().total_drops(), 0u) << "queue drops: " << rq.stats().total_drops();

  sensors::VideoSenderConfig sc;
  sc.video = cfg.interfaces[0].rx.reorder[0].video;
  const sensors::VideoSender ref(sc);
  ASSERT_EQ(got.size(), kFrames) << json.str();
  std::vector<std::byte> want(ref.frame_bytes());
  for (uint32_t k = 0; k < kFrames; ++k) {
    sensors::write_video_test_pattern(sc.video, k % kPatterns, want);
    EXPECT_TRUE(complete[k]) << "frame " << k;
    ASSERT_EQ(got[k].size(), want.size());
    EXPECT_EQ(std::memcmp(got[k].data(), want.data(), want.size()), 0) << "frame " << k << " differs from pattern frame " << k % kPatterns;
  }
}
