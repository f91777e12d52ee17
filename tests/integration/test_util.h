// Shared helpers of the integration tests: configs built in C++, sending and collecting
// packets through netdaq queues, plain sockets as independent peers, child processes
// (socat), and the CI rule for privileged tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "accounting.h"

#include "../require_env.h"
#include "netdaq/netdaq.h"

namespace ndqtest {

using Bytes = std::vector<std::byte>;
using namespace std::chrono_literals;

#define NDQ_REQUIRE_ROOT()                                 \
  do {                                                     \
    std::string why_;                                      \
    NDQ_REQUIRE(::ndqtest::NetnsLabSupported(&why_), why_); \
  } while (0)
bool NetnsLabSupported(std::string* why);

// A port that was free a moment ago (bound to port 0 on the loopback address, then closed).
uint16_t free_port(int type, bool ipv6 = false);

// Deterministic test bytes: the first 8 bytes carry seq (little-endian, as far as they
// fit), the rest a pattern of (seq, offset). check_payload says what differs.
Bytes make_payload(uint64_t seq, size_t size);
::testing::AssertionResult check_payload(const Bytes& got, uint64_t seq, size_t size);
uint64_t payload_seq(const Bytes& b);

// One interface "if0" of the socket engine.
struct Iface {
  std::string address;      // rx: udp://... or tcp://...
  std::string destination;  // tx
  unsigned rx_queues = 0;
  unsigned tx_queues = 0;
  netdaq::PollMode mode = netdaq::PollMode::direct;
  uint32_t batch = 32;
  uint32_t ring_depth = 16;
  uint32_t timeout_us = 200;
  uint32_t buf_size = 2048;
  uint32_t num_bufs = 4096;
  uint32_t split_header = 0;  // > 0: header-data split, header region of this buf_size
  double rate_pps = 0;
  netdaq::SocketOptions socket = default_socket();
  std::string log_level = "warn";

  static netdaq::SocketOptions default_socket() {
    netdaq::SocketOptions s;
    s.rcvbuf = 4u << 20;
    s.sndbuf = 1u << 20;
    return s;
  }
  netdaq::Config build() const;
};

// A packet's bytes, segments concatenated.
Bytes bytes_of(const netdaq::Packet& p);

// What c.validate() finds, one issue (to_string()) a line; "" for a valid config.
std::string issues(const netdaq::Config& c);

// Polls q until `count` packets arrived or `timeout` passed, then keeps polling for
// `settle` to catch extra packets. Returns the packets' bytes in arrival order.
std::vector<Bytes> collect(netdaq::RxQueue& q, size_t count, std::chrono::milliseconds timeout,
                           std::chrono::milliseconds settle = 20ms);
// The same over several queues (round robin); per-queue counts in *per_queue.
// `progress`, when given, holds how many packets arrived so far (for a paced sender).
std::vector<Bytes> collect_all(const std::vector<netdaq::RxQueue*>& qs, size_t count,
                               std::chrono::milliseconds timeout, std::vector<size_t>* per_queue = nullptr,
                               std::chrono::milliseconds settle = 20ms, std::atomic<size_t>* progress = nullptr);

// How many packets a receiver has taken so far.
using Delivered = std::function<size_t()>;
// A paced sender's window: well under every receive ring the tests use (an XSK ring of
// 2048, af_packet's 4096 frames, a socket buffer of megabytes).
inline constexpr size_t kReceiverWindow = 256;

// Sends payloads in order through q, retrying while the engine takes fewer, until all are
// consumed or `timeout` passes. Returns how many were consumed (sent or dropped).
// With `delivered` and a `window`, at most `window` packets are in flight: the sender waits
// for the receiver instead of outrunning it. Tests of exact delivery use this, so that a
// loaded 2-core CI machine (or ASan) slows the test down rather than overflowing a ring.
// `unsent`, when given, is set to how many packets it put in bursts but released unsent when
// the timeout passed (the queue counts them tx_unsent; a caller that offers them again has
// offered them twice).
size_t send_payloads(netdaq::TxQueue& q, const std::vector<Bytes>& payloads, std::chrono::milliseconds timeout,
                     const Delivered& delivered = {}, size_t window = 0, size_t* unsent = nullptr);


// Plain sockets: independent peers that are not netdaq.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept;
  ~Socket();
  int fd() const { return fd_; }
  void close();

  // UDP socket bound to an ephemeral port of the right family.
  static Socket udp(bool ipv6 = false);
  // UDP socket bound to host:port (no SO_REUSEPORT): holds the port.
  static Socket udp_bound(const std::string& host, uint16_t port);
  // Blocking TCP connection to host:port (retries until timeout).
  static Socket tcp_connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout = 2000ms);

  bool send_to(const std::string& host, uint16_t port, const Bytes& b);
  bool send_all(const void* data, size_t n);  // TCP: the whole buffer (blocking)
  bool send_message(const Bytes& b);          // TCP: 4-byte big-endian length + bytes

 private:
  int fd_ = -1;
};

// A child process (e.g. socat), stopped (SIGTERM, then SIGKILL) when destroyed.
class Subprocess {
 public:
  explicit Subprocess(const std::vector<std::string>& argv, const std::string& stdout_file = "",
                      const std::string& stdin_file = "");
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  bool running();
  // Waits up to timeout for the exit; returns the exit status, or -1 if still running.
  int wait(std::chrono::milliseconds timeout);
  void stop();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

// True once something listens on / is bound to the local UDP or TCP port.
bool port_in_use(int type, uint16_t port, bool ipv6 = false);

// A temporary file path, removed by the destructor.
struct TempFile {
  TempFile();
  ~TempFile();
  std::string path;
};
Bytes read_file(const std::string& path);
void write_file(const std::string& path, const Bytes& b);

}  // namespace ndqtest

namespace ndqtest {
// "packets=.. drops: reason=n ..." for failure messages.
std::string describe(const netdaq::QueueStats& s);
// An engine counter of a stats snapshot by name; a test failure (and 0) when it has no such counter.
uint64_t engine_counter(const netdaq::QueueStats& s, const std::string& name);
// Snapshots of several queues (e.g. a Session's rx_queues()), for all_accounted.
std::vector<netdaq::QueueStats> stats_of(const std::vector<netdaq::RxQueue*>& qs);
// What a queue counted between two of its snapshots: the counters of `now` less those of
// `before` (one phase of a test); the gauge, mode and engine counters as in `now`.
netdaq::QueueStats since(const netdaq::QueueStats& before, const netdaq::QueueStats& now);
// The big-endian 16-bit field at byte `at` of a frame.
uint16_t be16(std::span<const std::byte> b, size_t at);
}  // namespace ndqtest
