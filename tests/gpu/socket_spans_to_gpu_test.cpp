// End to end on the GPU machine, span modes: a sensor's real packets (VITA-49 signal data and
// context, a DAQIRI-like fixed header), generated from the specs (tests/protocols), sent over
// UDP loopback by a plain socket, received by a socket-engine session into pinned/mapped host
// buffers, and built into frames in GPU memory by FramePipeline from the packets' own headers.
// Some packets are not sent (losses), one frame's packets are reordered, one is sent twice;
// every frame copied back must equal the reference model of what was actually sent
// (tests/protocols/reference_model.h) byte for byte, its metadata and the counters exact.
// The sender waits for each small chunk to arrive before the next, so loopback drops nothing
// (checked: every packet sent was received, and the queue counted no drop).
// Suite names carry the protocol (ctest -R vita49 | fields).
#include <arpa/inet.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_util.h"
#include "netdaq/engines/socket.h"
#include "netdaq/netdaq.h"
#include "protocols/fields_generator.h"
#include "protocols/reference_model.h"
#include "protocols/vita49_generator.h"

namespace netdaq::gpu {
namespace {

using testgen::GeneratedTraffic;
using Key = std::pair<uint64_t, uint64_t>;  // (stream, frame)

struct SpanE2eCase {
  const char* name;
  MemoryKind kind;
  Staging staging;
  LaunchMode launch;
  uint16_t port;  // added to the test's base port: ctest runs each case in a process of its own,
                  // maybe at once, and the socket engine binds with SO_REUSEPORT
};

std::string case_name(const ::testing::TestParamInfo<SpanE2eCase>& i) { return i.param.name; }

// Every datagram of these tests (8 KB of samples and the headers) fits one buffer.
constexpr uint32_t kBufSize = 9216;
// Packets sent before waiting for them: their socket buffer memory stays well below the
// smallest receive buffer a non-root process gets (net.core.rmem_max, 208 KB by default).
constexpr size_t kChunk = 8;

// The sensor: a plain UDP socket sending to the session's address.
class Sensor {
 public:
  explicit Sensor(uint16_t port) : fd_(::socket(AF_INET, SOCK_DGRAM, 0)) {
    to_.sin_family = AF_INET;
    to_.sin_port = htons(port);
    to_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  }
  ~Sensor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Sensor(const Sensor&) = delete;
  Sensor& operator=(const Sensor&) = delete;
  bool ok() const { return fd_ >= 0; }
  bool send(const std::vector<std::byte>& payload) {
    for (int tries = 0; tries < 1000; ++tries) {
      const ssize_t n = ::sendto(fd_, payload.data(), payload.size(), 0, reinterpret_cast<const sockaddr*>(&to_), sizeof to_);
      if (n == static_cast<ssize_t>(payload.size())) return true;
      if (n >= 0 || (errno != ENOBUFS && errno != EAGAIN && errno != EINTR)) return false;
    }
    return false;
  }

 private:
  int fd_ = -1;
  sockaddr_in to_{};
};

Config rx_config(const SpanE2eCase& c, uint16_t port, ReorderConfig reorder) {
  Config cfg;
  cfg.memory_regions.push_back({.name = "rx", .kind = c.kind, .buf_size = kBufSize, .num_bufs = 8192, .gpu = 0});
  InterfaceConfig rx;
  rx.name = "rx";
  rx.address = "udp://127.0.0.1:" + std::to_string(port);
  rx.options.get<SocketOptions>().gro = false;
  rx.rx.queues.push_back({.id = 0, .batch_size = 64, .memory_regions = {"rx"}});
  reorder.staging = c.staging;
  reorder.launch = c.launch;
  reorder.frame_timeout_us = 10'000'000;  // frames close by completion, window or flush only
  rx.rx.reorder.push_back(reorder);
  cfg.interfaces.push_back(rx);
  return cfg;
}

struct E2eRun {
  std::vector<size_t> sent;  // traffic indices in the order sent (repeats: sent twice)
  uint64_t received = 0;
  std::map<Key, std::vector<std::byte>> frames;
  std::map<Key, FrameInfo> info;
  PipelineStats stats;
  std::vector<StreamStats> streams;
  QueueStats queue;
};

// Sends `order` (indices into t.packets) over loopback to a socket session on `port`, in
// chunks each received before the next is sent, through FramePipeline(session, ...); then
// flushes and takes every frame, checking frames leave in frame order per stream.
E2eRun send_and_build(const SpanE2eCase& c, uint16_t port, const ReorderConfig& reorder, const GeneratedTraffic& t,
                   const std::vector<size_t>& order) {
  E2eRun r;
  Session session(rx_config(c, port, reorder));
  FramePipeline pipe(session, "rx", session.config().interfaces[0].rx.reorder[0]);
  RxQueue& rxq = session.rx_queue("rx");
  Sensor sensor(port);
  EXPECT_TRUE(sensor.ok()) << std::strerror(errno);

  std::map<uint64_t, uint64_t> last;
  auto take = [&] {
    while (Frame f = pipe.next_frame()) {
      std::vector<std::byte> bytes(f.size_bytes());
      EXPECT_EQ(cudaMemcpy(bytes.data(), f.data(), bytes.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      const Key key{f.stream(), f.index()};
      EXPECT_TRUE(r.frames.emplace(key, std::move(bytes)).second) << "frame " << f.index() << " twice";
      r.info[key] = f.info();
      auto [it, fresh] = last.emplace(f.stream(), f.index());
      if (!fresh) {
        EXPECT_GT(f.index(), it->second) << "stream " << f.stream() << ": frames out of order";
        it->second = f.index();
      }
    }
  };
  auto poll_until = [&](std::chrono::steady_clock::time_point until) {
    while (r.received < r.sent.size() && std::chrono::steady_clock::now() < until) {
      RxBurst b = rxq.poll();
      if (!b) continue;
      r.received += b.size();
      pipe.submit(std::move(b));
      take();
    }
    take();
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (size_t at = 0; at < order.size() && std::chrono::steady_clock::now() < deadline; at += kChunk) {
    for (size_t k = at; k < std::min(order.size(), at + kChunk); ++k) {
      if (!sensor.send(t.packets[order[k]].payload)) {
        ADD_FAILURE() << "sendto failed: " << std::strerror(errno);
        break;
      }
      r.sent.push_back(order[k]);
    }
    // Receive what was sent before sending more: loopback stays drop-free.
    poll_until(std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(2)));
  }
  pipe.flush();
  for (int spins = 0; spins < 20; ++spins) {
    pipe.synchronize();
    take();
  }
  r.stats = pipe.stats();
  r.streams = pipe.stream_stats();
  r.queue = rxq.stats();
  return r;
}

// What every test checks: nothing lost on the way (so the reference is fair), every frame the
// reference's byte for byte with its presence, every packet accounted.
void check_run(const E2eRun& r, const GeneratedTraffic& t, const std::vector<size_t>& order) {
  ASSERT_EQ(r.sent.size(), order.size()) << "not everything was sent in time";
  ASSERT_EQ(r.received, r.sent.size()) << "loopback lost packets: the comparison would not be fair";
  for (size_t d = 0; d < kDropReasons; ++d)
    EXPECT_EQ(r.queue.drops[d], 0u) << "queue drops: " << to_string(static_cast<DropReason>(d));
  EXPECT_EQ(r.queue.packets, r.sent.size());

  const auto want = testgen::expected_frames(t, r.sent);
  EXPECT_EQ(r.frames.size(), want.size());
  for (const auto& [key, e] : want) {
    auto it = r.frames.find(key);
    if (it == r.frames.end()) {
      ADD_FAILURE() << "frame " << key.second << " of stream " << key.first << " never came out";
      continue;
    }
    const FrameInfo& fi = r.info.at(key);
    if (it->second != e.bytes) {
      size_t at = 0;
      while (at < e.bytes.size() && at < it->second.size() && it->second[at] == e.bytes[at]) ++at;
      size_t ndiff = 0;
      for (size_t k = 0; k < e.bytes.size() && k < it->second.size(); ++k) ndiff += it->second[k] != e.bytes[k];
      ADD_FAILURE() << "frame " << key.second << " of stream " << key.first << ": " << ndiff
                    << " bytes differ, the first at byte " << at << " (" << it->second.size() << " bytes, want "
                    << e.bytes.size() << "; received " << fi.bytes_received << ", reference " << e.bytes_present << ")";
    }
    EXPECT_EQ(fi.stream, key.first);
    EXPECT_EQ(fi.index, key.second);
    EXPECT_EQ(fi.bytes_received, e.bytes_present) << "frame " << key.second << " of stream " << key.first;
    EXPECT_EQ(fi.received == fi.expected, e.complete) << "frame " << key.second << " of stream " << key.first;
    EXPECT_EQ(fi.bytes_expected, e.bytes.size());
  }

  const PipelineStats& s = r.stats;
  EXPECT_TRUE(ndqtest::pipeline_accounted(s));
  EXPECT_EQ(s.packets_in, r.sent.size());
  EXPECT_EQ(s.late + s.malformed + s.no_buffer + s.no_stream + s.gpu_errors, 0u);
  EXPECT_EQ(s.frames_complete + s.frames_incomplete, r.frames.size());
  EXPECT_EQ(s.frames_dropped, 0u);
  size_t complete = 0;
  for (const auto& [key, e] : want) complete += e.complete;
  EXPECT_EQ(s.frames_complete, complete);
  if (::testing::Test::HasFailure())
    ADD_FAILURE() << "stats: in " << s.packets_in << " placed " << s.packets_placed << " dup " << s.duplicate << " late "
                  << s.late << " malformed " << s.malformed << " no_buffer " << s.no_buffer << " control " << s.control
                  << " no_stream " << s.no_stream << " complete " << s.frames_complete << " incomplete "
                  << s.frames_incomplete << " skipped " << s.frames_skipped << " jobs " << s.jobs;
}

// The sent packets of each stream (data packets: those that carry frame bytes), and how many
// times each was sent.
std::map<uint64_t, uint64_t> data_packets_per_stream(const GeneratedTraffic& t, const std::vector<size_t>& sent) {
  std::map<uint64_t, uint64_t> n;
  for (size_t i : sent)
    if (!t.packets[i].spans.empty()) ++n[t.packets[i].spans[0].stream];
  return n;
}

const auto kCases =
    ::testing::Values(SpanE2eCase{"pinned_copy", MemoryKind::pinned, Staging::copy, LaunchMode::per_burst, 0},
                      SpanE2eCase{"mapped_direct_graph", MemoryKind::mapped, Staging::direct, LaunchMode::graph, 1},
                      SpanE2eCase{"mapped_persistent", MemoryKind::mapped, Staging::direct, LaunchMode::persistent, 2});

// ---- VITA-49 ----

class vita49_socket_to_gpu : public ::testing::TestWithParam<SpanE2eCase> {};

TEST_P(vita49_socket_to_gpu, TwoStreamsWithContextAndLossesLandAsReferenceFrames) {
  NDQ_REQUIRE_GPU();
  constexpr uint64_t kRate = 10'000;  // samples per second: the integer timestamp moves every few frames
  testgen::Vita49GenOptions o;
  o.streams = {0x1000, 0x2000};
  o.class_id = true;
  o.trailer = true;
  o.tsi = testgen::VrtTsi::utc;
  o.tsf = testgen::VrtTsf::sample_count;
  o.sample_rate = kRate;
  o.first_frame = 1000;
  o.samples_per_packet = {1000, 367, 2048};  // packets of three sizes, crossing frame boundaries
  o.samples_per_frame = 4096;
  o.sample_bytes = 4;
  o.frames = 8;
  o.context_every = 5;
  std::vector<testgen::VrtPacketFields> fields;
  const GeneratedTraffic t = testgen::make_vita49(o, &fields);
  const std::vector<size_t> order = testgen::drop_every(testgen::in_order(t.packets.size()), 9, 2);

  ReorderConfig c;
  c.mode = ReorderMode::vita49;
  c.vita49.samples_per_frame = 4096;
  c.vita49.sample_bytes = 4;
  c.vita49.sample_rate = kRate;
  c.max_open_frames = 4;
  c.max_streams = 2;
  c.frame_buffers = 32;
  const E2eRun r = send_and_build(GetParam(), static_cast<uint16_t>(47400 + GetParam().port), c, t, order);
  check_run(r, t, order);
  if (HasFatalFailure()) return;

  uint64_t contexts = 0;
  for (size_t i : r.sent) contexts += t.packets[i].control;
  EXPECT_GT(contexts, 0u);
  EXPECT_EQ(r.stats.control, contexts);
  EXPECT_EQ(r.stats.duplicate, 0u);
  EXPECT_EQ(r.stats.packets_placed, r.sent.size() - contexts);
  EXPECT_GT(r.stats.frames_incomplete, 0u);
  EXPECT_GT(r.stats.bytes_missing, 0u);

  // Streams: the two stream ids (context packets, counted as control, open none), each with
  // every data packet sent of it placed.
  const auto per_stream = data_packets_per_stream(t, r.sent);
  ASSERT_EQ(r.streams.size(), 2u);
  uint64_t placed = 0;
  for (const StreamStats& s : r.streams) {
    EXPECT_TRUE(s.stream == 0x1000 || s.stream == 0x2000) << "stream " << s.stream;
    EXPECT_EQ(s.packets, per_stream.count(s.stream) ? per_stream.at(s.stream) : 0) << "stream " << s.stream;
    EXPECT_EQ(s.packets_placed, s.packets) << "stream " << s.stream;
    EXPECT_EQ(s.duplicate + s.late + s.no_buffer + s.malformed, 0u) << "stream " << s.stream;
    placed += s.packets_placed;
  }
  EXPECT_EQ(placed, r.stats.packets_placed);

  // Timestamps (docs/gpu.md, "Frame metadata"): those of the packet holding the frame's lowest
  // offset that arrived. Where that packet begins at the frame's first sample, they are the
  // time of the frame's first sample (the generator's truth).
  std::map<Key, const testgen::FrameTruth*> truth;
  for (const auto& f : t.frames) truth[{f.stream, f.frame}] = &f;
  std::map<Key, std::pair<uint64_t, size_t>> lowest;  // frame -> (offset, packet)
  for (size_t i : std::set<size_t>(r.sent.begin(), r.sent.end()))
    for (const testgen::TruthSpan& sp : t.packets[i].spans) {
      auto [it, fresh] = lowest.emplace(Key{sp.stream, sp.frame}, std::pair{sp.offset, i});
      if (!fresh && sp.offset < it->second.first) it->second = {sp.offset, i};
    }
  for (const auto& [key, fi] : r.info) {
    EXPECT_EQ(fi.stream, key.first);
    EXPECT_TRUE(key.first == 0x1000 || key.first == 0x2000) << "stream " << key.first;
    ASSERT_TRUE(lowest.count(key)) << "frame " << key.second << " of stream " << key.first;
    const auto [offset, i] = lowest.at(key);
    const testgen::VrtPacketFields& pf = fields.at(i);
    EXPECT_TRUE(fi.has_timestamp) << "frame " << key.second << " of stream " << key.first;
    EXPECT_EQ(fi.timestamp, pf.integer_timestamp) << "frame " << key.second << " of stream " << key.first;
    EXPECT_EQ(fi.timestamp_frac, pf.fractional_timestamp) << "frame " << key.second << " of stream " << key.first;
    const testgen::TruthSpan& first = t.packets[i].spans.front();
    if (offset == 0 && first.frame == key.second) {
      EXPECT_EQ(fi.timestamp, truth.at(key)->timestamp) << "frame " << key.second;
      EXPECT_EQ(fi.timestamp_frac, truth.at(key)->timestamp_frac) << "frame " << key.second;
    }
  }
  std::printf("%s: %zu packets sent (%llu context) -> %zu frames, %llu complete, %llu jobs\n", GetParam().name,
              r.sent.size(), (unsigned long long)contexts, r.frames.size(),
              (unsigned long long)r.stats.frames_complete, (unsigned long long)r.stats.jobs);
}

INSTANTIATE_TEST_SUITE_P(Paths, vita49_socket_to_gpu, kCases, case_name);

// ---- fields: DAQIRI batch number + packet index ----

class fields_socket_to_gpu : public ::testing::TestWithParam<SpanE2eCase> {};

TEST_P(fields_socket_to_gpu, ThreeStreamsWrappingFramesReorderedDuplicatedLost) {
  NDQ_REQUIRE_GPU();
  testgen::FieldsGenOptions o;
  o.streams = 3;
  o.frames = 8;
  o.payload = 8192;
  o.frame_bytes = 8 * 8192 - 100;  // the last packet of a frame is shorter
  o.frame_bits = 16;
  o.first_frame = 65536 - 4;       // the 16-bit frame number wraps in the middle
  const GeneratedTraffic t = testgen::make_fields(o);

  // The positions (in send order) of the packets of (stream, frame), k-th packet first.
  std::vector<size_t> order = testgen::in_order(t.packets.size());
  auto packets_of = [&](uint64_t stream, uint64_t frame) {
    std::vector<size_t> at;
    for (size_t k = 0; k < order.size(); ++k)
      if (t.packets[order[k]].spans[0].stream == stream && t.packets[order[k]].spans[0].frame == frame) at.push_back(k);
    return at;
  };
  // Stream 1's frame 65534: its packets sent last to first (the shorter last packet first).
  const std::vector<size_t> reversed = packets_of(1, 65536 - 2);
  ASSERT_EQ(reversed.size(), 8u);
  for (size_t a = 0, b = reversed.size() - 1; a < b; ++a, --b) std::swap(order[reversed[a]], order[reversed[b]]);
  // Stream 0's frame 65537 (1 after the wrap): packet 3 never sent.
  const size_t lost = packets_of(0, 65536 + 1).at(3);
  order.erase(order.begin() + static_cast<std::ptrdiff_t>(lost));
  // Stream 2's frame 65536 (0 on the wire): its first packet sent twice, the copy right after
  // it (while the frame is open: a copy after completion would count as late).
  const size_t dup = packets_of(2, 65536).at(0);
  order.insert(order.begin() + static_cast<std::ptrdiff_t>(dup) + 1, order[dup]);

  ReorderConfig c;
  c.mode = ReorderMode::fields;
  c.fields.frame = PacketField{2, 16, ByteOrder::big};
  c.fields.index = PacketField{4, 32, ByteOrder::big};
  c.fields.stream = PacketField{8, 8, ByteOrder::big};
  c.payload_offset = testgen::kFieldsHeader;
  c.payload_size = 8192;
  c.packets_per_frame = 8;
  c.frame_bytes = o.frame_bytes;
  c.max_open_frames = 4;
  c.max_streams = 3;
  c.frame_buffers = 32;
  const E2eRun r = send_and_build(GetParam(), static_cast<uint16_t>(47420 + GetParam().port), c, t, order);
  check_run(r, t, order);
  if (HasFatalFailure()) return;

  EXPECT_EQ(r.stats.control, 0u);
  EXPECT_EQ(r.stats.duplicate, 1u);
  EXPECT_EQ(r.stats.packets_placed, t.packets.size() - 1);
  EXPECT_EQ(r.stats.frames_complete, 3u * 8 - 1);
  EXPECT_EQ(r.stats.frames_incomplete, 1u);
  EXPECT_EQ(r.stats.bytes_missing, 8192u);
  EXPECT_EQ(r.frames.size(), 3u * 8);
  for (const auto& [key, fi] : r.info) {
    EXPECT_LT(key.first, 3u);
    EXPECT_GE(key.second, 65536u - 4);
    EXPECT_LT(key.second, 65536u + 4);
    EXPECT_FALSE(fi.has_timestamp) << "no fields.timestamp declared";
  }

  const auto per_stream = data_packets_per_stream(t, r.sent);
  ASSERT_EQ(r.streams.size(), 3u);
  uint64_t placed = 0;
  for (const StreamStats& s : r.streams) {
    ASSERT_LT(s.stream, 3u);
    EXPECT_EQ(s.packets, per_stream.at(s.stream)) << "stream " << s.stream;
    EXPECT_EQ(s.duplicate, s.stream == 2 ? 1u : 0u) << "stream " << s.stream;
    EXPECT_EQ(s.packets_placed, s.packets - s.duplicate) << "stream " << s.stream;
    EXPECT_EQ(s.frames_complete + s.frames_incomplete, 8u) << "stream " << s.stream;
    EXPECT_EQ(s.frames_incomplete, s.stream == 0 ? 1u : 0u) << "stream " << s.stream;
    EXPECT_EQ(s.bytes_missing, s.stream == 0 ? 8192u : 0u) << "stream " << s.stream;
    EXPECT_EQ(s.late + s.no_buffer + s.malformed, 0u) << "stream " << s.stream;
    placed += s.packets_placed;
  }
  EXPECT_EQ(placed, r.stats.packets_placed);
  std::printf("%s: %zu packets sent -> %zu frames, %llu complete, %llu duplicate, %llu jobs\n", GetParam().name,
              r.sent.size(), r.frames.size(), (unsigned long long)r.stats.frames_complete,
              (unsigned long long)r.stats.duplicate, (unsigned long long)r.stats.jobs);
}

INSTANTIATE_TEST_SUITE_P(Paths, fields_socket_to_gpu, kCases, case_name);

}  // namespace
}  // namespace netdaq::gpu
