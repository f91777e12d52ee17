// The socket engine's UDP GRO receive against the kernel's own floor, one thread's CPU per
// datagram on a preloaded socket (bench/README.md, "gro_drain"). A loopback sender queues
// super-datagrams of S datagrams (UDP GSO: a GRO socket gets each one whole); then one thread
// drains them and its CPU time (user + system) is read:
//   (n) netdaq: the socket engine, one rx queue, socket.gro on, bursts polled and released;
//   (k) the floor: recvmmsg of 16 messages of 64 KiB on a UDP_GRO socket, datagrams counted.
// Per S (--segments, default 53,8,1; 1 = no GSO), --rounds rounds each after 6 untimed ones
// (the pool's pages touched once), medians. Checks, every round: received == sent, no drop;
// the first untimed netdaq round checks every datagram's sequence number and bytes. Exit 3 on
// a failed check.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gro_floor.h"
#include "netdaq/netdaq.h"
#include "receiver_cpu.h"

namespace {

using ndqbench::thread_cpu_ns;

constexpr uint32_t kSize = 1200;      // bytes a datagram (an ST 2110 or sensor payload)
constexpr uint32_t kPerRound = 12720; // datagrams a round (divisible by 53, 8 and 1 nearly)
constexpr uint32_t kWarmup = 6;       // untimed rounds first: every pool buffer touched once
constexpr auto kIdle = std::chrono::milliseconds(200);

uint16_t free_udp_port() {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// Datagram seq: its number in its first 8 bytes, then bytes (seq + i) & 0xff.
void fill(std::byte* p, uint64_t seq) {
  std::memcpy(p, &seq, 8);
  for (uint32_t i = 8; i < kSize; ++i) p[i] = std::byte((seq + i) & 0xff);
}
bool intact(std::span<const std::byte> d, uint64_t seq) {
  if (d.size() != kSize) return false;
  uint64_t got = 0;
  std::memcpy(&got, d.data(), 8);
  if (got != seq) return false;
  for (uint32_t i = 8; i < kSize; ++i)
    if (d[i] != std::byte((seq + i) & 0xff)) return false;
  return true;
}

// The loopback sender: super-datagrams of `segments` datagrams (UDP_SEGMENT), sequence numbers
// running on across rounds.
class Sender {
 public:
  Sender(uint16_t port, uint32_t segments) : fd_(socket(AF_INET, SOCK_DGRAM, 0)), segments_(segments) {
    const int gso = kSize, snd = 64 << 20;
    if (segments > 1) setsockopt(fd_, SOL_UDP, UDP_SEGMENT, &gso, sizeof gso);
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof snd);
    to_.sin_family = AF_INET;
    to_.sin_port = htons(port);
    to_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    buf_.resize(size_t(segments) * kSize);
  }
  ~Sender() { close(fd_); }
  uint64_t send_round() {  // returns datagrams sent
    uint64_t sent = 0;
    for (uint32_t b = 0; b < kPerRound / segments_; ++b) {
      for (uint32_t k = 0; k < segments_; ++k) fill(buf_.data() + size_t(k) * kSize, seq_ + k);
      if (sendto(fd_, buf_.data(), buf_.size(), 0, reinterpret_cast<const sockaddr*>(&to_), sizeof to_) ==
          ssize_t(buf_.size())) {
        seq_ += segments_;
        sent += segments_;
      }
    }
    return sent;
  }

 private:
  int fd_;
  uint32_t segments_;
  sockaddr_in to_{};
  std::vector<std::byte> buf_;
  uint64_t seq_ = 0;
};

struct Drain {
  uint64_t received = 0, cpu_ns = 0;
  bool ok = true;
};

// (n): netdaq's socket engine.
class NetdaqReceiver {
 public:
  explicit NetdaqReceiver(uint16_t port) : session_(netdaq::Config::parse(config(port), "gro_drain")) {}
  Drain drain(uint64_t n, bool verify) {
    netdaq::RxQueue& q = session_.rx_queue("lo");
    Drain d;
    auto last = std::chrono::steady_clock::now();
    const uint64_t c0 = thread_cpu_ns();
    while (d.received < n) {
      netdaq::RxBurst b = q.poll();
      if (b.empty()) {
        if (std::chrono::steady_clock::now() - last > kIdle) break;
        continue;
      }
      if (verify)
        for (const netdaq::Packet& p : b) d.ok = d.ok && intact(p.segment(0), next_seq_++);
      d.received += b.size();
      last = std::chrono::steady_clock::now();
    }
    d.cpu_ns = thread_cpu_ns() - c0;
    if (!verify) next_seq_ += d.received;
    return d;
  }
  netdaq::QueueStats stats() { return session_.rx_queue("lo").stats(); }

 private:
  static std::string config(uint16_t port) {
    return "memory_regions:\n  - {name: b, kind: host, buf_size: 2048, num_bufs: 8192}\n"
           "interfaces:\n  - name: lo\n    engine: socket\n    address: udp://127.0.0.1:" +
           std::to_string(port) +
           "\n    socket: {rcvbuf: 268435456, gro: true}\n"
           "    rx:\n      queues:\n        - {id: 0, mode: direct, batch_size: 64, memory_regions: [b]}\n";
  }
  netdaq::Session session_;
  uint64_t next_seq_ = 0;
};

// (k): the kernel's part alone (gro_floor.h).
class KernelFloor {
 public:
  explicit KernelFloor(uint16_t port) : floor_(socket(AF_INET, SOCK_DGRAM, 0)) {
    const int rcv = 256 << 20;
    setsockopt(floor_.fd(), SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof rcv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bound_ = bind(floor_.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  bool bound() const { return bound_; }
  Drain drain(uint64_t n) {
    Drain d;
    const uint64_t c0 = thread_cpu_ns();
    d.received = floor_.drain(n, kIdle);
    d.cpu_ns = thread_cpu_ns() - c0;
    return d;
  }

 private:
  ndqbench::GroFloor floor_;
  bool bound_ = false;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Row {
  uint32_t segments = 0;
  double n_ns = 0, k_ns = 0, copied_per_datagram = 0;
  std::vector<double> n_rounds, k_rounds;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<uint32_t> segments{53, 8, 1};
  uint32_t rounds = 9;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--segments" && i + 1 < argc) {
      segments.clear();
      for (const std::string& s : ndqbench::split_commas(argv[++i])) segments.push_back(uint32_t(std::stoul(s)));
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = uint32_t(std::stoul(argv[++i]));
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: netdaq_bench_gro_drain [--segments 53,8,1] [--rounds R] [--json PATH]\n");
      return 1;
    }
  }
  bool ok = true;
  std::vector<Row> rows;
  for (const uint32_t s : segments) {
    if (s == 0 || s > 64 || s * kSize > 65000) {
      std::fprintf(stderr, "--segments: %u: 1 to 54 datagrams of %u bytes fit a 64 KiB super-datagram\n", s, kSize);
      return 1;
    }
    Row row;
    row.segments = s;
    {
      const uint16_t port = free_udp_port();
      NetdaqReceiver rx(port);
      Sender tx(port, s);
      for (uint32_t r = 0; r < kWarmup + rounds; ++r) {
        const uint64_t sent = tx.send_round();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const Drain d = rx.drain(sent, r == 0);
        if (d.received != sent || !d.ok) {
          std::fprintf(stderr, "(n) %u segments, round %u: sent %lu, received %lu%s\n", s, r, (unsigned long)sent,
                       (unsigned long)d.received, d.ok ? "" : ", a datagram not intact");
          ok = false;
        }
        if (r >= kWarmup && d.received) row.n_rounds.push_back(double(d.cpu_ns) / double(d.received));
      }
      const netdaq::QueueStats st = rx.stats();
      if (st.total_drops() != 0) {
        std::fprintf(stderr, "(n) %u segments: %lu drops\n", s, (unsigned long)st.total_drops());
        ok = false;
      }
      row.copied_per_datagram = st.packets ? double(st.copies) / double(st.packets) : 0;
    }
    {
      const uint16_t port = free_udp_port();
      KernelFloor rx(port);
      if (!rx.bound()) {
        std::fprintf(stderr, "(k): cannot bind 127.0.0.1:%u\n", port);
        return 1;
      }
      Sender tx(port, s);
      for (uint32_t r = 0; r < kWarmup + rounds; ++r) {
        const uint64_t sent = tx.send_round();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const Drain d = rx.drain(sent);
        if (d.received != sent) {
          std::fprintf(stderr, "(k) %u segments, round %u: sent %lu, received %lu\n", s, r, (unsigned long)sent,
                       (unsigned long)d.received);
          ok = false;
        }
        if (r >= kWarmup && d.received) row.k_rounds.push_back(double(d.cpu_ns) / double(d.received));
      }
    }
    row.n_ns = median(row.n_rounds);
    row.k_ns = median(row.k_rounds);
    rows.push_back(row);
  }
  std::printf("%-9s %-38s %10s %10s %14s\n", "segments", "receiver", "ns/dgram", "n/k", "copied B/dgram");
  for (const Row& r : rows) {
    std::printf("%-9u %-38s %10.1f %10.2f %14.1f\n", r.segments, "(n) netdaq socket engine, GRO", r.n_ns,
                r.k_ns > 0 ? r.n_ns / r.k_ns : 0.0, r.copied_per_datagram);
    std::printf("%-9u %-38s %10.1f\n", r.segments, "(k) recvmmsg + UDP_GRO alone", r.k_ns);
  }
  std::printf("checks (every datagram received, none dropped, bytes of the first round): %s\n", ok ? "ok" : "FAILED");
  if (!json_path.empty()) {
    std::ostringstream j;
    j << "{\"bench\": \"gro_drain\", \"datagram_bytes\": " << kSize << ", \"datagrams_per_round\": " << kPerRound
      << ", \"rounds\": " << rounds << ", \"method\": \"loopback UDP GSO sender, preloaded socket, one thread's "
      << "CPU (user + system) per datagram of the drain, medians\", \"checks_ok\": " << (ok ? "true" : "false")
      << ", \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      j << (i ? ", " : "") << "{\"segments\": " << r.segments << ", \"netdaq_ns\": " << r.n_ns
        << ", \"floor_ns\": " << r.k_ns << ", \"ratio\": " << (r.k_ns > 0 ? r.n_ns / r.k_ns : 0.0)
        << ", \"copied_bytes_per_datagram\": " << r.copied_per_datagram << ", \"netdaq_rounds\": [";
      for (size_t k = 0; k < r.n_rounds.size(); ++k) j << (k ? ", " : "") << r.n_rounds[k];
      j << "], \"floor_rounds\": [";
      for (size_t k = 0; k < r.k_rounds.size(); ++k) j << (k ? ", " : "") << r.k_rounds[k];
      j << "]}";
    }
    j << "]}\n";
    std::ofstream(json_path) << j.str();
  }
  return ok ? 0 : 3;
}
