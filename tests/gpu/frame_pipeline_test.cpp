// FramePipeline on a real GPU: packets in pinned host memory, handed over in bursts in
// adversarial orders (reversed, shuffled, duplicated, missing, late), must come out as the
// frames a CPU reference builds, for every launch mode and staging, with exact counters.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "gpu/host/sample_reference.h"
#include "gpu_test_util.h"
#include "netdaq/gpu.h"

namespace netdaq::gpu {
namespace {

constexpr uint32_t kHeader = 16;  // u32 junk, u64 sequence (little-endian) at 4, u32 junk

// Packets in pinned host memory, handed out as RxBursts in any order.
class PacketSource final : public ndqtest::HeapBursts {
 public:
  PacketSource(uint32_t count, uint32_t payload, uint64_t first_seq, uint32_t seed) : payload_(payload) {
    stride_ = (kHeader + payload + 63) / 64 * 64;
    EXPECT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&mem_), size_t{stride_} * count, cudaHostAllocMapped), cudaSuccess);
    std::mt19937 rng(seed);
    for (uint32_t i = 0; i < count; ++i) {
      std::byte* p = mem_ + size_t{i} * stride_;
      const uint64_t seq = first_seq + i;
      std::memset(p, 0xEE, kHeader);
      std::memcpy(p + 4, &seq, 8);
      for (uint32_t k = 0; k < payload; ++k) p[kHeader + k] = std::byte(rng());
    }
  }
  ~PacketSource() { cudaFreeHost(mem_); }

  const std::byte* samples(uint32_t i) const { return mem_ + size_t{i} * stride_ + kHeader; }

  // A burst of packets i in `order` (indices into this source).
  RxBurst burst(const std::vector<uint32_t>& order) {
    return make(order.size(), [&](size_t k, netdaq::detail::PacketFields& f) {
      f.nseg = 1;
      f.data[0] = mem_ + size_t{order[k]} * stride_;
      f.len[0] = f.cap[0] = kHeader + payload_;
    });
  }

 private:
  uint32_t payload_, stride_;
  std::byte* mem_ = nullptr;
};

using Case = ndqtest::LaunchCase;

class Pipeline : public ::testing::TestWithParam<Case> {
 protected:
  ReorderConfig cfg(uint32_t ppf, uint32_t payload) const {
    ReorderConfig c;
    c.seq_offset = 4;
    c.seq_bits = 64;
    c.seq_byte_order = ByteOrder::little;
    c.payload_offset = kHeader;
    c.payload_size = payload;
    c.packets_per_frame = ppf;
    c.max_open_frames = 4;
    c.frame_buffers = 16;
    c.frame_timeout_us = 1'000'000;
    c.launch = GetParam().launch;
    c.staging = GetParam().staging;
    c.bursts_in_flight = 3;
    return c;
  }

  // Collects every frame (flushing at the end) and checks each against the reference:
  // slot i holds the converted samples of packet first_seq + index * ppf + i, or zeros.
  static std::vector<uint64_t> check_frames(FramePipeline& p, PacketSource& src, uint64_t first_seq, uint32_t count) {
    p.flush();
    p.synchronize();
    const ReorderConfig& c = p.config();
    const size_t slot_bytes = converted_bytes(c.payload_size, c.input, c.output);
    std::vector<std::byte> got(p.frame_bytes()), want(slot_bytes);
    std::vector<uint64_t> indices;
    for (int spins = 0; spins < 1000; ++spins) {
      Frame f = p.next_frame();
      if (!f) {
        p.synchronize();
        if (spins > 10) break;
        continue;
      }
      spins = 0;
      indices.push_back(f.index());
      EXPECT_EQ(cudaMemcpy(got.data(), f.data(), got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      uint32_t present = 0;
      for (uint32_t i = 0; i < c.packets_per_frame; ++i) {
        const bool missing = f.missing()[i / 64] >> (i % 64) & 1;
        const uint64_t seq = f.index() * c.packets_per_frame + i;
        if (missing) {
          std::fill(want.begin(), want.end(), std::byte{0});
        } else {
          ++present;
          EXPECT_TRUE(seq >= first_seq && seq < first_seq + count) << seq;
          convert_reference(src.samples(static_cast<uint32_t>(seq - first_seq)), c.payload_size, c.input, c.output,
                            c.sample_byte_order, want.data());
        }
        EXPECT_EQ(std::memcmp(got.data() + i * slot_bytes, want.data(), slot_bytes), 0)
            << "frame " << f.index() << " slot " << i << (missing ? " (missing: zeros)" : "");
      }
      EXPECT_EQ(present, f.packets_received());
    }
    return indices;
  }

  void SetUp() override { NDQ_REQUIRE_GPU(); }
};

std::vector<uint32_t> iota(uint32_t n) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

void feed(FramePipeline& p, PacketSource& src, const std::vector<uint32_t>& order, size_t burst) {
  for (size_t i = 0; i < order.size(); i += burst) {
    std::vector<uint32_t> part(order.begin() + i, order.begin() + std::min(order.size(), i + burst));
    p.submit(src.burst(part));
    while (Frame f = p.next_frame()) {}  // released at once: frames are checked in other tests
  }
}

TEST_P(Pipeline, InOrderPacketsMakeCompleteFrames) {
  PacketSource src(8 * 32, 1024, 0, 1);
  FramePipeline p(cfg(32, 1024));
  for (uint32_t i = 0; i < 8 * 32; i += 64) {
    std::vector<uint32_t> part(64);
    std::iota(part.begin(), part.end(), i);
    p.submit(src.burst(part));
  }
  const auto frames = check_frames(p, src, 0, 8 * 32);
  EXPECT_EQ(frames, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  const auto s = p.stats();
  EXPECT_TRUE(ndqtest::pipeline_accounted(s));
  EXPECT_EQ(s.packets_placed, 256u);
  EXPECT_EQ(s.frames_complete, 8u);
  EXPECT_EQ(s.frames_incomplete, 0u);
  EXPECT_EQ(s.bytes_to_gpu, 256u * 1024);
  EXPECT_EQ(src.outstanding(), 0);
}

TEST_P(Pipeline, ReversedOrderInsideTheWindow) {
  PacketSource src(4 * 16, 8192, 1000 * 16, 2);
  FramePipeline p(cfg(16, 8192));
  auto order = iota(64);
  std::reverse(order.begin(), order.end());
  feed(p, src, order, 16);  // frames are released by feed(): count them instead
  p.flush();
  p.synchronize();
  const auto s = p.stats();
  EXPECT_TRUE(ndqtest::pipeline_accounted(s));
  EXPECT_EQ(s.frames_complete, 4u);
  EXPECT_EQ(s.late + s.duplicate + s.malformed, 0u);
}

TEST_P(Pipeline, ReversedFramesComeOutInOrderWithTheRightBytes) {
  PacketSource src(3 * 16, 1000, 0, 3);
  FramePipeline p(cfg(16, 1000));
  auto order = iota(48);
  std::reverse(order.begin(), order.end());
  p.submit(src.burst(order));
  EXPECT_EQ(check_frames(p, src, 0, 48), (std::vector<uint64_t>{0, 1, 2}));
}

TEST_P(Pipeline, ShuffledDuplicatedAndMissingPackets) {
  const uint32_t ppf = 64, frames = 12;
  PacketSource src(ppf * frames, 1024, 0, 4);
  FramePipeline p(cfg(ppf, 1024));
  std::mt19937 rng(5);
  std::vector<uint32_t> order;
  uint64_t dropped = 0, dups = 0;
  for (uint32_t i = 0; i < ppf * frames; ++i) {
    if (rng() % 20 == 0) { ++dropped; continue; }
    order.push_back(i);
    if (rng() % 25 == 0) { order.push_back(i); ++dups; }
  }
  for (size_t i = 0; i < order.size(); i += 2 * ppf)  // displacement within two frames
    std::shuffle(order.begin() + i, order.begin() + std::min(order.size(), i + 2 * ppf), rng);
  for (size_t i = 0; i < order.size(); i += 100) {
    std::vector<uint32_t> part(order.begin() + i, order.begin() + std::min(order.size(), i + 100));
    p.submit(src.burst(part));
  }
  const auto got = check_frames(p, src, 0, ppf * frames);
  EXPECT_EQ(got.size(), frames);
  const auto s = p.stats();
  EXPECT_TRUE(ndqtest::pipeline_accounted(s));
  EXPECT_EQ(s.packets_in, order.size());
  EXPECT_EQ(s.duplicate + s.late, dups);
  EXPECT_EQ(s.packets_missing, dropped);
  EXPECT_EQ(s.packets_placed, uint64_t{ppf} * frames - dropped);
  EXPECT_EQ(src.outstanding(), 0);
}

TEST_P(Pipeline, LatePacketsAreCountedAndNotWritten) {
  PacketSource src(6 * 8, 1024, 0, 6);
  FramePipeline p(cfg(8, 1024));
  std::vector<uint32_t> first = iota(48);
  first.erase(first.begin() + 3);  // packet 3 of frame 0 comes after frames 0..5 moved on
  p.submit(src.burst(first));
  p.submit(src.burst({3}));
  const auto got = check_frames(p, src, 0, 48);
  EXPECT_EQ(got.front(), 0u);
  EXPECT_EQ(p.stats().late, 1u);
  EXPECT_EQ(p.stats().packets_missing, 1u);
  EXPECT_TRUE(ndqtest::pipeline_accounted(p.stats()));
}

TEST_P(Pipeline, TimeoutFlushesAnIncompleteFrame) {
  PacketSource src(8, 1024, 0, 7);
  ReorderConfig c = cfg(8, 1024);
  c.frame_timeout_us = 2000;
  FramePipeline p(c);
  p.submit(src.burst({0, 1, 2, 4, 5}));
  Frame f;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!(f = p.next_frame()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  ASSERT_TRUE(f);
  EXPECT_FALSE(f.complete());
  EXPECT_EQ(f.packets_received(), 5u);
  EXPECT_EQ(f.missing()[0], 0b11001000u);
}

TEST_P(Pipeline, SampleConversionInsideTheFrame) {
  PacketSource src(4 * 16, 2048, 0, 8);
  for (auto [in, out, order] : {std::tuple{SampleFormat::int16, SampleFormat::fp32, ByteOrder::big},
                                std::tuple{SampleFormat::int8, SampleFormat::bf16, ByteOrder::little},
                                std::tuple{SampleFormat::int4, SampleFormat::fp16, ByteOrder::little}}) {
    ReorderConfig c = cfg(16, 2048);
    c.input = in;
    c.output = out;
    c.sample_byte_order = order;
    FramePipeline p(c);
    auto order_ = iota(64);
    std::shuffle(order_.begin(), order_.begin() + 32, std::mt19937(9));
    p.submit(src.burst(order_));
    EXPECT_EQ(check_frames(p, src, 0, 64).size(), 4u) << to_string(in) << "->" << to_string(out);
  }
}

TEST_P(Pipeline, ArrivalOrderGathersPacketsAsTheyCome) {
  PacketSource src(32, 1024, 0, 10);
  ReorderConfig c = cfg(16, 1024);
  c.mode = ReorderMode::arrival;
  FramePipeline p(c);
  std::vector<uint32_t> order = iota(32);
  std::reverse(order.begin(), order.end());
  p.submit(src.burst(order));
  p.flush();
  p.synchronize();
  std::vector<std::byte> got(p.frame_bytes());
  for (uint64_t k = 0; k < 2; ++k) {
    Frame f = p.next_frame();
    ASSERT_TRUE(f);
    EXPECT_EQ(f.index(), k);
    ASSERT_EQ(cudaMemcpy(got.data(), f.data(), got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    for (uint32_t i = 0; i < 16; ++i)
      EXPECT_EQ(std::memcmp(got.data() + i * 1024, src.samples(order[k * 16 + i]), 1024), 0) << k << "/" << i;
  }
}

TEST_P(Pipeline, FramesHeldByTheApplicationAreNotOverwritten) {
  PacketSource src(64 * 4, 1024, 0, 11);
  ReorderConfig c = cfg(4, 1024);
  c.max_open_frames = 2;
  c.frame_buffers = 3;
  FramePipeline p(c);
  p.submit(src.burst(iota(12)));  // frames 0..2 complete: every buffer is now the app's
  std::vector<Frame> held;
  while (Frame f = p.next_frame()) held.push_back(std::move(f));
  p.synchronize();
  while (Frame f = p.next_frame()) held.push_back(std::move(f));
  ASSERT_EQ(held.size(), 3u);
  std::vector<uint32_t> more(4);
  std::iota(more.begin(), more.end(), 12u);
  p.submit(src.burst(more));       // frame 3: no buffer
  EXPECT_EQ(p.stats().no_buffer, 4u);
  EXPECT_TRUE(ndqtest::pipeline_accounted(p.stats()));
  std::vector<std::byte> got(1024);
  ASSERT_EQ(cudaMemcpy(got.data(), held[0].data(), 1024, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::memcmp(got.data(), src.samples(0), 1024), 0);
}

// Small bursts gathered into bigger GPU jobs (job_packets): the same frames, far fewer jobs,
// and a gathering job still goes out after job_timeout_us when no more bursts come.
TEST_P(Pipeline, SmallBurstsGatheredIntoFewerJobs) {
  const uint32_t ppf = 32, frames = 8;
  PacketSource src(ppf * frames, 1024, 0, 12);
  ReorderConfig c = cfg(ppf, 1024);
  c.job_packets = 64;
  c.job_timeout_us = 2000;
  {
    FramePipeline p(c);
    std::mt19937 rng(13);
    uint32_t bursts = 0;
    for (uint32_t i = 0; i < ppf * frames;) {
      const uint32_t n = std::min<uint32_t>(1 + rng() % 3, ppf * frames - i);
      std::vector<uint32_t> part(n);
      std::iota(part.begin(), part.end(), i);
      p.submit(src.burst(part));
      ++bursts;
      i += n;
    }
    EXPECT_EQ(check_frames(p, src, 0, ppf * frames).size(), frames);
    EXPECT_LE(p.stats().jobs, uint64_t{ppf} * frames / 64 + 2) << bursts << " bursts";
  }
  EXPECT_EQ(src.outstanding(), 0);
  {
    // As an application runs it: next_frame() after every submit() (its clock reading is
    // the submit's) must not send the job being gathered early.
    FramePipeline p(c);
    uint64_t got = 0;
    for (uint32_t i = 0; i < ppf * frames; i += 2) {
      p.submit(src.burst({i, i + 1}));
      while (Frame f = p.next_frame()) got += f.complete();
    }
    p.flush();
    p.synchronize();
    while (Frame f = p.next_frame()) got += f.complete();
    EXPECT_EQ(got, frames);
    EXPECT_LE(p.stats().jobs, uint64_t{ppf} * frames / 64 + 2) << ppf * frames / 2 << " bursts of 2";
  }
  EXPECT_EQ(src.outstanding(), 0);

  FramePipeline q(c);  // one lone burst completing a frame: out after the timeout, no flush
  q.submit(src.burst(iota(ppf)));
  Frame f;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!(f = q.next_frame()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  ASSERT_TRUE(f);
  EXPECT_TRUE(f.complete());
}

INSTANTIATE_TEST_SUITE_P(Modes, Pipeline, ndqtest::every_launch_mode(), ndqtest::launch_case_name);

}  // namespace
}  // namespace netdaq::gpu
