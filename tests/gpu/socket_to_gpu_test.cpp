// End to end on the GPU machine: netdaq payload packets sent over UDP loopback by one socket
// session, received by another into pinned/mapped host buffers, land as correct frames in
// GPU memory (every byte compared with the payload pattern of its sequence number).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "gpu_test_util.h"
#include "netdaq/netdaq.h"

namespace netdaq::gpu {
namespace {

struct E2eCase {
  const char* name;
  MemoryKind kind;
  bool split;      // 64-byte headers in host memory, samples in GPU-readable memory
  Staging staging;
  LaunchMode launch;
};

class SocketToGpu : public ::testing::TestWithParam<E2eCase> {};

constexpr uint32_t kPpf = 64, kFrames = 40, kSamples = 1024;

Config make_config(const E2eCase& c, uint16_t port) {
  Config cfg;
  const uint32_t header = c.split ? 64 : 24;  // split: the netdaq header plus pattern bytes up to 64
  if (c.split) cfg.memory_regions.push_back({.name = "hdr", .kind = MemoryKind::host, .buf_size = 64, .num_bufs = 8192});
  cfg.memory_regions.push_back({.name = "rx", .kind = c.kind, .buf_size = 2048, .num_bufs = 8192, .gpu = 0});
  cfg.memory_regions.push_back({.name = "tx", .buf_size = 2048, .num_bufs = 4096});
  InterfaceConfig rx;
  rx.name = "rx";
  rx.address = "udp://127.0.0.1:" + std::to_string(port);
  rx.options.get<SocketOptions>().gro = false;
  rx.rx.queues.push_back({.id = 0, .batch_size = 64,
                          .memory_regions = c.split ? std::vector<std::string>{"hdr", "rx"} : std::vector<std::string>{"rx"}});
  ReorderConfig g;
  g.seq_offset = 8;
  g.seq_bits = 64;
  g.seq_byte_order = ByteOrder::little;
  g.payload_offset = header;
  g.payload_size = kSamples;
  g.packets_per_frame = kPpf;
  g.frame_buffers = 8;
  g.staging = c.staging;
  g.launch = c.launch;
  rx.rx.reorder.push_back(g);
  cfg.interfaces.push_back(rx);
  InterfaceConfig tx;
  tx.name = "tx";
  tx.tx.destination = rx.address;
  tx.options.get<SocketOptions>().gso = false;
  tx.tx.queues.push_back({.id = 0, .batch_size = 64, .memory_regions = {"tx"}});
  cfg.interfaces.push_back(tx);
  return cfg;
}

TEST_P(SocketToGpu, PacketsLandAsCorrectFrames) {
  NDQ_REQUIRE_GPU();
  const E2eCase& c = GetParam();
  const uint32_t header = c.split ? 64 : 24;
  const uint32_t size = header + kSamples;
  static uint16_t port = 47100;
  Session session(make_config(c, port++));
  FramePipeline pipe(session, "rx", session.config().interfaces[0].rx.reorder[0]);
  RxQueue& rxq = session.rx_queue("rx");
  TxQueue& txq = session.tx_queue("tx");

  std::vector<std::byte> got(pipe.frame_bytes()), want(size);
  uint64_t frames_checked = 0, sent = 0, received = 0;
  auto check = [&](Frame f) {
    ASSERT_EQ(cudaMemcpy(got.data(), f.data(), got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    for (uint32_t i = 0; i < kPpf; ++i) {
      const uint64_t seq = f.index() * kPpf + i;
      const bool missing = f.missing()[i / 64] >> (i % 64) & 1;
      if (missing) continue;
      ASSERT_TRUE(write_payload(want, 0, seq, 0));
      ASSERT_EQ(std::memcmp(got.data() + size_t{i} * kSamples, want.data() + header, kSamples), 0)
          << "frame " << f.index() << " slot " << i;
    }
    ++frames_checked;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (sent < kPpf * kFrames && std::chrono::steady_clock::now() < deadline) {
    TxBurst b = txq.allocate(64);
    for (Packet& p : b) {
      write_payload(p.buffer(), 0, sent++, payload_clock_ns());
      p.set_size(size);
    }
    while (b && std::chrono::steady_clock::now() < deadline) b.send();
    // Receive what arrived before sending more: loopback stays drop-free.
    for (int idle = 0; received < sent && idle < 20000 && std::chrono::steady_clock::now() < deadline;) {
      RxBurst r = rxq.poll();
      if (!r) { ++idle; continue; }
      received += r.size();
      pipe.submit(std::move(r));
      while (Frame f = pipe.next_frame()) check(std::move(f));
    }
  }
  pipe.flush();
  pipe.synchronize();
  while (Frame f = pipe.next_frame()) check(std::move(f));
  const PipelineStats s = pipe.stats();
  EXPECT_TRUE(ndqtest::pipeline_accounted(s));
  EXPECT_EQ(sent, uint64_t{kPpf} * kFrames);
  EXPECT_EQ(received, sent) << "loopback lost packets";
  EXPECT_EQ(s.packets_in, received);
  EXPECT_EQ(s.packets_placed, received);
  EXPECT_EQ(s.frames_complete, kFrames);
  EXPECT_EQ(frames_checked, kFrames);
  EXPECT_EQ(s.malformed + s.duplicate + s.late + s.no_buffer, 0u);
  std::printf("%s: %llu packets -> %llu frames in GPU memory, %llu bytes staged, %llu jobs, %llu waits\n", c.name,
              (unsigned long long)received, (unsigned long long)frames_checked, (unsigned long long)s.bytes_to_gpu,
              (unsigned long long)s.jobs, (unsigned long long)s.waits);
}

INSTANTIATE_TEST_SUITE_P(
    Paths, SocketToGpu,
    ::testing::Values(E2eCase{"pinned_copy", MemoryKind::pinned, false, Staging::copy, LaunchMode::per_burst},
                      E2eCase{"mapped_direct", MemoryKind::mapped, false, Staging::direct, LaunchMode::per_burst},
                      E2eCase{"split_copy_graph", MemoryKind::pinned, true, Staging::copy, LaunchMode::graph},
                      E2eCase{"mapped_persistent", MemoryKind::mapped, false, Staging::direct, LaunchMode::persistent},
                      // the persistent kernel gathering staged packets itself (split: a
                      // payload not 16-byte aligned)
                      E2eCase{"pinned_copy_persistent", MemoryKind::pinned, false, Staging::copy, LaunchMode::persistent},
                      E2eCase{"split_copy_persistent", MemoryKind::pinned, true, Staging::copy, LaunchMode::persistent}),
    [](const auto& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace netdaq::gpu
