// RoCEv2 WRITEs received in software placed into GPU frames (reorder mode roce through
// FramePipeline, every launch mode and staging): whole Ethernet frames as an afxdp or dpdk
// queue delivers them (headers in front, so the ICRC is checked), HSB-style WRITE ONLY
// packets and FIRST/MIDDLE/LAST messages, a lost packet, a duplicate PSN, a bad ICRC and the
// 128-byte end-of-window record: every frame in GPU memory equals the sensor pattern where
// bytes arrived and zero where they did not, its immediate kept, every packet accounted.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpu_test_util.h"
#include "netdaq/gpu.h"
#include "netdaq/sensor_pattern.h"
#include "protocols/roce.h"
#include "protocols/roce_receiver.h"

namespace netdaq::gpu {
namespace {

namespace roce = protocols::roce;
constexpr uint32_t kQpn = 0x100, kRkey = 0x1234, kSlots = 4, kStride = 16384, kFrame = 8192, kMtu = 1024;
constexpr uint64_t kBase = 0x10000000;
constexpr uint32_t kHeaders = 42;  // Ethernet + IPv4 + UDP in front of the UDP payload

using Case = ndqtest::LaunchCase;

// A sensor's packets as whole frames in mapped pinned memory.
class Wire final : public ndqtest::HeapBursts {
 public:
  void write(roce::Opcode op, uint64_t va, std::span<const std::byte> payload, uint32_t imm = 0, uint32_t length = 0) {
    roce::FrameSpec s;
    s.src_ip = 0x0A000001, s.dst_ip = 0x0A000002;
    s.bth.opcode = static_cast<uint8_t>(op);
    s.bth.dest_qp = kQpn;
    s.bth.psn = psn_++ & roce::kPsnMask;
    s.reth = {va, kRkey, length ? length : static_cast<uint32_t>(payload.size())};
    s.imm = imm;
    std::vector<std::byte> f(roce::frame_bytes(op, static_cast<uint32_t>(payload.size())));
    EXPECT_EQ(roce::build_frame(s, payload, f), f.size());
    frames_.push_back(std::move(f));
  }
  void skip_psn() { ++psn_; }  // a packet lost on the wire
  std::vector<std::byte>& last() { return frames_.back(); }
  void copy_last() { frames_.push_back(frames_.back()); }

  // split: UDP payload bytes in the first buffer; the rest of a longer packet goes in a second
  // buffer elsewhere (afxdp multi-buffer: a packet of two segments). 0: one buffer each.
  void pin(uint32_t split = 0) {
    split_ = split;
    size_t most = 0;
    for (const auto& f : frames_) most = std::max(most, f.size());
    stride_ = (most + 63) / 64 * 64;
    ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&mem_), stride_ * frames_.size(), cudaHostAllocMapped), cudaSuccess);
    ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&rest_), stride_ * frames_.size(), cudaHostAllocMapped), cudaSuccess);
    for (size_t i = 0; i < frames_.size(); ++i) {
      const size_t first = cut(i);
      std::memcpy(mem_ + i * stride_, frames_[i].data(), first);
      std::memcpy(rest_ + i * stride_, frames_[i].data() + first, frames_[i].size() - first);
    }
  }
  ~Wire() {
    cudaFreeHost(mem_);
    cudaFreeHost(rest_);
  }
  size_t size() const { return frames_.size(); }
  RxBurst burst(size_t from, size_t n) {
    return make(n, [&](size_t k, netdaq::detail::PacketFields& f) {
      const size_t i = from + k, first = cut(i);
      f.nseg = first < frames_[i].size() ? 2 : 1;
      f.data[0] = mem_ + i * stride_ + kHeaders;
      f.len[0] = f.cap[0] = static_cast<uint32_t>(first - kHeaders);
      f.l2_len = kHeaders;  // Packet::frame_head(): the headers the ICRC covers
      f.data[1] = rest_ + i * stride_;
      f.len[1] = f.cap[1] = static_cast<uint32_t>(frames_[i].size() - first);
    });
  }

 private:
  size_t cut(size_t i) const { return split_ ? std::min(frames_[i].size(), size_t{kHeaders} + split_) : frames_[i].size(); }

  std::vector<std::vector<std::byte>> frames_;
  uint32_t psn_ = 0, split_ = 0;
  size_t stride_ = 0;
  std::byte* mem_ = nullptr;
  std::byte* rest_ = nullptr;
};

std::vector<std::byte> pattern(uint64_t frame, uint32_t from, uint32_t n) {
  std::vector<std::byte> b(n);
  write_sensor_pattern(b, frame, from);
  return b;
}

class roce_sw_gpu_frames : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { NDQ_REQUIRE_GPU(); }
  ReorderConfig config() const {
    ReorderConfig c;
    c.mode = ReorderMode::roce;
    c.launch = GetParam().launch;
    c.staging = GetParam().staging;
    c.bursts_in_flight = 3;
    c.frame_timeout_us = 10'000'000;
    c.max_open_frames = 2;
    c.frame_buffers = 16;
    c.frame_bytes = kFrame;
    c.roce.mtu = kMtu;
    c.roce.metadata_bytes = 128;
    c.roce.queue_pairs = {RoceQueuePair{kQpn, kRkey, kBase, kSlots, kStride, kFrame, 0}};
    return c;
  }
};

// split: packets in two buffers from that UDP payload byte (0: one buffer).
void writes_become_frames(const ReorderConfig& config, uint32_t split) {
  Wire w;
  const uint64_t frames = 6;
  for (uint64_t f = 0; f < frames; ++f) {
    const uint64_t slot = kBase + (f % kSlots) * kStride;
    if (f % 2 == 0) {  // HSB: every packet a WRITE ONLY with its own RETH
      for (uint32_t at = 0; at < kFrame; at += kMtu) {
        if (f == 2 && at == 3 * kMtu) {  // lost on the wire
          w.skip_psn();
          continue;
        }
        w.write(roce::Opcode::uc_write_only, slot + at, pattern(f, at, kMtu));
        if (f == 4 && at == 0) w.copy_last();  // a duplicate
      }
    } else {  // one message: FIRST, MIDDLE..., LAST
      for (uint32_t at = 0; at < kFrame; at += kMtu) {
        const auto op = at == 0 ? roce::Opcode::uc_write_first
                        : at + kMtu == kFrame ? roce::Opcode::uc_write_last
                                              : roce::Opcode::uc_write_middle;
        w.write(op, slot, pattern(f, at, kMtu), 0, kFrame);
        if (f == 3 && at == 5 * kMtu) w.last()[w.last().size() - 1] ^= std::byte{1};  // bad ICRC
      }
    }
    // The end-of-window record after the frame in its slot, with immediate = frame number.
    std::vector<std::byte> record(128, std::byte(0xA0 + f));
    w.write(roce::Opcode::uc_write_only_imm, slot + kFrame, record, static_cast<uint32_t>(f));
  }
  w.pin(split);
  FramePipeline p(config);
  std::vector<std::vector<std::byte>> got;
  std::vector<FrameInfo> info;
  std::vector<uint64_t> imm;
  const auto take = [&] {
    while (Frame fr = p.next_frame()) {
      std::vector<std::byte> b(fr.size_bytes());
      EXPECT_EQ(cudaMemcpy(b.data(), fr.data(), b.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      got.push_back(std::move(b));
      info.push_back(fr.info());
      imm.push_back(UINT64_MAX);
      for (const FrameItem& it : fr.items())
        if (it.id == roce::kImmediateItem) imm.back() = it.value;
    }
  };
  for (size_t i = 0; i < w.size(); i += 7) {
    p.submit(w.burst(i, std::min<size_t>(7, w.size() - i)));
    take();
  }
  p.flush();
  for (int spins = 0; spins < 20; ++spins) p.synchronize(), take();

  ASSERT_EQ(got.size(), frames);
  for (uint64_t f = 0; f < frames; ++f) {
    SCOPED_TRACE("frame " + std::to_string(f));
    ASSERT_EQ(got[f].size(), kFrame);
    EXPECT_EQ(info[f].index, f);
    EXPECT_EQ(info[f].stream, kQpn);
    EXPECT_EQ(imm[f], f);  // the record's immediate, though the record's bytes are not placed
    std::vector<std::byte> want = pattern(f, 0, kFrame);
    if (f == 2) std::fill_n(want.begin() + 3 * kMtu, kMtu, std::byte{0});  // the lost packet
    // The MIDDLE with a bad ICRC is refused; the rest of its message is still placed (by PSN).
    if (f == 3) std::fill_n(want.begin() + 5 * kMtu, kMtu, std::byte{0});
    EXPECT_EQ(got[f], want);
    EXPECT_EQ(info[f].bytes_received, f == 2 || f == 3 ? kFrame - kMtu : kFrame);
  }
  const PipelineStats s = p.stats();
  EXPECT_TRUE(ndqtest::pipeline_accounted(s));
  EXPECT_EQ(s.packets_in, w.size());
  EXPECT_EQ(s.malformed, 2u);  // refused by the RoCE checks: the bad ICRC and the duplicate PSN
  EXPECT_EQ(s.frames_complete, frames - 2);
  EXPECT_EQ(s.frames_incomplete, 2u);
  EXPECT_EQ(w.outstanding(), 0);
}

TEST_P(roce_sw_gpu_frames, WritesBecomeFramesWithLossDuplicateBadIcrcAndRecord) { writes_become_frames(config(), 0); }

// The same packets each in two buffers, cut inside the payload (afxdp multi-buffer receive of
// frames larger than a UMEM buffer): the ICRC checked across both, the payload placed from
// both as two span pieces.
TEST_P(roce_sw_gpu_frames, PacketsInTwoBuffersBecomeTheSameFrames) { writes_become_frames(config(), 600); }

INSTANTIATE_TEST_SUITE_P(Modes, roce_sw_gpu_frames, ndqtest::every_launch_mode(), ndqtest::launch_case_name);

}  // namespace
}  // namespace netdaq::gpu
