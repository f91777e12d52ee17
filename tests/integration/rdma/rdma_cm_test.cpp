// The rdma engine for real: two Soft-RoCE (rdma_rxe) devices over a veth pair in the QEMU
// guest (tests/guest/rdma-lab.sh, run by the ctest guest_kernel_tests). The client (NDQ_RDMA_IP0)
// connects to the server side (NDQ_RDMA_IP1) through rdma_cm; every message is checked byte
// for byte and counted. Outside that lab (no NDQ_RDMA_IP0/IP1) the tests skip, or fail with
// CI=true: they only run through the guest.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <csignal>
#include <future>
#include <thread>

#include "netdaq/engines/rdma.h"
#include "netdaq/payload.h"
#include "netdaq/session.h"
#include "rdma_lab.h"
#include "test_util.h"
#include "test_paths.h"


using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

// A fresh rdma_cm port per test (the listener of the one before may linger a moment).
uint16_t next_port() {
  static uint16_t port = 18515;
  return ++port;
}

struct Pair {
  unsigned rx_queues = 1, tx_queues = 1;
  uint32_t buf_size = 2048;
  uint32_t recv_depth = 256, send_depth = 128;
  uint16_t port = next_port();
  RdmaOptions options;
};

Config pair_config(const Lab& l, const Pair& p) {
  Config c;
  c.log.level = "warn";
  c.memory_regions.push_back({.name = "rx", .buf_size = p.buf_size, .num_bufs = 4096});
  c.memory_regions.push_back({.name = "tx", .buf_size = p.buf_size, .num_bufs = 2048});
  RdmaOptions o = p.options;
  o.recv_depth = p.recv_depth;
  o.send_depth = p.send_depth;
  // The server (rx) first: its listener is up when the client connects while the session opens.
  InterfaceConfig server;
  server.name = "server";
  server.engine = "rdma";
  server.address = "rdma://" + l.server_ip + ":" + std::to_string(p.port);
  for (unsigned i = 0; i < p.rx_queues; ++i) server.rx.queues.push_back({.id = uint16_t(i), .batch_size = 32, .ring_depth = 16, .memory_regions = {"rx"}});
  server.options.get<RdmaOptions>() = o;
  InterfaceConfig client;
  client.name = "client";
  client.engine = "rdma";
  client.address = "rdma://" + l.client_ip;
  client.tx.destination = server.address;
  for (unsigned i = 0; i < p.tx_queues; ++i) client.tx.queues.push_back({.id = uint16_t(i), .batch_size = 32, .ring_depth = 16, .memory_regions = {"tx"}});
  client.options.get<RdmaOptions>() = o;
  if (p.rx_queues) c.interfaces.push_back(server);
  if (p.tx_queues) c.interfaces.push_back(client);
  return c;
}

// Every message of every tx queue arrives once, whole, on the rx queues: sizes from 1 byte to
// a whole buffer, checked byte for byte; nothing counted lost anywhere.
TEST(RdmaCm, SendRecvDeliversEveryMessageOnEveryQueue) {
  NDQ_REQUIRE_LAB();
  Pair p;
  p.rx_queues = p.tx_queues = 2;
  Session s(pair_config(*lab(), p));
  ASSERT_EQ(s.rx_queues().size(), 2u);
  ASSERT_EQ(s.tx_queues().size(), 2u);
  constexpr size_t kPerQueue = 3000;
  std::vector<std::vector<Bytes>> payloads(2);
  for (size_t q = 0; q < 2; ++q)
    for (size_t i = 0; i < kPerQueue; ++i) {
      const uint64_t seq = q * kPerQueue + i;
      const size_t size = i % 7 == 0 ? p.buf_size : 1 + (seq * 37) % p.buf_size;  // small (inline) to full buffers
      payloads[q].push_back(make_payload(seq, std::max<size_t>(size, 8)));
    }
  const Wire wire;
  std::atomic<size_t> arrived{0};
  std::vector<std::future<size_t>> senders;
  for (size_t q = 0; q < 2; ++q)
    senders.push_back(std::async(std::launch::async, [&, q] {
      return send_payloads(*s.tx_queues()[q], payloads[q], 60s, [&] { return arrived.load(); }, kReceiverWindow);
    }));
  std::vector<size_t> per_queue;
  const auto got = collect_all(s.rx_queues(), 2 * kPerQueue, 90s, &per_queue, 100ms, &arrived);
  for (auto& f : senders) EXPECT_EQ(f.get(), kPerQueue);
  EXPECT_TRUE(all_accounted(2 * kPerQueue, got.size(), stats_of(s.rx_queues())));
  for (auto* q : s.tx_queues()) EXPECT_TRUE(sender_accounted(kPerQueue, q->stats()));
  ASSERT_EQ(got.size(), 2 * kPerQueue);
  // Each rx queue holds one connection, so one tx queue's messages, in order.
  EXPECT_EQ(per_queue, (std::vector<size_t>{kPerQueue, kPerQueue}));
  std::vector<int> seen(2 * kPerQueue, 0);
  for (const auto& b : got) {
    const uint64_t seq = payload_seq(b);
    ASSERT_LT(seq, seen.size());
    ++seen[seq];
    const auto& want = payloads[seq / kPerQueue][seq % kPerQueue];
    ASSERT_TRUE(check_payload(b, seq, want.size()));
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), long(seen.size()));
  EXPECT_TRUE(wire.crossed(2 * kPerQueue));
  const auto st = s.stats();
  for (const auto& q : st) {
    EXPECT_EQ(q.total_drops(), 0u) << q.queue;
    EXPECT_EQ(q.packets, kPerQueue) << q.queue;
    EXPECT_EQ(q.connections, 1u) << q.queue;
  }
}

// Setup errors say what failed and what to check.
TEST(RdmaCm, ConnectingWhereNobodyListensSaysSo) {
  NDQ_REQUIRE_LAB();
  Pair p;
  p.rx_queues = 0;
  p.options.timeout_ms = 3000;
  const std::string e = error_of(pair_config(*lab(), p));
  EXPECT_NE(e.find("connecting to rdma://" + lab()->server_ip), std::string::npos) << e;
  EXPECT_NE(e.find("REJECTED"), std::string::npos) << e;
  EXPECT_NE(e.find("nobody listens there"), std::string::npos) << e;
}

TEST(RdmaCm, AnAddressNoRdmaDeviceHoldsIsNamed) {
  NDQ_REQUIRE_LAB();
  Pair p;
  p.tx_queues = 0;
  Config c = pair_config(*lab(), p);
  c.interfaces[0].address = "rdma://127.0.0.1:" + std::to_string(p.port);
  const std::string e = error_of(c);
  EXPECT_NE(e.find("no RDMA device holds 127.0.0.1"), std::string::npos) << e;
  EXPECT_NE(e.find("rdma link add"), std::string::npos) << e;
}

TEST(RdmaCm, APortInUseIsNamed) {
  NDQ_REQUIRE_LAB();
  Pair p;
  p.tx_queues = 0;
  Session first(pair_config(*lab(), p));
  const std::string e = error_of(pair_config(*lab(), p));
  EXPECT_NE(e.find("rdma_bind_addr"), std::string::npos) << e;
  EXPECT_NE(e.find("EADDRINUSE"), std::string::npos) << e;
}

// More clients than rx queues: the extra one is refused, the others keep their connections.
TEST(RdmaCm, AConnectionBeyondTheRxQueuesIsRefused) {
  NDQ_REQUIRE_LAB();
  Pair p;
  p.rx_queues = 1;
  p.tx_queues = 1;
  Session s(pair_config(*lab(), p));
  Pair extra = p;
  extra.rx_queues = 0;
  const std::string e = error_of(pair_config(*lab(), extra));
  EXPECT_NE(e.find("REJECTED"), std::string::npos) << e;
  EXPECT_NE(e.find("every rx queue is taken"), std::string::npos) << e;
}

// Sends `n` payloads numbered from `first` through the client's tx queue and checks that the
// server's rx queue gets each once, whole and in order (the sender kept within the receiver's
// window, as UC loses a SEND that finds no receive posted).
void send_and_check(TxQueue& tx, RxQueue& rx, uint64_t first, size_t n, size_t payload_max) {
  std::vector<Bytes> payloads;
  for (size_t i = 0; i < n; ++i) payloads.push_back(make_payload(first + i, 8 + (i * 53) % (payload_max - 8)));
  std::atomic<size_t> arrived{0};
  auto sender = std::async(std::launch::async, [&] {
    return send_payloads(tx, payloads, 60s, [&] { return arrived.load(); }, 64);
  });
  const auto got = collect_all({&rx}, n, 60s, nullptr, 100ms, &arrived);
  EXPECT_EQ(sender.get(), n);
  ASSERT_EQ(got.size(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(check_payload(got[i], first + i, payloads[i].size())) << "message " << i;
}

// A pair's two sides as sessions of their own (the server opened first), so that the server
// can go and come back while the client stays.
struct Apart {
  static Config side(Config c, bool server) {
    if (server) c.interfaces.pop_back();               // the server's interface
    else c.interfaces.erase(c.interfaces.begin());     // the client's
    return c;
  }
  explicit Apart(const Config& both)
      : server_config(side(both, true)),
        server(std::make_unique<Session>(server_config)),
        client(side(both, false)),
        tx(*client.tx_queues()[0]) {}
  RxQueue& rx() { return *server->rx_queues()[0]; }
  // The server again, on the same port (the old listener's port may take a moment to be free).
  void reopen_server() {
    const auto back_by = std::chrono::steady_clock::now() + 10s;
    for (;;) {
      try {
        server = std::make_unique<Session>(server_config);
        return;
      } catch (const std::exception&) {
        if (std::chrono::steady_clock::now() > back_by) throw;
        std::this_thread::sleep_for(100ms);
      }
    }
  }

  const Config server_config;
  std::unique_ptr<Session> server;
  Session client;
  TxQueue& tx;
};

// UC through rdma_cm (port space RDMA_PS_IB, which carries the queue-pair type): SEND and
// WRITE with immediate arrive whole and in order, on queue pairs of type UC at both ends.
TEST(RdmaCm, UcConnectsThroughRdmaCmForSendAndWriteWithImmediate) {
  NDQ_REQUIRE_LAB();
  for (const RdmaOp op : {RdmaOp::send, RdmaOp::write_imm}) {
    SCOPED_TRACE(to_string(op));
    const size_t uc_before = queue_pairs_of_type("UC");
    const Wire wire;
    Pair p;
    p.options.transport = RdmaTransport::uc;
    p.options.op = op;
    Session s(pair_config(*lab(), p));
    EXPECT_EQ(queue_pairs_of_type("UC") - uc_before, 2u) << "the client's and the server's queue pair";
    send_and_check(*s.tx_queues()[0], *s.rx_queues()[0], 0, 2000, p.buf_size);
    EXPECT_TRUE(wire.crossed(2000));
    for (const auto& q : s.stats()) {
      EXPECT_TRUE(q.is_rx ? all_accounted(2000, q) : sender_accounted(2000, q));
      EXPECT_EQ(q.total_drops(), 0u) << q.queue;
      EXPECT_EQ(q.packets, 2000u) << q.queue;
      EXPECT_NE(q.mode.find("rdma uc"), std::string::npos) << q.mode;
    }
  }
}

// The server goes away (its session closes: the client hears DISCONNECTED) and comes back on
// the same port: the tx queue connects again by itself; meanwhile transmit takes nothing, so
// nothing is lost, and every message after that arrives in order (the ring's sequence and
// credit start again from 0 for write_imm).
TEST(RdmaCm, ATxQueueConnectsAgainWhenTheServerComesBack) {
  NDQ_REQUIRE_LAB();
  for (const RdmaOp op : {RdmaOp::send, RdmaOp::write_imm}) {
    SCOPED_TRACE(to_string(op));
    const Wire wire;
    Pair p;
    p.options.op = op;
    Apart apart(pair_config(*lab(), p));
    TxQueue& tx = apart.tx;
    send_and_check(tx, apart.rx(), 0, 500, p.buf_size);
    EXPECT_TRUE(all_accounted(500, apart.rx().stats())) << "the first server";

    apart.server.reset();
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (tx.stats().mode.find("reconnecting") == std::string::npos && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(10ms);
    ASSERT_NE(tx.stats().mode.find("reconnecting"), std::string::npos) << tx.stats().mode;
    EXPECT_EQ(send_payloads(tx, {make_payload(999999, 100)}, 300ms), 0u) << "taken while the server was gone";

    apart.reopen_server();
    send_and_check(tx, apart.rx(), 500, 500, p.buf_size);
    EXPECT_TRUE(wire.crossed(1000));
    const QueueStats t = tx.stats();
    EXPECT_TRUE(sender_accounted(500 + 1 + 500, t)) << "500 to each server, and the one offered in between";
    EXPECT_EQ(t.connections, 2u);
    EXPECT_EQ(t.packets, 1000u);
    // Nothing was in flight when the server went; the one message offered meanwhile was not
    // taken, and the application let it go unsent.
    EXPECT_EQ(t.drop(DropReason::tx_unsent), 1u);
    EXPECT_EQ(t.total_drops(), 1u);
    EXPECT_EQ(engine_counter(t, "completion_errors"), 0u);
    EXPECT_EQ(t.mode.find("reconnecting"), std::string::npos) << t.mode;
    const QueueStats r = apart.rx().stats();
    EXPECT_TRUE(all_accounted(500, r)) << "the second server";
    EXPECT_EQ(r.connections, 1u);
    EXPECT_EQ(r.packets, 500u);
    EXPECT_EQ(r.total_drops(), 0u);
  }
}

// The server goes away mid-stream (its session closed while the client sends without pause):
// the sends in flight come back flushed and are counted (tx_error, and nothing else), the
// client connects again once the server is back, and from the first message the new server
// sees to the last every one arrives once, in order; none arrives twice.
TEST(RdmaCm, ATxQueueReconnectsMidStreamCountingWhatWasInFlight) {
  NDQ_REQUIRE_LAB();
  for (const RdmaOp op : {RdmaOp::send, RdmaOp::write_imm}) {
    SCOPED_TRACE(to_string(op));
    const Wire wire;
    Pair p;
    p.options.op = op;
    Apart apart(pair_config(*lab(), p));
    TxQueue& tx = apart.tx;
    constexpr size_t kN = 4000, kFirst = 500;
    std::vector<Bytes> payloads;
    for (size_t i = 0; i < kN; ++i) payloads.push_back(make_payload(i, 64 + (i * 53) % 900));
    auto sender = std::async(std::launch::async, [&] { return send_payloads(tx, payloads, 90s); });
    const auto first = collect_messages(apart.rx(), kFirst, 30s);  // (whole bursts: a few more)
    ASSERT_GE(first.size(), kFirst);
    for (size_t i = 0; i < first.size(); ++i) ASSERT_TRUE(check_payload(first[i].bytes, i, payloads[i].size()));
    apart.server.reset();  // mid-stream: the sender is still posting
    apart.reopen_server();
    RxQueue& rx = apart.rx();
    std::vector<Message> rest;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
      auto more = collect_messages(rx, 1, std::chrono::seconds(1));
      if (more.empty() && sender.wait_for(0s) == std::future_status::ready) break;
      rest.insert(rest.end(), more.begin(), more.end());
      if (!rest.empty() && payload_seq(rest.back().bytes) == kN - 1) break;
    }
    EXPECT_EQ(sender.get(), kN) << "every message taken";
    ASSERT_FALSE(rest.empty());
    const uint64_t resumed_at = payload_seq(rest[0].bytes);
    ASSERT_GE(resumed_at, first.size());
    ASSERT_EQ(rest.size(), kN - resumed_at) << "from the first the new server saw to the last";
    for (size_t i = 0; i < rest.size(); ++i)
      ASSERT_TRUE(check_payload(rest[i].bytes, resumed_at + i, payloads[resumed_at + i].size())) << "message " << i;
    const QueueStats t = tx.stats();
    // Each message taken was sent (`packets`) or, flushed when the server went, counted
    // tx_error instead: once, never both.
    EXPECT_TRUE(sender_accounted(kN, t));
    EXPECT_EQ(t.connections, 2u);
    EXPECT_EQ(t.total_drops(), t.drop(DropReason::tx_error)) << "flushed sends are the only ones counted lost";
    // Every message a server took was a send that completed: `packets` holds them all. The
    // rest of `packets` (and the rest of the messages lost between the servers) are the ones
    // the first server's device acknowledged but its application never took (its session was
    // gone): which those are, no side can tell, so the flushed sends are bounded by the loss.
    EXPECT_GE(t.packets, first.size() + rest.size());
    EXPECT_LE(t.drop(DropReason::tx_error), resumed_at - first.size());
    EXPECT_TRUE(wire.crossed(first.size() + rest.size()));
    std::printf("%s: first server took %zu, lost between the servers %zu (flushed sends: %llu), new server took %zu\n",
                to_string(op), first.size(), size_t(resumed_at - first.size()),
                static_cast<unsigned long long>(t.drop(DropReason::tx_error)), rest.size());
    EXPECT_EQ(rx.stats().total_drops(), 0u);
  }
}

// WRITE with immediate: each tx queue writes into its rx queue's ring (64 slots, so the ring
// wraps dozens of times), the immediate is the message's sequence, credits keep the sender
// within the slots given back; every message arrives once, in order, byte for byte.
TEST(RdmaCm, WriteWithImmediateDeliversEveryMessageInOrderThroughTheRing) {
  NDQ_REQUIRE_LAB();
  Pair p;
  p.rx_queues = p.tx_queues = 2;
  p.recv_depth = 64;
  p.options.op = RdmaOp::write_imm;
  Config c = pair_config(*lab(), p);
  const Wire wire;
  // A region per rx queue: each ring is consecutive buffers of its own region.
  c.memory_regions.push_back({.name = "rx1", .buf_size = p.buf_size, .num_bufs = 1024});
  c.interfaces[0].rx.queues[1].memory_regions = {"rx1"};
  Session s(c);
  constexpr size_t kPerQueue = 3000;
  std::vector<std::vector<Bytes>> payloads(2);
  for (size_t q = 0; q < 2; ++q)
    for (size_t i = 0; i < kPerQueue; ++i)
      payloads[q].push_back(make_payload(q * kPerQueue + i, 8 + (i * 53) % (p.buf_size - 8)));
  std::vector<std::future<size_t>> senders;
  for (size_t q = 0; q < 2; ++q)
    senders.push_back(std::async(std::launch::async, [&, q] { return send_payloads(*s.tx_queues()[q], payloads[q], 60s); }));
  std::vector<std::future<std::vector<Message>>> receivers;
  for (size_t q = 0; q < 2; ++q)
    receivers.push_back(std::async(std::launch::async, [&, q] { return collect_messages(*s.rx_queues()[q], kPerQueue, 90s); }));
  for (auto& f : senders) EXPECT_EQ(f.get(), kPerQueue);
  for (size_t q = 0; q < 2; ++q) {
    const auto got = receivers[q].get();
    ASSERT_EQ(got.size(), kPerQueue) << "rx queue " << q;
    // rx queue q holds one connection: one tx queue's messages; which one is the accept order.
    const uint64_t first = payload_seq(got[0].bytes) / kPerQueue * kPerQueue;
    for (size_t i = 0; i < kPerQueue; ++i) {
      ASSERT_EQ(got[i].immediate, std::optional<uint32_t>(uint32_t(i))) << "message " << i;
      ASSERT_TRUE(check_payload(got[i].bytes, first + i, payloads[first / kPerQueue][i].size()));
    }
  }
  EXPECT_TRUE(wire.crossed(2 * kPerQueue));
  for (const auto& q : s.stats()) {
    EXPECT_TRUE(q.is_rx ? all_accounted(kPerQueue, q) : sender_accounted(kPerQueue, q));
    EXPECT_EQ(q.total_drops(), 0u) << q.queue;
    EXPECT_EQ(q.packets, kPerQueue) << q.queue;
    if (q.is_rx) {
      EXPECT_EQ(engine_counter(q, "credit"), kPerQueue) << q.queue << ": every slot given back";
    }
  }
}

// The application holding the whole ring stops the sender (credits), it does not lose data:
// once the bursts are released the rest arrives.
TEST(RdmaCm, HeldSlotsHoldTheSenderBack) {
  NDQ_REQUIRE_LAB();
  Pair p;
  p.recv_depth = 32;
  p.options.op = RdmaOp::write_imm;
  Config c = pair_config(*lab(), p);
  c.interfaces[0].rx.queues[0].ring_depth = 64;  // room to hold 32 one-packet bursts
  const Wire wire;
  Session s(c);
  constexpr size_t kN = 100;
  std::vector<Bytes> payloads;
  for (size_t i = 0; i < kN; ++i) payloads.push_back(make_payload(i, 100));
  auto sender = std::async(std::launch::async, [&] { return send_payloads(*s.tx_queues()[0], payloads, 60s); });
  std::vector<RxBurst> held;
  size_t holding = 0;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (holding < 32 && std::chrono::steady_clock::now() < deadline) {
    RxBurst b = s.rx_queues()[0]->poll();
    holding += b.size();
    if (!b.empty()) held.push_back(std::move(b));
  }
  ASSERT_EQ(holding, 32u);
  std::this_thread::sleep_for(500ms);  // the sender had time to overrun, were it not held back
  EXPECT_EQ(s.tx_queues()[0]->stats().packets, 32u) << "sent while the ring was full";
  EXPECT_GT(engine_counter(s.tx_queues()[0]->stats(), "refused_no_credit"), 0u);
  EXPECT_TRUE(s.rx_queues()[0]->poll().empty());
  // The held slots still hold the first 32 messages, whole and in order (nothing written over them).
  size_t seq = 0;
  for (const RxBurst& b : held)
    for (size_t i = 0; i < b.size(); ++i, ++seq) {
      ASSERT_TRUE(check_payload(bytes_of(b[i]), seq, 100)) << "held message " << seq;
      EXPECT_EQ(b[i].immediate(), std::optional<uint32_t>(uint32_t(seq)));
    }
  held.clear();  // give the slots back
  const auto rest = collect_messages(*s.rx_queues()[0], kN - 32, 60s);
  EXPECT_EQ(sender.get(), kN);
  EXPECT_TRUE(all_accounted(kN, holding + rest.size(), {s.rx_queues()[0]->stats()}));
  EXPECT_TRUE(sender_accounted(kN, s.tx_queues()[0]->stats()));
  ASSERT_EQ(rest.size(), kN - 32);
  for (size_t i = 0; i < rest.size(); ++i) ASSERT_TRUE(check_payload(rest[i].bytes, 32 + i, 100));
  EXPECT_EQ(s.rx_queues()[0]->stats().total_drops(), 0u);
  EXPECT_TRUE(wire.crossed(kN));
}

// A receiver that stops taking messages fills the sender's send queue (RC retries what finds
// no receive posted): the sender is refused for now, counted, and loses nothing.
TEST(RdmaCm, AFullSendQueueRefusesForNowAndLosesNothing) {
  NDQ_REQUIRE_LAB();
  Pair p;
  p.recv_depth = 32;
  p.send_depth = 16;
  const Wire wire;
  Session s(pair_config(*lab(), p));
  constexpr size_t kN = 200;
  std::vector<Bytes> payloads;
  for (size_t i = 0; i < kN; ++i) payloads.push_back(make_payload(i, 100));
  auto sender = std::async(std::launch::async, [&] { return send_payloads(*s.tx_queues()[0], payloads, 60s); });
  std::this_thread::sleep_for(500ms);  // nobody receives meanwhile
  const QueueStats held = s.tx_queues()[0]->stats();
  EXPECT_GT(engine_counter(held, "refused_send_queue_full"), 0u);
  EXPECT_LE(held.packets, p.recv_depth + p.send_depth) << "posted beyond the receives and the send queue";
  const auto got = collect_messages(*s.rx_queues()[0], kN, 60s);
  EXPECT_EQ(sender.get(), kN);
  EXPECT_TRUE(all_accounted(kN, got.size(), {s.rx_queues()[0]->stats()}));
  EXPECT_TRUE(sender_accounted(kN, s.tx_queues()[0]->stats()));
  ASSERT_EQ(got.size(), kN);
  for (size_t i = 0; i < kN; ++i) ASSERT_TRUE(check_payload(got[i].bytes, i, 100));
  for (const auto& q : s.stats()) EXPECT_EQ(q.total_drops(), 0u) << q.queue;
  EXPECT_TRUE(wire.crossed(kN));
}

// A message larger than the receiver's slot is refused by the sender (oversize), not written
// over the next slot; the messages around it arrive.
TEST(RdmaCm, AMessageLargerThanTheRemoteSlotIsCountedOversize) {
  NDQ_REQUIRE_LAB();
  Pair p;
  p.options.op = RdmaOp::write_imm;
  Config c = pair_config(*lab(), p);
  c.memory_regions[0].buf_size = 1024;  // the receiver's slots
  const Wire wire;
  Session s(c);
  std::vector<Bytes> payloads{make_payload(0, 1000), make_payload(1, 1500), make_payload(2, 1024)};
  EXPECT_EQ(send_payloads(*s.tx_queues()[0], payloads, 10s), 3u);
  const auto got = collect_messages(*s.rx_queues()[0], 2, 10s);
  EXPECT_TRUE(sender_accounted(3, s.tx_queues()[0]->stats()));
  EXPECT_TRUE(all_accounted(2, got.size(), {s.rx_queues()[0]->stats()})) << "the refused message never left";
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(check_payload(got[0].bytes, 0, 1000));
  EXPECT_TRUE(check_payload(got[1].bytes, 2, 1024));
  EXPECT_EQ(got[1].immediate, std::optional<uint32_t>(1u)) << "the refused message used no sequence number";
  EXPECT_EQ(s.tx_queues()[0]->stats().drop(DropReason::oversize), 1u);
  EXPECT_TRUE(wire.crossed(2));
}

// Two sides that disagree are told why at connect time: a write_imm sender meeting a send
// receiver, and a UC client meeting an RC server (another port space: nobody listens there).
TEST(RdmaCm, MismatchedSidesAreRefusedAtConnect) {
  NDQ_REQUIRE_LAB();
  for (const bool op_differs : {true, false}) {
    Pair p;
    Config c = pair_config(*lab(), p);
    auto& client = c.interfaces[1].options.get<RdmaOptions>();
    if (op_differs) client.op = RdmaOp::write_imm;
    else client.transport = RdmaTransport::uc;
    const std::string e = error_of(c);
    EXPECT_NE(e.find(op_differs ? "offered no receive ring" : "its rdma.transport differs"), std::string::npos) << e;
  }
}


// A client process killed mid-stream (SIGKILL: no goodbye but the kernel's): the server's rx
// queue gets its receives back, takes the next client's connection and receives all of it.
// Every message of both clients (`netdaq run`: the payload format of netdaq/payload.h, stream
// 0, 1000 bytes) is checked byte for byte and in order: the first client's from sequence 0 to
// wherever it was killed, the second's 0 to 499.
TEST(RdmaCm, AfterAPeerIsKilledTheServerTakesTheNextConnection) {
  NDQ_REQUIRE_LAB();
  Pair p;
  p.tx_queues = 0;
  const Wire wire;
  Session s(pair_config(*lab(), p));
  RxQueue& q = *s.rx_queues()[0];
  TempFile yaml1, yaml2, out1, out2;  // (alive as long as the clients)
  auto client = [&](const TempFile& yaml, const TempFile& out, const std::string& run) {
    std::ofstream(yaml.path) << "memory_regions: [{name: tx, buf_size: 2048, num_bufs: 2048}]\n"
                             << "interfaces:\n  - name: client\n    engine: rdma\n    address: rdma://" << lab()->client_ip
                             << "\n    tx:\n      destination: rdma://" << lab()->server_ip << ":" << p.port
                             << "\n      queues: [{batch_size: 32, ring_depth: 16, memory_regions: [tx]}]\n"
                             << "run: {" << run << ", tx_payload_size: 1000}\n";
    return std::make_unique<Subprocess>(std::vector<std::string>{NETDAQ_CLI, "run", yaml.path, "-q"}, out.path);
  };
  size_t got = 0;
  uint64_t next_seq = 0;  // of the client sending now
  size_t bad = 0;
  std::string first_bad;
  // Polls once: counts what came, each message checked (payload, size, stream, sequence).
  auto take = [&] {
    RxBurst b = q.poll();
    for (size_t i = 0; i < b.size(); ++i, ++next_seq) {
      PayloadHeader h;
      const PayloadStatus st = verify_payload(b[i], &h);
      if (st == PayloadStatus::ok && b[i].size() == 1000 && h.stream == 0 && h.sequence == next_seq) continue;
      if (!bad++)
        first_bad = "message " + std::to_string(got + i) + " (expected sequence " + std::to_string(next_seq) +
                    "): " + to_string(st) + ", " + std::to_string(b[i].size()) + " bytes, stream " +
                    std::to_string(h.stream) + ", sequence " + std::to_string(h.sequence);
    }
    got += b.size();
    return b.size();
  };
  auto receive_until = [&](size_t n, std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (got < n && std::chrono::steady_clock::now() < deadline) take();
  };
  auto text = [](const TempFile& f) {
    const Bytes b = read_file(f.path);
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  };
  auto first = client(yaml1, out1, "duration_s: 60");
  receive_until(200, 60s);
  ASSERT_GE(got, 200u) << q.stats().mode << "\nfirst client: " << text(out1);
  ::kill(first->pid(), SIGKILL);
  first->wait(10s);
  // Its receives come back (flushed) and the queue waits for the next client.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (q.stats().mode.find("peer gone") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    take();
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_NE(q.stats().mode.find("peer gone"), std::string::npos) << q.stats().mode;
  // Messages that completed before the flush may still wait in the CQ: take them first.
  for (auto quiet_since = std::chrono::steady_clock::now(); std::chrono::steady_clock::now() - quiet_since < 300ms;)
    if (take()) quiet_since = std::chrono::steady_clock::now();
  EXPECT_EQ(bad, 0u) << "the first client's messages: " << first_bad;
  EXPECT_EQ(next_seq, got) << "the first client's sequence 0 to " << got - 1;
  const size_t before = got;
  next_seq = 0;
  const QueueStats at_second = q.stats();  // what the first client sent is not known: count from here
  auto second = client(yaml2, out2, "tx_packets: 500");
  receive_until(before + 500, 60s);
  EXPECT_EQ(second->wait(30s), 0) << text(out2);
  EXPECT_EQ(got - before, 500u) << q.stats().mode;
  EXPECT_EQ(bad, 0u) << first_bad;
  EXPECT_TRUE(wire.crossed(got));
  const QueueStats st = q.stats();
  EXPECT_TRUE(all_accounted(500, got - before, {since(at_second, st)})) << "the second client";
  EXPECT_EQ(st.connections, 2u);
  EXPECT_EQ(st.total_drops(), 0u);
  EXPECT_EQ(engine_counter(st, "completion_errors"), 0u) << "flushed receives are no errors";
  EXPECT_GT(engine_counter(st, "flushed_receives"), 0u);
}

}  // namespace
