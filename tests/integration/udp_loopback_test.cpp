// Socket engine, UDP over loopback: exact counts and bytes, polling modes, SO_REUSEPORT
// queues, header-data split, GRO/GSO, pacing, oversize and odd datagrams.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <memory>
#include <random>
#include <thread>

#include "test_util.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

std::string udp_url(bool v6, uint16_t port) {
  return v6 ? "udp://[::1]:" + std::to_string(port) : "udp://127.0.0.1:" + std::to_string(port);
}

std::vector<Bytes> numbered_payloads(size_t n, const std::function<size_t(size_t)>& size_of) {
  std::vector<Bytes> v;
  v.reserve(n);
  for (size_t i = 0; i < n; ++i) v.push_back(make_payload(i, size_of(i)));
  return v;
}

// Sends `payloads` from a netdaq tx session to a netdaq rx session while collecting on rx;
// checks exact counts and every byte, in order.
void roundtrip(Session& rx, Session& tx, const std::vector<Bytes>& payloads) {
  auto& rq = rx.rx_queue("if0");
  auto got = std::async(std::launch::async, [&] { return collect(rq, payloads.size(), 5000ms); });
  EXPECT_EQ(send_payloads(tx.tx_queue("if0"), payloads, 5000ms), payloads.size());
  const auto received = got.get();
  EXPECT_TRUE(all_accounted(payloads.size(), received.size(), {rq.stats()}));
  {
    const QueueStats st = rq.stats();
    std::string drops;
    for (size_t r = 0; r < kDropReasons; ++r)
      if (st.drops[r]) drops += std::string(" ") + to_string(static_cast<DropReason>(r)) + "=" + std::to_string(st.drops[r]);
    ASSERT_EQ(received.size(), payloads.size()) << "rx packets " << st.packets << ", drops:" << drops;
  }
  for (size_t i = 0; i < received.size(); ++i) {
    ASSERT_TRUE(check_payload(received[i], i, payloads[i].size()));
  }
  const QueueStats rs = rq.stats();
  EXPECT_EQ(rs.packets, payloads.size());
  EXPECT_EQ(rs.total_drops(), 0u);
  uint64_t bytes = 0;
  for (auto& p : payloads) bytes += p.size();
  EXPECT_EQ(rs.bytes, bytes);
  const QueueStats ts = tx.tx_queue("if0").stats();
  EXPECT_TRUE(sender_accounted(payloads.size(), ts));
  EXPECT_EQ(ts.packets, payloads.size());
  EXPECT_EQ(ts.bytes, bytes);
  EXPECT_EQ(ts.total_drops(), 0u);
}

struct LoopbackCase {
  bool v6;
  PollMode mode;
  bool offload;  // GRO on rx, GSO on tx
};

class UdpLoopback : public ::testing::TestWithParam<LoopbackCase> {};

TEST_P(UdpLoopback, ExactCountsAndBytes) {
  const auto c = GetParam();
  const uint16_t port = free_port(SOCK_DGRAM, c.v6);
  Iface rs;
  rs.address = udp_url(c.v6, port);
  rs.rx_queues = 1;
  rs.mode = c.mode;
  rs.socket.gro = c.offload;
  rs.ring_depth = 256;  // worker mode: room for the whole test, so nothing is lost to ring_full
  rs.num_bufs = 16384;
  Iface ts;
  ts.destination = rs.address;
  ts.tx_queues = 1;
  ts.socket.gso = c.offload;
  Session rx(rs.build());
  Session tx(ts.build());
  // Sizes 8..1472 that change every 7 packets (runs of equal sizes for GSO).
  const auto payloads = numbered_payloads(3000, [](size_t i) { return 8 + ((i / 7) * 37) % 1465; });
  roundtrip(rx, tx, payloads);
}

INSTANTIATE_TEST_SUITE_P(Modes, UdpLoopback,
                         ::testing::Values(LoopbackCase{false, PollMode::direct, false},
                                           LoopbackCase{false, PollMode::worker, false},
                                           LoopbackCase{true, PollMode::direct, false},
                                           LoopbackCase{true, PollMode::worker, false},
                                           LoopbackCase{false, PollMode::direct, true},
                                           LoopbackCase{true, PollMode::worker, true}),
                         [](const auto& info) {
                           return std::string(info.param.v6 ? "IPv6" : "IPv4") +
                                  (info.param.mode == PollMode::direct ? "Direct" : "Worker") +
                                  (info.param.offload ? "GroGso" : "Plain");
                         });

// Several rx queues on one port (SO_REUSEPORT): the kernel spreads the senders' flows over
// them; the total is exact.
TEST(UdpReusePort, SeveralQueuesOnePortExactTotal) {
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = udp_url(false, port);
  rs.rx_queues = 4;
  Session rx(rs.build());
  constexpr size_t kSenders = 8, kEach = 250;
  std::vector<Socket> senders;
  for (size_t s = 0; s < kSenders; ++s) senders.push_back(Socket::udp());  // distinct source ports
  auto got = std::async(std::launch::async, [&] {
    std::vector<size_t> per_queue;
    auto pkts = collect_all(rx.rx_queues(), kSenders * kEach, 5000ms, &per_queue);
    return std::make_pair(pkts, per_queue);
  });
  for (size_t i = 0; i < kEach; ++i)
    for (size_t s = 0; s < kSenders; ++s)
      ASSERT_TRUE(senders[s].send_to("127.0.0.1", port, make_payload(s * 1000 + i, 100 + s)));
  auto [pkts, per_queue] = got.get();
  EXPECT_TRUE(all_accounted(kSenders * kEach, pkts.size(), stats_of(rx.rx_queues())));
  ASSERT_EQ(pkts.size(), kSenders * kEach);
  std::vector<size_t> per_sender(kSenders);
  for (auto& p : pkts) {
    const uint64_t seq = payload_seq(p);
    const size_t s = seq / 1000;
    ASSERT_LT(s, kSenders);
    ASSERT_TRUE(check_payload(p, seq, 100 + s));
    ++per_sender[s];
  }
  for (size_t s = 0; s < kSenders; ++s) EXPECT_EQ(per_sender[s], kEach) << "sender " << s;
  size_t used = 0, total = 0;
  for (size_t q = 0; q < per_queue.size(); ++q) {
    used += per_queue[q] ? 1 : 0;
    total += per_queue[q];
    EXPECT_EQ(rx.rx_queues()[q]->stats().packets, per_queue[q]);
  }
  EXPECT_EQ(total, kSenders * kEach);
  EXPECT_GE(used, 2u) << "8 flows all hashed to one of 4 queues";
}

// Header-data split: the first buf_size bytes of the header region in segment 0, the rest
// in segment 1; the largest datagram that fits both is delivered, one more byte is oversize.
TEST(UdpHeaderDataSplit, SegmentsHoldHeaderAndPayload) {
  for (bool gro : {false, true}) {
    SCOPED_TRACE(gro ? "GRO on" : "GRO off");
    const uint16_t port = free_port(SOCK_DGRAM);
    Iface rs;
    rs.address = udp_url(false, port);
    rs.rx_queues = 1;
    rs.split_header = 64;
    rs.buf_size = 1024;
    rs.socket.gro = gro;
    Session rx(rs.build());
    Socket s = Socket::udp();
    const std::vector<size_t> sizes{1, 63, 64, 65, 500, 1024, 1087, 1088, 1089, 3000, 0, 100};
    for (size_t i = 0; i < sizes.size(); ++i) ASSERT_TRUE(s.send_to("127.0.0.1", port, make_payload(i, sizes[i])));
    std::vector<size_t> delivered;
    for (size_t i = 0; i < sizes.size(); ++i)
      if (sizes[i] <= 1088) delivered.push_back(i);
    std::vector<std::pair<Bytes, Bytes>> segs;
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    auto& q = rx.rx_queue("if0");
    while (segs.size() < delivered.size() && std::chrono::steady_clock::now() < deadline) {
      auto burst = q.poll();
      for (const auto& p : burst) {
        ASSERT_EQ(p.segments(), 2u);
        auto a = p.segment(0), b = p.segment(1);
        segs.emplace_back(Bytes(a.begin(), a.end()), Bytes(b.begin(), b.end()));
      }
    }
    EXPECT_TRUE(all_accounted(sizes.size(), segs.size(), {q.stats()}));
    ASSERT_EQ(segs.size(), delivered.size());
    for (size_t k = 0; k < delivered.size(); ++k) {
      const size_t i = delivered[k];
      const Bytes want = make_payload(i, sizes[i]);
      const size_t h = std::min<size_t>(sizes[i], 64);
      EXPECT_EQ(segs[k].first, Bytes(want.begin(), want.begin() + h)) << "datagram " << i;
      EXPECT_EQ(segs[k].second, Bytes(want.begin() + h, want.end())) << "datagram " << i;
    }
    const QueueStats st = q.stats();
    EXPECT_EQ(st.drop(DropReason::oversize), 2u);
    EXPECT_EQ(st.packets, delivered.size());
  }
}

// TX gathers both segments of a split packet into one datagram.
TEST(UdpHeaderDataSplit, TxGathersBothSegments) {
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = udp_url(false, port);
  rs.rx_queues = 1;
  Iface ts;
  ts.destination = rs.address;
  ts.tx_queues = 1;
  ts.split_header = 64;
  ts.buf_size = 1024;
  ts.socket.gso = true;
  Session rx(rs.build());
  Session tx(ts.build());
  const auto payloads = numbered_payloads(500, [](size_t i) { return i % 5 == 0 ? 40 : 64 + (i / 10) % 1000; });
  roundtrip(rx, tx, payloads);
}

// GSO on the sender and GRO on the receiver deliver the same datagrams, byte for byte and
// in order, as the plain path; the super-datagrams are split with counted copies. A small
// rx batch makes the split continue across receive calls.
TEST(UdpGroGso, SameBytesAsPlainPath) {
  std::mt19937 rng(7);
  std::vector<size_t> sizes;
  while (sizes.size() < 4000) {  // runs of equal sizes, some ending in a shorter datagram
    const size_t size = 200 + rng() % 1200;
    const size_t run = 1 + rng() % 150;
    for (size_t k = 0; k < run; ++k) sizes.push_back(size);
    if (rng() % 2) sizes.push_back(1 + rng() % size);
  }
  sizes.resize(4000);
  const auto payloads = numbered_payloads(sizes.size(), [&](size_t i) { return sizes[i]; });

  std::vector<std::vector<Bytes>> results;
  uint64_t copies_offload = 0;
  for (bool offload : {false, true}) {
    const uint16_t port = free_port(SOCK_DGRAM);
    Iface rs;
    rs.address = udp_url(false, port);
    rs.rx_queues = 1;
    rs.batch = 16;
    rs.socket.gro = offload;
    Iface ts;
    ts.destination = rs.address;
    ts.tx_queues = 1;
    ts.batch = 256;
    ts.ring_depth = 4;
    ts.socket.gso = offload;
    Session rx(rs.build());
    Session tx(ts.build());
    auto& q = rx.rx_queue("if0");
    auto got = std::async(std::launch::async, [&] { return collect(q, payloads.size(), 5000ms); });
    EXPECT_EQ(send_payloads(tx.tx_queue("if0"), payloads, 5000ms), payloads.size());
    results.push_back(got.get());
    const QueueStats st = q.stats();
    EXPECT_TRUE(all_accounted(payloads.size(), results.back().size(), {st}));
    EXPECT_TRUE(sender_accounted(payloads.size(), tx.tx_queue("if0").stats()));
    EXPECT_EQ(st.total_drops(), 0u);
    if (offload)
      copies_offload = st.copies;
    else
      EXPECT_EQ(st.copies, 0u) << "the plain path copies nothing";
  }
  ASSERT_EQ(results[0].size(), payloads.size());
  ASSERT_EQ(results[1].size(), payloads.size());
  for (size_t i = 0; i < payloads.size(); ++i) {
    ASSERT_TRUE(check_payload(results[1][i], i, sizes[i]));
    ASSERT_EQ(results[0][i], results[1][i]);
  }
  EXPECT_GT(copies_offload, 0u) << "GSO over loopback should reach the GRO socket as super-datagrams";
}

// GRO on, but datagrams that were not coalesced land in place: no copies.
TEST(UdpGroGso, UncoalescedDatagramsAreNotCopied) {
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = udp_url(false, port);
  rs.rx_queues = 1;
  rs.socket.gro = true;
  Session rx(rs.build());
  Socket s = Socket::udp();
  for (size_t i = 0; i < 200; ++i) ASSERT_TRUE(s.send_to("127.0.0.1", port, make_payload(i, 1000)));
  const auto got = collect(rx.rx_queue("if0"), 200, 3000ms);
  EXPECT_TRUE(all_accounted(200, got.size(), {rx.rx_queue("if0").stats()}));
  ASSERT_EQ(got.size(), 200u);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(check_payload(got[i], i, 1000));
  EXPECT_EQ(rx.rx_queue("if0").stats().copies, 0u);
}

// Super-datagrams of one segment size land in place: once the queue has seen one, its
// buffers are offered in that size and each datagram is written into a buffer of its own,
// nothing copied (a loopback GSO send reaches a GRO socket as one super-datagram). With
// header-data split (each datagram across two buffers) and with bursts shorter than a
// super-datagram (the rest delivered by the next receive calls).
// One case of SuperDatagramsOfASteadySizeLandInPlace.
void expect_steady_size_lands_in_place(uint32_t split, uint32_t batch) {
  SCOPED_TRACE("split_header " + std::to_string(split) + ", batch " + std::to_string(batch));
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = udp_url(false, port);
  rs.rx_queues = 1;
  rs.batch = batch;
  rs.num_bufs = 8192;
  rs.split_header = split;
  if (split) rs.buf_size = 1024;
  rs.socket.gro = true;
  Session rx(rs.build());
  auto& q = rx.rx_queue("if0");
  constexpr size_t kSize = 1000, kSegments = 32, kFirst = 1, kThen = 40;
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  const std::unique_ptr<const int, void (*)(const int*)> closer(&fd, [](const int* f) { ::close(*f); });
  const int gso = kSize;
  ASSERT_EQ(::setsockopt(fd, SOL_UDP, UDP_SEGMENT, &gso, sizeof gso), 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  uint64_t seq = 0;
  auto send_batches = [&](size_t batches) {
    for (size_t b = 0; b < batches; ++b) {
      Bytes msg;
      for (size_t k = 0; k < kSegments; ++k) {
        const Bytes p = make_payload(seq++, kSize);
        msg.insert(msg.end(), p.begin(), p.end());
      }
      ASSERT_EQ(::sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to), ssize_t(msg.size()));
    }
  };
  send_batches(kFirst);  // the first, split the plain way (copied), teaches the size
  auto got = collect(q, kFirst * kSegments, 3000ms);
  ASSERT_EQ(got.size(), kFirst * kSegments);
  const uint64_t copies_first = q.stats().copies;
  EXPECT_EQ(copies_first, (kSegments - 1) * kSize) << "all but the first datagram copied out of staging";
  send_batches(kThen);  // queued before the next receive: several super-datagrams a call
  auto more = collect(q, kThen * kSegments, 3000ms);
  got.insert(got.end(), more.begin(), more.end());
  const QueueStats st = q.stats();
  EXPECT_TRUE(all_accounted(seq, got.size(), {st}));
  ASSERT_EQ(got.size(), seq);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(check_payload(got[i], i, kSize)) << "datagram " << i;
  EXPECT_EQ(st.copies, copies_first) << "datagrams of the learnt size were copied";
}

TEST(UdpGroGso, SuperDatagramsOfASteadySizeLandInPlace) {
  for (uint32_t split : {0u, 64u})
    for (uint32_t batch : {64u, 8u}) expect_steady_size_lands_in_place(split, batch);
}

// Pacing (rate_pps) gives roughly the asked rate. Loose bounds: a correctness check.
TEST(UdpPacing, RatePpsIsRoughlyHonoured) {
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = udp_url(false, port);
  rs.rx_queues = 1;
  Iface ts;
  ts.destination = rs.address;
  ts.tx_queues = 1;
  ts.batch = 8;
  ts.rate_pps = 2000;
  Session rx(rs.build());
  Session tx(ts.build());
  constexpr size_t kN = 400;
  const auto payloads = numbered_payloads(kN, [](size_t) { return 200; });
  auto got = std::async(std::launch::async, [&] { return collect(rx.rx_queue("if0"), kN, 5000ms); });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(send_payloads(tx.tx_queue("if0"), payloads, 5000ms), kN);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t received = got.get().size();
  EXPECT_EQ(received, kN);
  EXPECT_TRUE(all_accounted(kN, received, {rx.rx_queue("if0").stats()}));
  EXPECT_TRUE(sender_accounted(kN, tx.tx_queue("if0").stats()));
  const double pps = kN / secs;
  // 400 packets at 2000/s: ~0.2 s (the first burst goes at once).
  EXPECT_GT(secs, 0.1) << "pacing had no effect: " << pps << " packets/s";
  EXPECT_LT(secs, 1.0) << "pacing far too slow: " << pps << " packets/s";
  EXPECT_GT(pps, 1000);
  EXPECT_LT(pps, 4000);
}

// Datagrams bigger than the buffer are counted oversize and never delivered; the others
// are, whatever the receive path.
TEST(UdpOversize, CountedNeverDelivered) {
  for (bool gro : {false, true}) {
    SCOPED_TRACE(gro ? "GRO on" : "GRO off");
    const uint16_t port = free_port(SOCK_DGRAM);
    Iface rs;
    rs.address = udp_url(false, port);
    rs.rx_queues = 1;
    rs.buf_size = 512;
    rs.socket.gro = gro;
    Session rx(rs.build());
    Socket s = Socket::udp();
    const std::vector<size_t> sizes{100, 600, 200, 512, 513, 9000, 60000, 300};
    std::vector<size_t> ok;
    for (size_t i = 0; i < sizes.size(); ++i) {
      ASSERT_TRUE(s.send_to("127.0.0.1", port, make_payload(i, sizes[i])));
      if (sizes[i] <= 512) ok.push_back(i);
    }
    const auto got = collect(rx.rx_queue("if0"), ok.size(), 3000ms, 50ms);
    EXPECT_TRUE(all_accounted(sizes.size(), got.size(), {rx.rx_queue("if0").stats()}));
    ASSERT_EQ(got.size(), ok.size());
    for (size_t k = 0; k < ok.size(); ++k) EXPECT_TRUE(check_payload(got[k], ok[k], sizes[ok[k]]));
    const QueueStats st = rx.rx_queue("if0").stats();
    EXPECT_EQ(st.drop(DropReason::oversize), sizes.size() - ok.size());
    EXPECT_EQ(st.packets, ok.size());
  }
}

// Random datagrams (random sizes including empty ones, random bytes, several senders): no
// crash, and each one is delivered intact or counted.
TEST(UdpMalformed, RandomDatagramsDeliveredOrCounted) {
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = udp_url(false, port);
  rs.rx_queues = 1;
  rs.buf_size = 1024;
  Session rx(rs.build());
  std::mt19937 rng(11);
  std::vector<Socket> senders;
  for (int k = 0; k < 4; ++k) senders.push_back(Socket::udp());
  std::vector<Bytes> all, fitting;
  for (int i = 0; i < 1000; ++i) {
    const size_t n = rng() % 4 == 0 ? rng() % 2048 : rng() % 1025;
    Bytes b(n);
    for (auto& x : b) x = std::byte(rng());
    if (n <= 1024) fitting.push_back(b);
    all.push_back(std::move(b));
  }
  auto got = std::async(std::launch::async,
                        [&] { return collect(rx.rx_queue("if0"), fitting.size(), 3000ms, 100ms); });
  for (const auto& b : all) ASSERT_TRUE(senders[rng() % senders.size()].send_to("127.0.0.1", port, b));
  const auto received = got.get();
  const QueueStats st = rx.rx_queue("if0").stats();
  EXPECT_TRUE(all_accounted(all.size(), st));
  EXPECT_EQ(st.drop(DropReason::oversize), all.size() - fitting.size());
  ASSERT_EQ(received.size(), fitting.size()) << describe(st);
  // Several senders: compare as multisets.
  auto a = fitting, b = received;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_TRUE(a == b);
}

// Sending to a port nobody listens on: ECONNREFUSED comes back (ICMP on loopback); the
// packets it hits count tx_error, the rest go out, and the sender never stalls.
TEST(UdpTxErrors, NoListenerNeverStalls) {
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface ts;
  ts.destination = udp_url(false, port);
  ts.tx_queues = 1;
  ts.batch = 16;
  Session tx(ts.build());
  const auto payloads = numbered_payloads(400, [](size_t) { return 100; });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(send_payloads(tx.tx_queue("if0"), payloads, 3000ms), payloads.size());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  const QueueStats st = tx.tx_queue("if0").stats();
  EXPECT_TRUE(sender_accounted(payloads.size(), st));
  EXPECT_EQ(st.total_drops(), st.drop(DropReason::tx_error) + st.drop(DropReason::tx_full)) << describe(st);
  EXPECT_GE(st.drop(DropReason::tx_error), 1u);
  EXPECT_GE(st.errors, 1u);
  EXPECT_EQ(st.pool_in_use, 0u);
}

}  // namespace
