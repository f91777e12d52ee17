// The pipeline's own unpack (rx.reorder.video.unpack): FramePipeline in mode rtp_video
// unpacks each frame into its buffer's planes before handing it out, in every launch mode
// (persistent: on the SMs its kernel leaves free; with persistent_sms = every SM it is
// refused at construction, checked here).
// Frames packetized by VideoSender (1,200-byte segments, lines straddled), one frame with
// packets dropped; each frame's planes, read the moment the frame comes out with no further
// synchronization, must equal the CPU reference's planes of the frame's bytes (and of the
// frame sent, when complete). Formats: 10-bit and 8-bit YCbCr-4:2:2, 8-bit RGB; uint16, fp16.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
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

struct UnpackCase {
  const char* name;
  VideoOptions video;
};

std::vector<UnpackCase> cases() {
  VideoOptions ycc10{.width = 1920, .height = 1080, .depth = 10, .rate_num = 60, .unpack = VideoUnpack::uint16};
  VideoOptions ycc8{.width = 1280, .height = 720, .depth = 8, .rate_num = 60, .unpack = VideoUnpack::fp16};
  VideoOptions rgb8{.width = 640, .height = 360, .sampling = VideoSampling::rgb, .depth = 8, .rate_num = 50,
                    .unpack = VideoUnpack::uint16};
  VideoOptions ycc10h = ycc10;
  ycc10h.unpack = VideoUnpack::fp16;
  return {{"ycbcr422_10_uint16", ycc10}, {"ycbcr422_10_fp16", ycc10h}, {"ycbcr422_8_fp16", ycc8}, {"rgb_8_uint16", rgb8}};
}

class st2110_pipeline_unpack : public ::testing::TestWithParam<ndqtest::LaunchCase> {
 protected:
  void SetUp() override { NDQ_REQUIRE_GPU(); }
};

// One format through one pipeline; frame 1 loses packets [1/3, 2/3) of its packets.
void run_case(const UnpackCase& uc, const ndqtest::LaunchCase& lc) {
  SCOPED_TRACE(uc.name);
  const VideoOptions& v = uc.video;
  const uint64_t frame_bytes = protocols::video::frame_bytes(v);
  std::vector<std::byte> frames(frame_bytes * kFrames);
  std::mt19937_64 rng(2110 + v.width);
  for (auto& b : frames) b = std::byte(rng() & 0xFF);

  sensors::VideoSenderConfig sc;
  sc.video = v;
  sc.payload_size = 1200;
  sensors::VideoSender tx(sc);
  tx.set_frames(frames);
  const size_t per_frame = tx.packets_per_frame();
  SentPackets packets(tx, per_frame * kFrames);
  ASSERT_TRUE(packets.ok());
  const size_t drop_from = per_frame + per_frame / 3, drop_to = per_frame + 2 * per_frame / 3;

  ReorderConfig c;
  c.mode = ReorderMode::rtp_video;
  c.video = v;
  c.launch = lc.launch;
  c.staging = lc.staging;
  c.max_open_frames = 2;
  c.frame_buffers = 4;
  c.bursts_in_flight = 3;
  c.frame_timeout_us = 10'000'000;  // frames close by their marker (frame 1's is kept)
  FramePipeline p(c);
  ASSERT_EQ(p.frame_bytes(), frame_bytes);

  uint32_t seen = 0;
  const auto take = [&] {
    while (Frame f = p.next_frame()) {
      ASSERT_LT(seen, kFrames);
      ASSERT_NE(f.planes(), nullptr);
      const VideoPlanes& dev = *f.planes();
      EXPECT_EQ(dev.type, v.unpack == VideoUnpack::fp16 ? PlaneType::fp16 : PlaneType::uint16);
      EXPECT_EQ(f.complete(), seen != 1) << "frame " << seen;
      std::vector<std::byte> bytes(frame_bytes);
      CUDA_OK(cudaMemcpy(bytes.data(), f.data(), frame_bytes, cudaMemcpyDeviceToHost));
      const std::byte* sent = frames.data() + seen * frame_bytes;
      if (seen != 1) EXPECT_TRUE(std::memcmp(bytes.data(), sent, frame_bytes) == 0) << "frame " << seen << "'s bytes";
      else EXPECT_FALSE(std::memcmp(bytes.data(), sent, frame_bytes) == 0) << "frame 1 lost packets";
      // Planes as handed out: no synchronization beyond next_frame's.
      std::vector<std::byte> got[3], want[3];
      VideoPlanes host = dev;
      for (int k = 0; k < 3; ++k) {
        ASSERT_GE(dev.pitch[k], uint64_t{plane_width(v, k)} * 2);
        EXPECT_EQ(dev.pitch[k] % 16, 0u);
        got[k].resize(dev.pitch[k] * v.height);
        want[k].assign(got[k].size(), std::byte{0});
        host.data[k] = want[k].data();
        CUDA_OK(cudaMemcpy(got[k].data(), dev.data[k], got[k].size(), cudaMemcpyDeviceToHost));
      }
      unpack_reference(v, bytes.data(), host);
      for (int k = 0; k < 3; ++k) {
        const uint64_t line = uint64_t{plane_width(v, k)} * 2;
        bool same = true;
        for (uint32_t row = 0; row < v.height && same; ++row)
          same = std::memcmp(got[k].data() + row * dev.pitch[k], want[k].data() + row * dev.pitch[k], line) == 0;
        EXPECT_TRUE(same) << "frame " << seen << ", plane " << k;
      }
      ++seen;
    }
  };
  for (size_t at = 0; at < packets.size(); at += kBurst) {
    p.submit(packets.burst(at, std::min(kBurst, packets.size() - at), drop_from, drop_to));
    take();
    if (::testing::Test::HasFatalFailure()) return;
  }
  p.flush();
  for (int spins = 0; spins < 20 && seen < kFrames; ++spins) {
    p.synchronize();
    take();
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_EQ(seen, kFrames);
  const PipelineStats s = p.stats();
  EXPECT_TRUE(ndqtest::pipeline_accounted(s));
  EXPECT_EQ(s.frames_complete, kFrames - 1);
  EXPECT_EQ(s.frames_incomplete, 1u);
  EXPECT_EQ(s.gpu_errors, 0u);
  EXPECT_EQ(s.malformed, 0u) << p.last_malformed();
}

TEST_P(st2110_pipeline_unpack, planes_equal_the_reference_in_every_format) {
  for (const UnpackCase& uc : cases()) {
    run_case(uc, GetParam());
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, st2110_pipeline_unpack, ndqtest::every_launch_mode(), ndqtest::launch_case_name);

// launch persistent with every SM taken: the unpack kernel could never run beside it (each of
// the persistent kernel's CTAs takes its SM's registers), so the pipeline refuses at construction.
TEST(st2110_pipeline_unpack_persistent, every_sm_taken_is_refused) {
  NDQ_REQUIRE_GPU();
  int sms = 0;
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  ReorderConfig c;
  c.mode = ReorderMode::rtp_video;
  c.video = VideoOptions{.width = 640, .height = 360, .depth = 10, .rate_num = 60, .unpack = VideoUnpack::uint16};
  c.launch = LaunchMode::persistent;
  c.persistent_sms = static_cast<uint32_t>(sms);
  try {
    FramePipeline refused(c);
    ADD_FAILURE() << "video.unpack with persistent_sms = every SM was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_config);
    EXPECT_NE(std::string(e.what()).find("the unpack kernel would never run"), std::string::npos) << e.what();
  }
  c.persistent_sms = static_cast<uint32_t>(sms) + 1;
  try {
    FramePipeline refused(c);
    ADD_FAILURE() << "persistent_sms above the SM count was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has " + std::to_string(sms) + " SMs"), std::string::npos) << e.what();
  }
}

// Without video.unpack a frame has no planes.
TEST(st2110_pipeline_unpack_off, frames_have_no_planes) {
  NDQ_REQUIRE_GPU();
  VideoOptions v{.width = 640, .height = 360, .depth = 10, .rate_num = 60};
  std::vector<std::byte> frames(protocols::video::frame_bytes(v));
  sensors::VideoSenderConfig sc;
  sc.video = v;
  sc.payload_size = 1200;
  sensors::VideoSender tx(sc);
  tx.set_frames(frames);
  SentPackets packets(tx, tx.packets_per_frame());
  ASSERT_TRUE(packets.ok());
  ReorderConfig c;
  c.mode = ReorderMode::rtp_video;
  c.video = v;
  FramePipeline p(c);
  p.submit(packets.burst(0, packets.size(), 0, 0));
  p.flush();
  p.synchronize();
  Frame f = p.next_frame();
  ASSERT_TRUE(f);
  EXPECT_TRUE(f.complete());
  EXPECT_EQ(f.planes(), nullptr);
}

}  // namespace
}  // namespace netdaq::gpu
