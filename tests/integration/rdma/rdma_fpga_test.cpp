// An independent peer that behaves like an FPGA sensor (tests/guest/fpga_peer.py: Python and
// rdma-core's pyverbs, no netdaq code): queue pairs set up by hand from the JSON files, RDMA
// WRITE with immediate into netdaq's ring over UC (the Holoscan Sensor Bridge pattern), a gap
// in its sequence, and netdaq sending to it. In the guest's Soft-RoCE lab.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <future>

#include "gpu/host/frame_tracker.h"
#include "netdaq/engine_info.h"
#include "netdaq/engines/rdma.h"
#include "netdaq/session.h"
#include "rdma_lab.h"
#include "test_util.h"
#include "test_paths.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// fpga_peer.py on lab device 0 with these arguments (its local file `local`, netdaq's `peer`).
std::vector<std::string> fpga(const std::string& mode, const std::string& local, const std::string& peer,
                              std::vector<std::string> args) {
  std::vector<std::string> argv{"/usr/bin/python3", std::string(NETDAQ_SOURCE_DIR) + "/tests/guest/fpga_peer.py",
                                mode, "--device", env("NDQ_RDMA_DEV0"), "--gid-index", env("NDQ_RDMA_GID_INDEX0"),
                                "--local", local, "--peer", peer, "--timeout", "60"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string output_of(const TempFile& f) {
  const Bytes b = read_file(f.path);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// netdaq's interface on lab device 1: rx or tx queues of one region each.
Config netdaq_side(const Lab& l, bool rx, unsigned queues, RdmaOptions o, const std::string& local,
                   const std::string& peer) {
  Config c;
  c.log.level = "warn";
  o.connect = RdmaConnect::manual;
  o.local_file = local;
  o.peer_file = peer;
  InterfaceConfig i;
  i.name = "sensor";
  i.engine = "rdma";
  i.address = "rdma://" + l.server_ip;
  i.options.get<RdmaOptions>() = o;
  for (unsigned q = 0; q < queues; ++q) {
    const std::string region = "r" + std::to_string(q);
    c.memory_regions.push_back({.name = region, .buf_size = 4096, .num_bufs = 1024});
    QueueConfig qc{.id = uint16_t(q), .batch_size = 32, .ring_depth = 16, .memory_regions = {region}};
    (rx ? i.rx.queues : i.tx.queues).push_back(qc);
  }
  c.interfaces = {i};
  return c;
}

// The FPGA writes 100 messages of 4000 bytes per queue pair into netdaq's rings (UC, RDMA WRITE
// with immediate, 128 slots: it has no credits, so netdaq's ring holds them all); every
// message arrives in its slot with its immediate, every byte as sent.
TEST(RdmaFpgaPeer, FpgaWritesWithImmediateIntoNetdaqsRing) {
  NDQ_REQUIRE_LAB();
  TempFile netdaq_file, fpga_file, out;
  std::filesystem::remove(fpga_file.path);  // fpga_peer.py writes it when its QPs exist
  RdmaOptions o;
  o.transport = RdmaTransport::uc;
  o.op = RdmaOp::write_imm;
  o.recv_depth = 128;
  constexpr unsigned kQueues = 2, kCount = 100, kSize = 4000;
  const Wire wire;
  Session s(netdaq_side(*lab(), true, kQueues, o, netdaq_file.path, fpga_file.path));
  Subprocess peer(fpga("send", fpga_file.path, netdaq_file.path,
                       {"--transport", "uc", "--op", "write_imm", "--count", std::to_string(kCount), "--size",
                        std::to_string(kSize), "--queues", std::to_string(kQueues)}),
                  out.path);
  std::vector<std::future<std::vector<Message>>> got;
  for (unsigned q = 0; q < kQueues; ++q)
    got.push_back(std::async(std::launch::async, [&, q] { return collect_messages(*s.rx_queues()[q], kCount, 90s); }));
  EXPECT_EQ(peer.wait(90s), 0) << output_of(out);
  for (unsigned q = 0; q < kQueues; ++q) {
    const auto m = got[q].get();
    EXPECT_TRUE(all_accounted(kCount, m.size(), {s.rx_queues()[q]->stats()}));
    ASSERT_EQ(m.size(), kCount) << "rx queue " << q << "; fpga_peer: " << output_of(out);
    for (unsigned i = 0; i < kCount; ++i) {
      ASSERT_EQ(m[i].immediate, std::optional<uint32_t>(i));
      ASSERT_TRUE(check_payload(m[i].bytes, q * kCount + i, kSize));
    }
  }
  for (const auto& q : s.stats()) EXPECT_EQ(q.total_drops(), 0u) << q.queue << ": " << q.mode;
  EXPECT_TRUE(wire.crossed(kQueues * kCount));  // the FPGA on device 0, netdaq on device 1
}

// A message the FPGA never sent (UC: lost on the way) is a gap in the immediates: counted lost
// (kernel: before netdaq saw it), exactly one, and the rest arrive. Then the sensor-ingest
// pattern on the CPU: each packet's immediate is the sequence of an rx.reorder in mode
// immediate (validated as such) and goes through the frame bookkeeping the GPU pipeline uses
// (FrameTracker), 16 packets per frame: frames 1..3 complete, frame 0 closed with exactly slot
// 7 missing, and every placed packet's bytes are the message of its slot.
TEST(RdmaFpgaPeer, AGapInTheImmediatesIsCountedLostAndFramesAreBuiltFromThem) {
  NDQ_REQUIRE_LAB();
  TempFile netdaq_file, fpga_file, out;
  std::filesystem::remove(fpga_file.path);
  RdmaOptions o;
  o.transport = RdmaTransport::uc;
  o.op = RdmaOp::write_imm;
  o.recv_depth = 128;
  constexpr uint32_t kCount = 64, kSize = 512, kPerFrame = 16;
  const Config c = netdaq_side(*lab(), true, 1, o, netdaq_file.path, fpga_file.path);
  {  // The reorder this test plays on the CPU is a valid one (samples in GPU-readable memory)...
    Config gpu = c;
    gpu.memory_regions[0].kind = MemoryKind::pinned;
    gpu.memory_regions[0].gpu = 0;
    gpu.interfaces[0].rx.reorder = {
        {.queue = 0, .mode = ReorderMode::immediate, .payload_size = kSize, .packets_per_frame = kPerFrame}};
    EXPECT_TRUE(gpu.validate().empty()) << gpu.validate()[0].to_string();
    // ... and only where packets carry immediates.
    gpu.interfaces[0].options.get<RdmaOptions>().op = RdmaOp::send;
    const auto issues = gpu.validate();
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_NE(issues[0].to_string().find("rx.reorder[0].mode = 'immediate': needs packets that carry immediate data"),
              std::string::npos)
        << issues[0].to_string();
  }
  const Wire wire;
  Session s(c);
  Subprocess peer(fpga("send", fpga_file.path, netdaq_file.path,
                       {"--transport", "uc", "--op", "write_imm", "--count", std::to_string(kCount), "--size",
                        std::to_string(kSize), "--gap", "7"}),
                  out.path);
  const auto m = collect_messages(*s.rx_queues()[0], kCount - 1, 90s);
  EXPECT_EQ(peer.wait(90s), 0) << output_of(out);
  // kCount in the sequence, one of them lost on the way: counted (kernel), not delivered.
  EXPECT_TRUE(all_accounted(kCount, m.size(), {s.rx_queues()[0]->stats()}));
  ASSERT_EQ(m.size(), kCount - 1) << output_of(out);
  EXPECT_EQ(m[6].immediate, std::optional<uint32_t>(6u));
  EXPECT_EQ(m[7].immediate, std::optional<uint32_t>(8u));
  const QueueStats st = s.rx_queues()[0]->stats();
  EXPECT_EQ(st.drop(DropReason::kernel), 1u) << st.mode;
  EXPECT_EQ(engine_counter(st, "sequence_gaps"), 1u);
  EXPECT_EQ(st.packets, kCount - 1);
  EXPECT_TRUE(wire.crossed(kCount - 1));

  gpu::FrameTracker t({.packets_per_frame = kPerFrame, .max_open_frames = 2, .frame_buffers = 4, .seq_bits = 32});
  std::vector<std::vector<const Bytes*>> frames(4, std::vector<const Bytes*>(kPerFrame, nullptr));
  std::vector<uint32_t> owner(4 * kPerFrame);  // ring slot -> frame buffer's frame
  for (const Message& msg : m) {
    ASSERT_TRUE(msg.immediate.has_value());
    uint32_t ring_slot = 0;
    ASSERT_EQ(t.place(*msg.immediate, 0, &ring_slot), gpu::Placement::placed);
    EXPECT_EQ(ring_slot % kPerFrame, *msg.immediate % kPerFrame);
    frames[*msg.immediate / kPerFrame][ring_slot % kPerFrame] = &msg.bytes;
  }
  t.close_all();
  gpu::ClosedFrame f;
  std::vector<uint64_t> closed;
  while (t.pop_closed(&f)) {
    closed.push_back(f.index);
    const uint64_t present = t.presence(f.buffer)[0];
    EXPECT_EQ(f.complete, f.index != 0) << "frame " << f.index;
    EXPECT_EQ(present, f.index == 0 ? 0xffffu & ~(1u << 7) : 0xffffu) << "frame " << f.index;
    for (uint32_t slot = 0; slot < kPerFrame; ++slot) {
      const uint64_t seq = f.index * kPerFrame + slot;
      if (seq == 7) continue;
      ASSERT_NE(frames[f.index][slot], nullptr) << seq;
      EXPECT_TRUE(check_payload(*frames[f.index][slot], seq, kSize)) << seq;
    }
    t.release_buffer(f.buffer);
  }
  EXPECT_EQ(closed, (std::vector<uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(t.stats().packets_missing, 1u);  // the loss the engine counted, as the frames see it
}

// netdaq sends (RC SEND) to the FPGA-style receiver, which checks every byte.
TEST(RdmaFpgaPeer, NetdaqSendsToTheFpgaStyleReceiver) {
  NDQ_REQUIRE_LAB();
  TempFile netdaq_file, fpga_file, out;
  std::filesystem::remove(fpga_file.path);
  RdmaOptions o;
  o.transport = RdmaTransport::rc;
  o.op = RdmaOp::send;
  constexpr unsigned kCount = 500, kSize = 3000;
  const Wire wire;
  Session s(netdaq_side(*lab(), false, 1, o, netdaq_file.path, fpga_file.path));
  Subprocess peer(fpga("recv", fpga_file.path, netdaq_file.path,
                       {"--transport", "rc", "--op", "send", "--count", std::to_string(kCount), "--size",
                        std::to_string(kSize)}),
                  out.path);
  std::vector<Bytes> payloads;
  for (unsigned i = 0; i < kCount; ++i) payloads.push_back(make_payload(i, kSize));
  EXPECT_EQ(send_payloads(*s.tx_queues()[0], payloads, 60s), kCount);
  EXPECT_EQ(peer.wait(90s), 0) << output_of(out);
  EXPECT_NE(output_of(out).find("all bytes checked"), std::string::npos) << output_of(out);
  EXPECT_TRUE(sender_accounted(kCount, s.tx_queues()[0]->stats()));
  EXPECT_EQ(s.tx_queues()[0]->stats().total_drops(), 0u);
  EXPECT_TRUE(wire.crossed(0, kCount));  // netdaq on device 1 sends to the FPGA on device 0
}

}  // namespace
