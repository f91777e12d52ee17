// connect: manual, the FPGA pattern, for real in the guest's Soft-RoCE lab: queue pairs set up
// by hand from JSON files each side writes for the other (rdma.local_file / rdma.peer_file),
// RC and UC, SEND and WRITE with immediate; every message checked byte for byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "netdaq/engines/rdma.h"
#include "netdaq/session.h"
#include "rdma_lab.h"
#include "test_util.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

struct Manual {
  unsigned queues = 2;
  uint32_t buf_size = 2048;
  RdmaOptions options;
  std::string rx_file, tx_file;  // each side's local file, the other's peer file
};

// Interface "rx" on device 1 and "tx" on device 0, in one session; each rx queue has a region
// of its own (a write_imm ring is consecutive buffers of one region).
Config manual_config(const Lab& l, const Manual& m) {
  Config c;
  c.log.level = "warn";
  RdmaOptions o = m.options;
  o.connect = RdmaConnect::manual;
  o.recv_depth = 64;
  o.send_depth = 64;
  InterfaceConfig rx;
  rx.name = "rx";
  rx.engine = "rdma";
  rx.address = "rdma://" + l.server_ip;
  o.local_file = m.rx_file;
  o.peer_file = m.tx_file;
  rx.options.get<RdmaOptions>() = o;
  InterfaceConfig tx;
  tx.name = "tx";
  tx.engine = "rdma";
  tx.address = "rdma://" + l.client_ip;
  o.local_file = m.tx_file;
  o.peer_file = m.rx_file;
  tx.options.get<RdmaOptions>() = o;
  c.memory_regions.push_back({.name = "tx", .buf_size = m.buf_size, .num_bufs = 2048});
  for (unsigned i = 0; i < m.queues; ++i) {
    const std::string region = "rx" + std::to_string(i);
    c.memory_regions.push_back({.name = region, .buf_size = m.buf_size, .num_bufs = 1024});
    rx.rx.queues.push_back({.id = uint16_t(i), .batch_size = 32, .ring_depth = 16, .memory_regions = {region}});
    tx.tx.queues.push_back({.id = uint16_t(i), .batch_size = 32, .ring_depth = 16, .memory_regions = {"tx"}});
  }
  c.interfaces = {rx, tx};
  return c;
}

// Waits (bounded) until every queue's mode line says it is paired.
bool wait_paired(Session& s) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    for (const auto& q : s.stats()) all = all && q.mode.find("paired with") != std::string::npos;
    if (all) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

std::string modes(Session& s) {
  std::string m;
  for (const auto& q : s.stats()) m += q.queue + ": " + q.mode + "\n";
  return m;
}

class RdmaManual : public ::testing::TestWithParam<std::pair<RdmaTransport, RdmaOp>> {
 protected:
  TempFile rx_file_, tx_file_;
};

// Each transport and op: every message of each tx queue arrives once on its rx queue, in
// order (RC and UC keep order on one queue pair), byte for byte; nothing counted lost.
TEST_P(RdmaManual, PairsFromFilesAndDeliversEveryMessage) {
  NDQ_REQUIRE_LAB();
  Manual m;
  m.options.transport = GetParam().first;
  m.options.op = GetParam().second;
  m.rx_file = rx_file_.path;
  m.tx_file = tx_file_.path;
  const Wire wire;
  Session s(manual_config(*lab(), m));
  ASSERT_TRUE(wait_paired(s)) << modes(s);
  constexpr size_t kPerQueue = 2000;
  std::vector<std::vector<Bytes>> payloads(m.queues);
  for (size_t q = 0; q < m.queues; ++q)
    for (size_t i = 0; i < kPerQueue; ++i)
      payloads[q].push_back(make_payload(q * kPerQueue + i, 8 + (i * 61) % (m.buf_size - 8)));
  // UC has no flow control of its own: a paced window keeps the sender within the receives
  // posted (send) and the ring's credit does it for write_imm.
  std::vector<std::atomic<size_t>> arrived(m.queues);
  std::vector<std::future<size_t>> senders;
  for (size_t q = 0; q < m.queues; ++q)
    senders.push_back(std::async(std::launch::async, [&, q] {
      return send_payloads(*s.tx_queues()[q], payloads[q], 60s, [&, q] { return arrived[q].load(); }, 32);
    }));
  std::vector<std::future<std::vector<Message>>> receivers;
  for (size_t q = 0; q < m.queues; ++q)
    receivers.push_back(std::async(std::launch::async, [&, q] {
      std::vector<Message> got;
      const auto deadline = std::chrono::steady_clock::now() + 60s;
      while (got.size() < kPerQueue && std::chrono::steady_clock::now() < deadline) {
        RxBurst b = s.rx_queues()[q]->poll();
        for (size_t i = 0; i < b.size(); ++i) got.push_back({bytes_of(b[i]), b[i].immediate()});
        arrived[q].store(got.size());
      }
      return got;
    }));
  for (size_t q = 0; q < m.queues; ++q) {
    const auto got = receivers[q].get();
    EXPECT_TRUE(all_accounted(kPerQueue, got.size(), {s.rx_queues()[q]->stats()}));
    ASSERT_EQ(got.size(), kPerQueue) << "rx queue " << q << "\n" << modes(s);
    for (size_t i = 0; i < kPerQueue; ++i) {
      ASSERT_TRUE(check_payload(got[i].bytes, q * kPerQueue + i, payloads[q][i].size())) << "queue " << q;
      if (m.options.op == RdmaOp::write_imm) {
        ASSERT_EQ(got[i].immediate, std::optional<uint32_t>(uint32_t(i)));
      }
    }
  }
  for (auto& f : senders) EXPECT_EQ(f.get(), kPerQueue);
  for (auto* q : s.tx_queues()) EXPECT_TRUE(sender_accounted(kPerQueue, q->stats()));
  for (const auto& q : s.stats()) {
    EXPECT_EQ(q.total_drops(), 0u) << q.queue << ": " << q.mode;
    EXPECT_EQ(q.packets, kPerQueue) << q.queue;
  }
  EXPECT_TRUE(wire.crossed(m.queues * kPerQueue));  // tx on device 0, rx on device 1
}

INSTANTIATE_TEST_SUITE_P(Modes, RdmaManual,
                         ::testing::Values(std::pair{RdmaTransport::rc, RdmaOp::send},
                                           std::pair{RdmaTransport::uc, RdmaOp::write_imm},
                                           std::pair{RdmaTransport::uc, RdmaOp::send},
                                           std::pair{RdmaTransport::rc, RdmaOp::write_imm}),
                         [](const auto& info) {
                           return std::string(to_string(info.param.first)) + "_" + to_string(info.param.second);
                         });

// The local file holds what an FPGA (or its controller) needs: the GID and each queue pair's
// QPN, PSN and, for write_imm, the ring.
TEST(RdmaManualFiles, LocalFileListsQueuePairsAndRing) {
  NDQ_REQUIRE_LAB();
  TempFile rx_file, tx_file;
  Manual m;
  m.queues = 1;
  m.options.transport = RdmaTransport::uc;
  m.options.op = RdmaOp::write_imm;
  m.rx_file = rx_file.path;
  m.tx_file = tx_file.path;
  Session s(manual_config(*lab(), m));
  ASSERT_TRUE(wait_paired(s)) << modes(s);
  const Bytes jb = read_file(rx_file.path);
  const std::string j(reinterpret_cast<const char*>(jb.data()), jb.size());
  EXPECT_NE(j.find("\"gid\": \"::ffff:" + lab()->server_ip + "\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"qpn\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"ring\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"slots\": 64"), std::string::npos) << j;
  const Bytes tb = read_file(tx_file.path);
  const std::string t(reinterpret_cast<const char*>(tb.data()), tb.size());
  EXPECT_NE(t.find("\"credit\""), std::string::npos) << t;
}

// A peer file that is not what it should be: the queues say why in their mode line and keep
// waiting for a valid one (it may be rewritten).
TEST(RdmaManualFiles, ABadPeerFileIsNamedInTheQueuesState) {
  NDQ_REQUIRE_LAB();
  TempFile rx_file, bad;
  {
    std::ofstream f(bad.path);
    f << "{\"gid\": \"10.0.0.1\", \"tx\": []}";
  }
  Manual m;
  m.queues = 1;
  m.rx_file = rx_file.path;
  m.tx_file = bad.path;
  Config c = manual_config(*lab(), m);
  c.interfaces.pop_back();  // only the receiver
  Session s(c);
  std::string mode;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (mode.find("not an IPv6-form GID") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    mode = s.rx_queues()[0]->stats().mode;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_NE(mode.find("waiting for a valid rdma.peer_file"), std::string::npos) << mode;
  EXPECT_NE(mode.find("gid '10.0.0.1' is not an IPv6-form GID"), std::string::npos) << mode;
}

TEST(RdmaManualFiles, AWrongGidIndexSaysWhereTheAddressIs) {
  NDQ_REQUIRE_LAB();
  TempFile rx_file, tx_file;
  Manual m;
  m.queues = 1;
  m.options.gid_index = 0;  // the veth's IPv6 link-local GID in the lab
  m.rx_file = rx_file.path;
  m.tx_file = tx_file.path;
  const std::string e = error_of(manual_config(*lab(), m));
  EXPECT_NE(e.find("rdma.gid_index 0"), std::string::npos) << e;
  EXPECT_NE(e.find("is at index 1"), std::string::npos) << e;
}

}  // namespace
