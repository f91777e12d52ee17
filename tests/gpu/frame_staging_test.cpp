// gpu::FrameStaging (include/netdaq/frame_staging.h), what netdaq ingest's `frames: gpu` sends
// from: device frames copied into pinned host buffers byte for byte, handed out in staging
// order, and every stage() call counted once: staged, no_buffer (every buffer busy), too_big.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "device_array.h"
#include "gpu_test_util.h"
#include "netdaq/frame_staging.h"

namespace {

using netdaq::gpu::FrameStaging;

TEST(FrameStaging, CopiesFramesInOrderAndCountsBusyAndTooBig) {
  NDQ_REQUIRE_GPU();
  constexpr uint32_t kBuffers = 3;
  constexpr size_t kFrame = 256 * 1024;
  constexpr size_t kFrames = 5;
  // Five random frames in device memory (never zeros: an unwritten buffer must not pass).
  std::vector<std::byte> host(kFrames * kFrame);
  std::mt19937_64 rng(std::random_device{}());
  for (auto& b : host) b = std::byte(uint8_t(rng()));
  ndqtest::DeviceArray<std::byte> dev(host.size());
  ASSERT_NE(dev.p, nullptr);
  CUDA_OK(cudaMemcpy(dev.p, host.data(), host.size(), cudaMemcpyHostToDevice));

  FrameStaging staging(kBuffers, kFrame, 0);
  ASSERT_EQ(staging.buffers(), kBuffers);
  // Three fit; the fourth finds every buffer busy; one byte too many is refused.
  std::vector<uint32_t> got;
  for (size_t f = 0; f < kBuffers; ++f) {
    const uint32_t b = staging.stage(dev.p + f * kFrame, kFrame - f);  // sizes differ: lengths kept per buffer
    ASSERT_NE(b, FrameStaging::kNone);
    got.push_back(b);
  }
  EXPECT_EQ(staging.stage(dev.p + 3 * kFrame, kFrame), FrameStaging::kNone);
  EXPECT_EQ(staging.busy(), kBuffers);
  ASSERT_TRUE(staging.synchronize());
  for (size_t f = 0; f < kBuffers; ++f) {
    uint32_t b = FrameStaging::kNone;
    bool copied = false;
    ASSERT_TRUE(staging.ready(b, copied));
    EXPECT_TRUE(copied);
    EXPECT_EQ(b, got[f]) << "handed out in staging order";
    const auto bytes = staging.bytes(b);
    ASSERT_EQ(bytes.size(), kFrame - f);
    EXPECT_EQ(std::memcmp(bytes.data(), host.data() + f * kFrame, bytes.size()), 0) << "frame " << f;
  }
  uint32_t none = 0;
  bool copied = false;
  EXPECT_FALSE(staging.ready(none, copied));
  // A released buffer takes the next frame; too big is refused without taking one.
  staging.release(got[1]);
  EXPECT_EQ(staging.busy(), kBuffers - 1);
  EXPECT_EQ(staging.stage(dev.p, kFrame + 1), FrameStaging::kNone);
  const uint32_t b4 = staging.stage(dev.p + 4 * kFrame, kFrame);
  EXPECT_EQ(b4, got[1]);
  ASSERT_TRUE(staging.synchronize());
  uint32_t b = 0;
  ASSERT_TRUE(staging.ready(b, copied));
  EXPECT_TRUE(copied);
  EXPECT_EQ(b, b4);
  EXPECT_EQ(std::memcmp(staging.bytes(b).data(), host.data() + 4 * kFrame, kFrame), 0);
  const auto s = staging.stats();
  EXPECT_EQ(s.frames_staged, 4u);
  EXPECT_EQ(s.bytes_staged, 3 * kFrame - 3 + kFrame);
  EXPECT_EQ(s.no_buffer, 1u);
  EXPECT_EQ(s.too_big, 1u);
  EXPECT_EQ(s.copy_failed, 0u);
}

}  // namespace
