// Real peers nobody here wrote: socat sends to netdaq and receives from it, over UDP and
// TCP on loopback, and the counts and bytes match exactly. With CI=true a missing socat
// fails the tests instead of skipping them.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <future>
#include <thread>

#include "test_util.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

#define NDQ_REQUIRE_SOCAT() NDQ_REQUIRE(have_tool("socat"), "socat is not installed (apt-get install socat)")

// Waits (bounded) until something is bound to / listens on the port.
bool wait_bound(int type, uint16_t port) {
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (port_in_use(type, port)) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

// Waits (bounded) until the file has `size` bytes.
size_t wait_file_size(const std::string& path, size_t size) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  size_t n = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    n = read_file(path).size();
    if (n >= size) break;
    std::this_thread::sleep_for(10ms);
  }
  return n;
}

Bytes frame(const std::vector<Bytes>& msgs) {
  Bytes s;
  for (auto& m : msgs) {
    const uint32_t n = static_cast<uint32_t>(m.size());
    for (int k = 3; k >= 0; --k) s.push_back(std::byte(n >> (8 * k)));
    s.insert(s.end(), m.begin(), m.end());
  }
  return s;
}

// socat reads a file in blocks of -b bytes (a regular file gives full blocks) and sends
// each block as one datagram: N datagrams of a known size.
TEST(SocatPeer, SocatSendsUdpNetdaqCountsExactly) {
  NDQ_REQUIRE_SOCAT();
  constexpr size_t kN = 500, kSize = 100;
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = "udp://127.0.0.1:" + std::to_string(port);
  rs.rx_queues = 1;
  Session rx(rs.build());
  std::vector<Bytes> sent;
  Bytes all;
  for (size_t i = 0; i < kN; ++i) {
    sent.push_back(make_payload(i, kSize));
    all.insert(all.end(), sent.back().begin(), sent.back().end());
  }
  TempFile in;
  write_file(in.path, all);
  auto got = std::async(std::launch::async, [&] { return collect(rx.rx_queue("if0"), kN, 5000ms, 100ms); });
  Subprocess socat({"socat", "-u", "-b" + std::to_string(kSize), "OPEN:" + in.path,
                    "UDP4-SENDTO:127.0.0.1:" + std::to_string(port)});
  const auto received = got.get();
  EXPECT_EQ(socat.wait(3000ms), 0);
  EXPECT_TRUE(all_accounted(kN, received.size(), {rx.rx_queue("if0").stats()}));
  ASSERT_EQ(received.size(), kN);
  for (size_t i = 0; i < kN; ++i) ASSERT_EQ(received[i], sent[i]) << "datagram " << i;
  const QueueStats st = rx.rx_queue("if0").stats();
  EXPECT_EQ(st.packets, kN);
  EXPECT_EQ(st.bytes, kN * kSize);
  EXPECT_EQ(st.total_drops(), 0u);
}

// netdaq sends N datagrams; socat receives them and writes each to a file.
TEST(SocatPeer, NetdaqSendsUdpSocatGetsEveryByte) {
  NDQ_REQUIRE_SOCAT();
  constexpr size_t kN = 500, kSize = 200;
  const uint16_t port = free_port(SOCK_DGRAM);
  TempFile out;
  Subprocess socat({"socat", "-u", "UDP4-RECV:" + std::to_string(port) + ",bind=127.0.0.1,rcvbuf=4194304", "-"},
                   out.path);
  ASSERT_TRUE(wait_bound(SOCK_DGRAM, port)) << "socat did not bind port " << port;
  Iface ts;
  ts.destination = "udp://127.0.0.1:" + std::to_string(port);
  ts.tx_queues = 1;
  ts.rate_pps = 50000;  // socat writes each datagram to a file: do not outrun it
  Session tx(ts.build());
  std::vector<Bytes> sent;
  Bytes all;
  for (size_t i = 0; i < kN; ++i) {
    sent.push_back(make_payload(i, kSize));
    all.insert(all.end(), sent.back().begin(), sent.back().end());
  }
  EXPECT_EQ(send_payloads(tx.tx_queue("if0"), sent, 5000ms), kN);
  EXPECT_EQ(wait_file_size(out.path, kN * kSize), kN * kSize);
  socat.stop();
  EXPECT_EQ(read_file(out.path), all);
  const QueueStats sent_stats = tx.tx_queue("if0").stats();
  EXPECT_TRUE(sender_accounted(kN, sent_stats));
  EXPECT_EQ(sent_stats.packets, kN);
  EXPECT_EQ(sent_stats.bytes, kN * kSize);
}

// socat sends a file of length-prefixed messages over TCP; netdaq cuts exactly those.
TEST(SocatPeer, SocatSendsTcpNetdaqCutsEveryMessage) {
  NDQ_REQUIRE_SOCAT();
  const uint16_t port = free_port(SOCK_STREAM);
  Iface rs;
  rs.address = "tcp://127.0.0.1:" + std::to_string(port);
  rs.rx_queues = 1;
  Session rx(rs.build());
  std::vector<Bytes> msgs;
  for (size_t i = 0; i < 1000; ++i) msgs.push_back(make_payload(i, 8 + (i * 97) % 2040));
  TempFile in;
  write_file(in.path, frame(msgs));
  auto got = std::async(std::launch::async, [&] { return collect(rx.rx_queue("if0"), msgs.size(), 5000ms, 100ms); });
  Subprocess socat({"socat", "-u", "OPEN:" + in.path, "TCP4:127.0.0.1:" + std::to_string(port)});
  const auto received = got.get();
  EXPECT_EQ(socat.wait(3000ms), 0);
  EXPECT_TRUE(all_accounted(msgs.size(), received.size(), {rx.rx_queue("if0").stats()}));
  ASSERT_EQ(received.size(), msgs.size());
  for (size_t i = 0; i < msgs.size(); ++i) ASSERT_EQ(received[i], msgs[i]) << "message " << i;
  const QueueStats st = rx.rx_queue("if0").stats();
  EXPECT_EQ(st.total_drops(), 0u) << describe(st);  // socat closed after whole messages
  EXPECT_EQ(st.connections, 1u);
}

// netdaq sends N messages over TCP to a socat listener writing the stream to a file: the
// file holds exactly the framed messages.
TEST(SocatPeer, NetdaqSendsTcpSocatGetsTheFramedStream) {
  NDQ_REQUIRE_SOCAT();
  const uint16_t port = free_port(SOCK_STREAM);
  TempFile out;
  Subprocess socat({"socat", "-u", "TCP4-LISTEN:" + std::to_string(port) + ",bind=127.0.0.1,reuseaddr", "-"},
                   out.path);
  ASSERT_TRUE(wait_bound(SOCK_STREAM, port)) << "socat did not listen on port " << port;
  Iface ts;
  ts.destination = "tcp://127.0.0.1:" + std::to_string(port);
  ts.tx_queues = 1;
  ts.socket.reconnect_ms = 20;
  Session tx(ts.build());
  std::vector<Bytes> msgs;
  for (size_t i = 0; i < 1000; ++i) msgs.push_back(make_payload(i, 8 + (i * 131) % 2040));
  const Bytes stream = frame(msgs);
  EXPECT_EQ(send_payloads(tx.tx_queue("if0"), msgs, 5000ms), msgs.size());
  EXPECT_EQ(wait_file_size(out.path, stream.size()), stream.size());
  socat.stop();
  EXPECT_TRUE(read_file(out.path) == stream) << "the stream differs";
  const QueueStats st = tx.tx_queue("if0").stats();
  EXPECT_TRUE(sender_accounted(msgs.size(), st));
  EXPECT_EQ(st.packets, msgs.size());
  EXPECT_EQ(st.connections, 1u);
  EXPECT_EQ(st.total_drops(), 0u);
}

}  // namespace
