// Frames from the sensor's own headers on a real GPU: SPEAD heaps, VITA-49 packets and a
// fixed-header (fields) sensor, generated from the specs (tests/protocols), delivered in
// order, reordered, with losses and duplicates, in bursts, through FramePipeline in every
// launch mode and staging: every frame in GPU memory must equal the reference model
// (tests/protocols/reference_model.h) byte for byte, its metadata and the counters exact.
// Suite names carry the protocol (ctest -R spead | vita49 | fields).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "gpu/host/sample_reference.h"
#include "gpu_test_util.h"
#include "netdaq/gpu.h"
#include "protocols/fields_generator.h"
#include "protocols/reference_model.h"
#include "protocols/spead_generator.h"
#include "protocols/vita49_generator.h"

namespace netdaq::gpu {
namespace {

using testgen::GeneratedTraffic;

// A UDP payload starts 42 bytes into its buffer (Ethernet + IPv4 + UDP): so do these.
constexpr uint32_t kPayloadAt = 42;

// The traffic's packets in mapped pinned memory, handed out as RxBursts in any order.
class PinnedPackets final : public ndqtest::HeapBursts {
 public:
  PinnedPackets(const GeneratedTraffic& t, std::function<uint32_t(size_t)> flow) : t_(t), flow_(std::move(flow)) {
    size_t most = 0;
    for (const auto& p : t.packets) most = std::max(most, p.payload.size());
    stride_ = (kPayloadAt + most + 63) / 64 * 64;
    EXPECT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&mem_), stride_ * t.packets.size(), cudaHostAllocMapped),
              cudaSuccess);
    for (size_t i = 0; i < t.packets.size(); ++i)
      std::memcpy(mem_ + i * stride_ + kPayloadAt, t.packets[i].payload.data(), t.packets[i].payload.size());
  }
  ~PinnedPackets() { cudaFreeHost(mem_); }
  RxBurst burst(const std::vector<size_t>& order) {
    return make(order.size(), [&](size_t k, netdaq::detail::PacketFields& f) {
      f.nseg = 1;
      f.data[0] = mem_ + order[k] * stride_ + kPayloadAt;
      f.len[0] = f.cap[0] = static_cast<uint32_t>(t_.packets[order[k]].payload.size());
      f.flow = flow_(order[k]);
    });
  }

 private:
  const GeneratedTraffic& t_;
  std::function<uint32_t(size_t)> flow_;
  size_t stride_ = 0;
  std::byte* mem_ = nullptr;
};

struct Case {
  LaunchMode launch;
  Staging staging;
  std::optional<uint32_t> job_packets;  // unset: auto (bursts gathered); 0: a job per burst
};

std::string name_of(const ::testing::TestParamInfo<Case>& i) {
  return std::string(to_string(i.param.launch)) + "_" + to_string(i.param.staging) +
         (i.param.job_packets ? "_job" + std::to_string(*i.param.job_packets) : "");
}

struct Result {
  PipelineStats stats;
  std::vector<StreamStats> streams;
  size_t frames = 0;
};

class SpanPipeline : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { NDQ_REQUIRE_GPU(); }

  ReorderConfig modes(ReorderConfig c) const {
    c.launch = GetParam().launch;
    c.staging = GetParam().staging;
    c.bursts_in_flight = 3;
    c.frame_timeout_us = 10'000'000;
    c.job_packets = GetParam().job_packets;  // frames close by completion, window or flush only
    return c;
  }

  // Feeds `order` in bursts of `burst`, then flushes; every frame must be the reference's
  // (converted when the config converts), in frame order per stream, with its metadata.
  Result run(const ReorderConfig& c, const GeneratedTraffic& t, const std::vector<size_t>& order, size_t burst) {
    PinnedPackets src(t, [&](size_t i) { return t.packets[i].spans.empty() ? 0u : uint32_t(t.packets[i].spans[0].stream); });
    FramePipeline p(c);
    std::map<std::pair<uint64_t, uint64_t>, std::vector<std::byte>> got;
    std::map<std::pair<uint64_t, uint64_t>, FrameInfo> info;
    std::map<uint64_t, uint64_t> last;
    auto take = [&] {
      while (Frame f = p.next_frame()) {
        std::vector<std::byte> bytes(f.size_bytes());
        EXPECT_EQ(cudaMemcpy(bytes.data(), f.data(), bytes.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        const std::pair key{f.stream(), f.index()};
        EXPECT_TRUE(got.emplace(key, std::move(bytes)).second) << "frame " << f.index() << " twice";
        info[key] = f.info();
        auto [it, fresh] = last.emplace(f.stream(), f.index());
        if (!fresh) {
          EXPECT_GT(f.index(), it->second) << "stream " << f.stream() << ": frames out of order";
          it->second = f.index();
        }
      }
    };
    for (size_t i = 0; i < order.size(); i += burst) {
      p.submit(src.burst(std::vector<size_t>(order.begin() + i, order.begin() + std::min(order.size(), i + burst))));
      take();
    }
    p.flush();
    for (int spins = 0; spins < 20; ++spins) {
      p.synchronize();
      take();
    }
    const auto want = testgen::expected_frames(t, order);
    EXPECT_EQ(got.size(), want.size());
    for (const auto& [key, e] : want) {
      auto it = got.find(key);
      if (it == got.end()) {
        ADD_FAILURE() << "frame " << key.second << " of stream " << key.first << " never came out";
        continue;
      }
      std::vector<std::byte> ref(converted_bytes(e.bytes.size(), c.input, c.output));
      convert_reference(e.bytes.data(), static_cast<uint32_t>(e.bytes.size()), c.input, c.output, c.sample_byte_order,
                        ref.data());
      const FrameInfo& fi = info[key];
      if (it->second != ref) {
        size_t at = 0;
        while (at < ref.size() && at < it->second.size() && it->second[at] == ref[at]) ++at;
        size_t ndiff = 0, zeros = 0;
        for (size_t k = 0; k < ref.size() && k < it->second.size(); ++k)
          if (it->second[k] != ref[k]) ++ndiff, zeros += it->second[k] == std::byte{0};
        ADD_FAILURE() << "frame " << key.second << " of stream " << key.first << ": " << ndiff << " bytes differ (" << zeros
                      << " of them zero), from byte " << at << " got " << int(it->second[at]) << " want " << int(ref[at])
                      << " (" << it->second.size() << " bytes, want " << ref.size() << "; received " << fi.bytes_received
                      << " of " << fi.bytes_expected << ", reference " << e.bytes_present << ")";
      }
      EXPECT_EQ(fi.bytes_received, e.bytes_present) << "frame " << key.second;
      EXPECT_EQ(fi.received == fi.expected, e.complete) << "frame " << key.second;
      EXPECT_EQ(fi.bytes_expected, e.bytes.size());
    }
    EXPECT_EQ(src.outstanding(), 0);
    Result r{p.stats(), p.stream_stats(), got.size()};
    const PipelineStats& st = r.stats;
    if (HasFailure())
      ADD_FAILURE() << "stats: in " << st.packets_in << " placed " << st.packets_placed << " dup " << st.duplicate << " late "
                    << st.late << " malformed " << st.malformed << " no_buffer " << st.no_buffer << " control " << st.control
                    << " complete " << st.frames_complete << " incomplete " << st.frames_incomplete << " dropped "
                    << st.frames_dropped << " skipped " << st.frames_skipped << " jobs " << st.jobs;
    // Frame buffers enough for every stream's window and the frames waiting for their jobs:
    // no packet may find none (buffer pressure has tests of its own).
    EXPECT_EQ(st.no_buffer, 0u);
    EXPECT_TRUE(ndqtest::pipeline_accounted(r.stats));
    EXPECT_EQ(r.stats.packets_in, order.size());
    EXPECT_EQ(r.stats.frames_complete + r.stats.frames_incomplete, got.size());
    return r;
  }
};

class spead_gpu_frames : public SpanPipeline {};
class vita49_gpu_frames : public SpanPipeline {};
class fields_gpu_frames : public SpanPipeline {};

ReorderConfig spead_config() {
  ReorderConfig c;
  c.mode = ReorderMode::spead;
  c.frame_bytes = 65536;
  c.granule = 1;
  c.max_open_frames = 4;
  c.max_streams = 3;
  c.frame_buffers = 64;
  c.spead.stream_item = 0x7001;
  return c;
}

TEST_P(spead_gpu_frames, HeapsOfAnySizeFromThreeStreamsReorderedLostDuplicated) {
  for (unsigned bits : {48u, 40u}) {
    testgen::SpeadGenOptions o;
    o.heap_address_bits = bits;
    o.streams = 3;
    o.heaps_per_stream = 12;
    o.heap_sizes = {40961, 1, 12345, 777, 65536, 8191};
    o.max_payload = 8192;
    o.random_payload_sizes = true;
    o.stream_item = 0x7001;
    o.extra_items = {testgen::SpeadExtraItem{0x1600, 5000, 10, 100000}};
    o.extra_items_every_packet = true;
    o.seed = bits + 1;
    const GeneratedTraffic t = testgen::make_spead(o);
    auto order = testgen::shuffle_within(testgen::in_order(t.packets.size()), 5, bits);
    order = testgen::duplicate_every(testgen::drop_every(order, 11, 4), 6);
    SCOPED_TRACE("SPEAD-64-" + std::to_string(bits));
    const Result r = run(modes(spead_config()), t, order, 32);
    EXPECT_GT(r.stats.frames_incomplete, 0u);
    EXPECT_GT(r.stats.bytes_missing, 0u);
    ASSERT_EQ(r.streams.size(), 3u);
    uint64_t placed = 0;
    for (const auto& s : r.streams) placed += s.packets_placed;
    EXPECT_EQ(placed, r.stats.packets_placed);
  }
}

TEST_P(spead_gpu_frames, InOrderEveryHeapComplete) {
  testgen::SpeadGenOptions o;
  o.heaps_per_stream = 16;
  o.heap_sizes = {65536};
  o.max_payload = 8192;
  o.stream_item = 0x7001;
  const GeneratedTraffic t = testgen::make_spead(o);
  const Result r = run(modes(spead_config()), t, testgen::in_order(t.packets.size()), 64);
  EXPECT_EQ(r.stats.frames_complete, 16u);
  EXPECT_EQ(r.stats.packets_placed, t.packets.size());
  EXPECT_EQ(r.stats.bytes_to_gpu, 16u * 65536);
}

ReorderConfig vita_config() {
  ReorderConfig c;
  c.mode = ReorderMode::vita49;
  c.vita49.samples_per_frame = 4096;
  c.vita49.sample_bytes = 4;
  c.max_open_frames = 4;
  c.max_streams = 2;
  c.frame_buffers = 48;
  return c;
}

TEST_P(vita49_gpu_frames, SamplesByTimestampAcrossFramesWithLossesAndContext) {
  testgen::Vita49GenOptions o;
  o.streams = {0x1000, 0x2000};
  o.class_id = true;
  o.trailer = true;
  o.samples_per_packet = {1000, 367, 2048};
  o.samples_per_frame = 4096;
  o.frames = 10;
  o.context_every = 7;
  const GeneratedTraffic t = testgen::make_vita49(o);
  auto order = testgen::drop_every(testgen::shuffle_within(testgen::in_order(t.packets.size()), 4, 9), 9, 2);
  const Result r = run(modes(vita_config()), t, order, 16);
  size_t contexts = 0;
  for (size_t i : order) contexts += t.packets[i].control;
  EXPECT_EQ(r.stats.control, contexts);
  EXPECT_GT(r.stats.frames_incomplete, 0u);
}

TEST_P(vita49_gpu_frames, BigEndianInt16SamplesConvertedToFloat) {
  testgen::Vita49GenOptions o;
  o.streams = {0x77};
  o.tsi = testgen::VrtTsi::utc;
  o.sample_rate = 1'000'000;
  o.samples_per_packet = {2000};
  o.samples_per_frame = 8192;
  o.frames = 6;
  const GeneratedTraffic t = testgen::make_vita49(o);
  ReorderConfig c = vita_config();
  c.vita49.samples_per_frame = 8192;
  c.vita49.sample_rate = 1'000'000;
  c.input = SampleFormat::int16;
  c.output = SampleFormat::fp32;
  c.sample_byte_order = ByteOrder::big;
  const auto order = testgen::drop_every(testgen::in_order(t.packets.size()), 5, 3);
  run(modes(c), t, order, 8);
}

TEST_P(fields_gpu_frames, BatchNumberAndPacketIndexFromThreeStreams) {
  testgen::FieldsGenOptions o;
  o.streams = 3;
  o.frames = 10;
  o.frame_bytes = 8 * 8192 - 100;
  o.payload = 8192;
  o.frame_bits = 16;
  o.first_frame = 65536 - 4;
  const GeneratedTraffic t = testgen::make_fields(o);
  ReorderConfig c;
  c.mode = ReorderMode::fields;
  c.fields.frame = PacketField{2, 16, ByteOrder::big};
  c.fields.index = PacketField{4, 32, ByteOrder::big};
  c.fields.stream = PacketField{8, 8, ByteOrder::big};
  c.payload_offset = testgen::kFieldsHeader;
  c.payload_size = 8192;
  c.frame_bytes = o.frame_bytes;
  c.max_streams = 3;
  c.frame_buffers = 64;
  auto order = testgen::duplicate_every(testgen::drop_every(testgen::shuffle_within(testgen::in_order(t.packets.size()), 7, 5), 13), 9);
  const Result r = run(modes(c), t, order, 24);
  EXPECT_EQ(r.streams.size(), 3u);
}

// A job per burst as well: every job slot's span entries are read (a job gathering bursts
// uses slot 0 for most of a short test).
const auto kCases = ::testing::Values(Case{LaunchMode::per_burst, Staging::copy}, Case{LaunchMode::per_burst, Staging::direct},
                                      Case{LaunchMode::graph, Staging::copy}, Case{LaunchMode::persistent, Staging::direct},
                                      Case{LaunchMode::per_burst, Staging::copy, 0u},
                                      Case{LaunchMode::persistent, Staging::direct, 0u},
                                      Case{LaunchMode::persistent, Staging::copy, 0u});
INSTANTIATE_TEST_SUITE_P(Modes, spead_gpu_frames, kCases, name_of);
INSTANTIATE_TEST_SUITE_P(Modes, vita49_gpu_frames, kCases, name_of);
INSTANTIATE_TEST_SUITE_P(Modes, fields_gpu_frames, kCases, name_of);

}  // namespace
}  // namespace netdaq::gpu
