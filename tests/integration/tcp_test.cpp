// Socket engine, TCP over loopback: length-prefixed messages (4-byte big-endian length,
// then the bytes), exact and in order; peers that leave mid-message, messages over the
// limit, several peers, partial writes, and a client that reconnects after the server
// restarts.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <future>
#include <random>
#include <thread>

#include "test_util.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

std::string tcp_url(uint16_t port) { return "tcp://127.0.0.1:" + std::to_string(port); }

Iface tcp_rx(uint16_t port) {
  Iface s;
  s.address = tcp_url(port);
  s.rx_queues = 1;
  s.buf_size = 2048;
  return s;
}

Iface tcp_tx(uint16_t port) {
  Iface s;
  s.destination = tcp_url(port);
  s.tx_queues = 1;
  s.buf_size = 2048;
  s.socket.reconnect_ms = 20;
  return s;
}

std::vector<Bytes> random_messages(size_t n, size_t max_size, uint32_t seed, uint64_t first_seq = 0) {
  std::mt19937 rng(seed);
  std::vector<Bytes> v;
  for (size_t i = 0; i < n; ++i) {
    const size_t size = rng() % 8 == 0 ? 8 : 8 + rng() % (max_size - 7);  // >= 8: the seq fits
    v.push_back(make_payload(first_seq + i, size));
  }
  return v;
}

void expect_same(const std::vector<Bytes>& got, const std::vector<Bytes>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "message " << i;
}

TEST(Tcp, NetdaqToNetdaqRandomSizesExactInOrder) {
  const uint16_t port = free_port(SOCK_STREAM);
  Session rx(tcp_rx(port).build());
  Session tx(tcp_tx(port).build());
  const auto msgs = random_messages(3000, 2048, 1);
  auto got = std::async(std::launch::async, [&] { return collect(rx.rx_queue("if0"), msgs.size(), 5000ms); });
  EXPECT_EQ(send_payloads(tx.tx_queue("if0"), msgs, 5000ms), msgs.size());
  expect_same(got.get(), msgs);
  const QueueStats rs = rx.rx_queue("if0").stats();
  EXPECT_TRUE(all_accounted(msgs.size(), rs));
  EXPECT_EQ(rs.packets, msgs.size());
  EXPECT_EQ(rs.total_drops(), 0u);
  EXPECT_EQ(rs.connections, 1u);
  EXPECT_GT(rs.copies, 0u);
  const QueueStats ts = tx.tx_queue("if0").stats();
  EXPECT_TRUE(sender_accounted(msgs.size(), ts));
  EXPECT_EQ(ts.packets, msgs.size());
  EXPECT_EQ(ts.connections, 1u);
  EXPECT_EQ(ts.total_drops(), 0u);
}

// A peer that writes the stream in pieces of random sizes (prefixes split too).
TEST(Tcp, StreamInRandomPiecesFromAPlainClient) {
  const uint16_t port = free_port(SOCK_STREAM);
  Session rx(tcp_rx(port).build());
  const auto msgs = random_messages(500, 2048, 2);
  Bytes stream;
  for (auto& m : msgs) {
    const uint32_t n = static_cast<uint32_t>(m.size());
    for (int k = 3; k >= 0; --k) stream.push_back(std::byte(n >> (8 * k)));
    stream.insert(stream.end(), m.begin(), m.end());
  }
  auto got = std::async(std::launch::async, [&] { return collect(rx.rx_queue("if0"), msgs.size(), 5000ms); });
  Socket c = Socket::tcp_connect("127.0.0.1", port);
  ASSERT_GE(c.fd(), 0);
  std::mt19937 rng(3);
  for (size_t off = 0; off < stream.size();) {
    const size_t n = std::min<size_t>(stream.size() - off, 1 + rng() % (rng() % 4 == 0 ? 7 : 3000));
    ASSERT_TRUE(c.send_all(stream.data() + off, n));
    off += n;
    if (rng() % 64 == 0) std::this_thread::sleep_for(200us);
  }
  const auto received = got.get();
  EXPECT_TRUE(all_accounted(msgs.size(), received.size(), {rx.rx_queue("if0").stats()}));
  expect_same(received, msgs);
}

// Several peers at once: each one's messages arrive complete and in order.
TEST(Tcp, SeveralPeersEachInOrder) {
  const uint16_t port = free_port(SOCK_STREAM);
  Session rx(tcp_rx(port).build());
  constexpr size_t kPeers = 3, kEach = 300;
  auto got = std::async(std::launch::async, [&] { return collect(rx.rx_queue("if0"), kPeers * kEach, 5000ms); });
  std::vector<std::thread> peers;
  for (size_t p = 0; p < kPeers; ++p) {
    peers.emplace_back([p, port] {
      Socket c = Socket::tcp_connect("127.0.0.1", port);
      for (auto& m : random_messages(kEach, 1500, 10 + p, p * 100000)) c.send_message(m);
    });
  }
  for (auto& t : peers) t.join();
  const auto all = got.get();
  EXPECT_TRUE(all_accounted(kPeers * kEach, all.size(), {rx.rx_queue("if0").stats()}));
  ASSERT_EQ(all.size(), kPeers * kEach);
  std::vector<std::vector<Bytes>> per(kPeers);
  for (auto& b : all) per[payload_seq(b) / 100000].push_back(b);
  for (size_t p = 0; p < kPeers; ++p) expect_same(per[p], random_messages(kEach, 1500, 10 + p, p * 100000));
  EXPECT_EQ(rx.rx_queue("if0").stats().connections, kPeers);
}

// A peer that disconnects in the middle of a message: the complete messages before it are
// delivered, the partial one is counted malformed, and the listener takes new peers.
TEST(Tcp, PeerDisconnectMidMessageIsMalformed) {
  const uint16_t port = free_port(SOCK_STREAM);
  Session rx(tcp_rx(port).build());
  auto& q = rx.rx_queue("if0");
  {
    Socket c = Socket::tcp_connect("127.0.0.1", port);
    for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(c.send_message(make_payload(i, 100 + i)));
    const unsigned char partial[] = {0, 0, 1, 0, 1, 2, 3, 4, 5};  // says 256 bytes, sends 5
    ASSERT_TRUE(c.send_all(partial, sizeof(partial)));
  }  // closed
  auto first = collect(q, 3, 3000ms, 100ms);
  ASSERT_EQ(first.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) EXPECT_TRUE(check_payload(first[i], i, 100 + i));
  {
    Socket c = Socket::tcp_connect("127.0.0.1", port);
    const unsigned char half_prefix[] = {0, 0};  // even the length prefix is cut
    ASSERT_TRUE(c.send_all(half_prefix, sizeof(half_prefix)));
  }
  {
    Socket c = Socket::tcp_connect("127.0.0.1", port);
    for (uint64_t i = 10; i < 12; ++i) ASSERT_TRUE(c.send_message(make_payload(i, 50)));
  }
  auto second = collect(q, 2, 3000ms, 100ms);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_TRUE(check_payload(second[0], 10, 50));
  EXPECT_TRUE(check_payload(second[1], 11, 50));
  const QueueStats st = q.stats();
  // 7 messages begun: 5 whole, 2 cut short by their peer leaving.
  EXPECT_TRUE(all_accounted(7, first.size() + second.size(), {st}));
  EXPECT_EQ(st.drop(DropReason::malformed), 2u);
  EXPECT_EQ(st.packets, 5u);
  EXPECT_EQ(st.connections, 3u);
}

// A message longer than socket.tcp_max_message is skipped in the stream and counted
// oversize; the next messages arrive intact.
TEST(Tcp, MessageOverLimitSkippedFollowingArrive) {
  const uint16_t port = free_port(SOCK_STREAM);
  Iface rs = tcp_rx(port);
  rs.socket.tcp_max_message = 1000;
  Session rx(rs.build());
  Socket c = Socket::tcp_connect("127.0.0.1", port);
  const std::vector<size_t> sizes{500, 5000, 1000, 1001, 100000, 700, 8};
  for (size_t i = 0; i < sizes.size(); ++i) ASSERT_TRUE(c.send_message(make_payload(i, sizes[i])));
  std::vector<size_t> ok;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] <= 1000) ok.push_back(i);
  const auto got = collect(rx.rx_queue("if0"), ok.size(), 3000ms, 100ms);
  EXPECT_TRUE(all_accounted(sizes.size(), got.size(), {rx.rx_queue("if0").stats()}));
  ASSERT_EQ(got.size(), ok.size());
  for (size_t k = 0; k < ok.size(); ++k) EXPECT_TRUE(check_payload(got[k], ok[k], sizes[ok[k]]));
  const QueueStats st = rx.rx_queue("if0").stats();
  EXPECT_EQ(st.drop(DropReason::oversize), 3u);
  EXPECT_EQ(st.packets, ok.size());
}

// Header-data split over TCP: the first buf_size bytes of a message in segment 0.
TEST(Tcp, HeaderDataSplitSegments) {
  const uint16_t port = free_port(SOCK_STREAM);
  Iface rs = tcp_rx(port);
  rs.split_header = 64;
  Session rx(rs.build());
  Socket c = Socket::tcp_connect("127.0.0.1", port);
  const std::vector<size_t> sizes{10, 64, 65, 2000, 2048};
  for (size_t i = 0; i < sizes.size(); ++i) ASSERT_TRUE(c.send_message(make_payload(i, sizes[i])));
  size_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (seen < sizes.size() && std::chrono::steady_clock::now() < deadline) {
    for (const auto& p : rx.rx_queue("if0").poll()) {
      ASSERT_EQ(p.segments(), 2u);
      EXPECT_EQ(p.segment(0).size(), std::min<size_t>(sizes[seen], 64));
      EXPECT_EQ(p.segment(1).size(), sizes[seen] - p.segment(0).size());
      EXPECT_TRUE(check_payload(bytes_of(p), seen, sizes[seen]));
      ++seen;
    }
  }
  EXPECT_EQ(seen, sizes.size());
  EXPECT_TRUE(all_accounted(sizes.size(), seen, {rx.rx_queue("if0").stats()}));
}

// The receiver does not read for a while: the kernel takes partial messages, the rest waits
// in the sender's pending buffer, and the stream stays intact.
TEST(Tcp, PartialWritesKeepTheStreamIntact) {
  const uint16_t port = free_port(SOCK_STREAM);
  Iface rs = tcp_rx(port);
  rs.socket.rcvbuf = 64 * 1024;
  Session rx(rs.build());
  Iface ts = tcp_tx(port);
  ts.socket.sndbuf = 32 * 1024;
  ts.batch = 256;  // one sendmsg spans several skbs, so the kernel cuts it inside a message
  ts.ring_depth = 4;
  Session tx(ts.build());
  const auto msgs = random_messages(3000, 2048, 4);
  // Send with nobody reading until the sender has been refused at least once.
  size_t sent = 0;
  size_t given_up = 0;  // put in a burst, then released unsent at a timeout (and offered again)
  auto& tq = tx.tx_queue("if0");
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  bool refused = false;
  while (!refused && sent < msgs.size() && std::chrono::steady_clock::now() < deadline) {
    const size_t chunk = std::min<size_t>(256, msgs.size() - sent);
    size_t unsent = 0;
    const size_t n = send_payloads(
        tq, std::vector<Bytes>(msgs.begin() + sent, msgs.begin() + static_cast<std::ptrdiff_t>(sent + chunk)), 20ms,
        {}, 0, &unsent);
    sent += n;
    given_up += unsent;
    refused = n < chunk;
  }
  EXPECT_TRUE(refused) << "the socket buffers never filled";
  auto got = std::async(std::launch::async, [&] { return collect(rx.rx_queue("if0"), msgs.size(), 5000ms); });
  // send_payloads restarts from `sent`: the messages refused above are sent again here.
  size_t unsent = 0;
  EXPECT_EQ(send_payloads(tq, std::vector<Bytes>(msgs.begin() + sent, msgs.end()), 5000ms, {}, 0, &unsent),
            msgs.size() - sent);
  given_up += unsent;
  const auto received = got.get();
  EXPECT_TRUE(all_accounted(msgs.size(), received.size(), {rx.rx_queue("if0").stats()}));
  expect_same(received, msgs);
  const QueueStats sent_stats = tq.stats();
  EXPECT_TRUE(sender_accounted(msgs.size() + given_up, sent_stats));
  EXPECT_EQ(sent_stats.drop(DropReason::tx_unsent), given_up) << describe(sent_stats);
  EXPECT_GT(sent_stats.copies, 0u) << "no partial write happened";
}

// The server goes away and comes back on the same port: the client notices, reconnects
// every reconnect_ms, and messages flow again. While it is not connected it accepts nothing.
TEST(Tcp, ClientReconnectsAfterServerRestart) {
  const uint16_t port = free_port(SOCK_STREAM);
  Session tx(tcp_tx(port).build());
  auto& tq = tx.tx_queue("if0");
  // Every message put in a burst: taken (sent, or dropped and counted), or released unsent.
  size_t offered = 0;
  auto send_one = [&](const Bytes& payload, std::chrono::milliseconds timeout) {
    size_t unsent = 0;
    const size_t taken = send_payloads(tq, {payload}, timeout, {}, 0, &unsent);
    offered += taken + unsent;
    return taken;
  };
  // No server yet: nothing is accepted, connection attempts are counted as errors.
  EXPECT_EQ(send_one(make_payload(0, 100), 100ms), 0u);
  EXPECT_GE(tq.stats().errors, 1u);

  uint64_t seq = 1;
  auto deliver_some = [&](Session& rx) {
    // Keep sending one message at a time until the server got 20.
    auto& q = rx.rx_queue("if0");
    size_t received = 0;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (received < 20 && std::chrono::steady_clock::now() < deadline) {
      send_one(make_payload(seq, 200), 5ms);
      ++seq;
      for (auto& b : collect(q, 1, 5ms, 0ms)) {
        EXPECT_TRUE(check_payload(b, payload_seq(b), 200));
        ++received;
      }
    }
    return received;
  };
  {
    Session rx(tcp_rx(port).build());
    EXPECT_GE(deliver_some(rx), 20u);
  }  // server gone
  std::this_thread::sleep_for(50ms);
  {
    Session rx(tcp_rx(port).build());
    EXPECT_GE(deliver_some(rx), 20u);
    EXPECT_EQ(rx.rx_queue("if0").stats().drop(DropReason::malformed), 0u);
  }
  const QueueStats st = tq.stats();
  EXPECT_TRUE(sender_accounted(offered, st));
  EXPECT_GE(st.connections, 2u);
  EXPECT_EQ(st.pool_in_use, 0u);
}

}  // namespace
