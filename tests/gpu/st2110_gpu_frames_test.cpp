// ST 2110-20 video end to end on a real GPU: frames packetized by netdaq's VideoSender
// (RFC 4175 RTP payloads, segments cut at 1,200 bytes, lines straddled) land in GPU memory
// through FramePipeline in mode rtp_video, in every launch mode, and are unpacked there
// (unpack_video on the pipeline's stream) into planar uint16 and fp16: every frame complete,
// its bytes the frame sent, its planes the CPU reference's of the frame sent.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "device_array.h"
#include "gpu/host/video_unpack_reference.h"
#include "gpu_test_util.h"
#include "video_sent_packets.h"
#include "netdaq/gpu.h"
#include "netdaq/video_unpack.h"
#include "protocols/rtp_video_format.h"
#include "sensors/video_sender.h"

namespace netdaq::gpu {
namespace {

constexpr uint32_t kFrames = 3;
constexpr size_t kBurst = 256;

using SentPackets = ndqtest::VideoSentPackets;

// The stream's work done, waiting 20 s at most (a stalled GPU fails instead of hanging).
cudaError_t finished(cudaStream_t s) {
  for (int i = 0; i < 20'000; ++i) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e != cudaErrorNotReady) return e;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return cudaErrorNotReady;
}

class st2110_gpu_frames : public ::testing::TestWithParam<ndqtest::LaunchCase> {
 protected:
  void SetUp() override { NDQ_REQUIRE_GPU(); }
};

TEST_P(st2110_gpu_frames, sent_frames_unpack_to_the_reference_planes) {
  VideoOptions v;
  v.width = 1920;
  v.height = 1080;
  v.depth = 10;
  v.rate_num = 60;
  const uint64_t frame_bytes = protocols::video::frame_bytes(v);
  std::vector<std::byte> frames(frame_bytes * kFrames);
  std::mt19937_64 rng(2110);
  for (auto& b : frames) b = std::byte(rng() & 0xFF);

  sensors::VideoSenderConfig sc;
  sc.video = v;
  sc.payload_size = 1200;
  sensors::VideoSender tx(sc);
  tx.set_frames(frames);
  SentPackets packets(tx, size_t{tx.packets_per_frame()} * kFrames);
  ASSERT_TRUE(packets.ok());
  for (size_t i = 0; i < packets.size(); ++i) ASSERT_GT(packets.len(i), 0u) << "packet " << i;

  ReorderConfig c;
  c.mode = ReorderMode::rtp_video;
  c.video = v;
  c.launch = GetParam().launch;
  c.staging = GetParam().staging;
  c.max_open_frames = 2;
  c.frame_buffers = 8;
  c.bursts_in_flight = 3;
  c.frame_timeout_us = 10'000'000;  // frames close by their marker
  // Planes for one frame, uint16 and fp16 (tight pitches), allocated before the pipeline and
  // freed after it: cudaMalloc / cudaFree may synchronize the device, which waits forever for
  // a running persistent kernel (docs/gpu.md).
  VideoPlanes planes[2];
  uint64_t plane_bytes = 0;
  for (int k = 0; k < 3; ++k) plane_bytes += uint64_t{plane_width(v, k)} * 2 * v.height;
  ndqtest::DeviceArray<std::byte> plane_mem(2 * plane_bytes);
  ASSERT_NE(plane_mem.p, nullptr);
  std::byte* at = plane_mem.p;
  for (int t = 0; t < 2; ++t) {
    planes[t].type = t == 0 ? PlaneType::uint16 : PlaneType::fp16;
    for (int k = 0; k < 3; ++k) {
      planes[t].pitch[k] = uint64_t{plane_width(v, k)} * 2;
      planes[t].data[k] = at;
      at += planes[t].pitch[k] * v.height;
    }
  }

  FramePipeline p(c);
  ASSERT_EQ(p.frame_bytes(), frame_bytes);

  uint32_t seen = 0;
  const auto take = [&] {
    while (Frame f = p.next_frame()) {
      ASSERT_LT(seen, kFrames);
      EXPECT_TRUE(f.complete()) << "frame " << f.index() << ": " << f.packets_received() << " of "
                                << f.packets_expected() << " granules";
      ASSERT_EQ(f.size_bytes(), frame_bytes);
      const std::byte* sent = frames.data() + seen * frame_bytes;
      std::vector<std::byte> bytes(frame_bytes);
      CUDA_OK(cudaMemcpy(bytes.data(), f.data(), frame_bytes, cudaMemcpyDeviceToHost));
      EXPECT_TRUE(std::memcmp(bytes.data(), sent, frame_bytes) == 0) << "frame " << seen << "'s bytes";
      for (const VideoPlanes& dev : planes) {
        unpack_video(v, f.data(), dev, p.stream());  // ordered after the frame's placement
        CUDA_OK(finished(p.stream()));
        std::vector<std::byte> got[3], want[3];
        VideoPlanes host = dev;
        for (int k = 0; k < 3; ++k) {
          got[k].resize(dev.pitch[k] * v.height);
          want[k].resize(dev.pitch[k] * v.height);
          host.data[k] = want[k].data();
          CUDA_OK(cudaMemcpy(got[k].data(), dev.data[k], got[k].size(), cudaMemcpyDeviceToHost));
        }
        unpack_reference(v, sent, host);
        for (int k = 0; k < 3; ++k)
          EXPECT_TRUE(got[k] == want[k]) << "frame " << seen << ", plane " << k << " ("
                                         << (dev.type == PlaneType::fp16 ? "fp16" : "uint16") << ")";
      }
      ++seen;
    }
  };
  for (size_t at = 0; at < packets.size(); at += kBurst) {
    p.submit(packets.burst(at, std::min(kBurst, packets.size() - at)));
    take();
    if (HasFatalFailure()) return;
  }
  p.flush();
  for (int spins = 0; spins < 20 && seen < kFrames; ++spins) {
    p.synchronize();
    take();
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(seen, kFrames);
  const PipelineStats s = p.stats();
  EXPECT_TRUE(ndqtest::pipeline_accounted(s));
  EXPECT_EQ(s.packets_in, packets.size());
  EXPECT_EQ(s.packets_placed, packets.size());
  EXPECT_EQ(s.frames_complete, kFrames);
  EXPECT_EQ(s.malformed, 0u) << p.last_malformed();
}

// launch persistent too: the test's own unpack kernel runs on the SMs the persistent kernel
// leaves free (persistent_sms auto: half), as an application's kernels do.
INSTANTIATE_TEST_SUITE_P(Modes, st2110_gpu_frames,
                         ::testing::Values(ndqtest::LaunchCase{LaunchMode::per_burst, Staging::copy},
                                           ndqtest::LaunchCase{LaunchMode::per_burst, Staging::direct},
                                           ndqtest::LaunchCase{LaunchMode::graph, Staging::copy},
                                           ndqtest::LaunchCase{LaunchMode::persistent, Staging::copy},
                                           ndqtest::LaunchCase{LaunchMode::persistent, Staging::direct}),
                         ndqtest::launch_case_name);

}  // namespace
}  // namespace netdaq::gpu
