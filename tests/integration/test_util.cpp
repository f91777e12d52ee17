#include "test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "netns_lab.h"

extern char** environ;

namespace ndqtest {

using netdaq::Config;
using netdaq::PollMode;

bool NetnsLabSupported(std::string* why) { return NetnsLab::supported(why); }

namespace {
bool fill_addr(const std::string& host, uint16_t port, sockaddr_storage* ss, socklen_t* len) {
  std::memset(ss, 0, sizeof(*ss));
  auto* v4 = reinterpret_cast<sockaddr_in*>(ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(ss);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    *len = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}
}  // namespace

uint16_t free_port(int type, bool ipv6) {
  Socket s(::socket(ipv6 ? AF_INET6 : AF_INET, type, 0));
  sockaddr_storage ss;
  socklen_t len;
  fill_addr(ipv6 ? "::1" : "127.0.0.1", 0, &ss, &len);
  if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&ss), len) != 0) return 0;
  getsockname(s.fd(), reinterpret_cast<sockaddr*>(&ss), &len);
  return ntohs(ipv6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

bool port_in_use(int type, uint16_t port, bool ipv6) {
  Socket s(::socket(ipv6 ? AF_INET6 : AF_INET, type, 0));
  const int one = 1;
  if (type == SOCK_STREAM) setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage ss;
  socklen_t len;
  fill_addr(ipv6 ? "::" : "0.0.0.0", port, &ss, &len);
  return ::bind(s.fd(), reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno == EADDRINUSE;
}

Bytes make_payload(uint64_t seq, size_t size) {
  Bytes b(size);
  for (size_t k = 0; k < size; ++k) {
    if (k < 8)
      b[k] = std::byte(seq >> (8 * k));
    else
      b[k] = std::byte((seq * 131 + k * 7 + (k >> 8) * 13) & 0xff);
  }
  return b;
}

uint64_t payload_seq(const Bytes& b) {
  uint64_t s = 0;
  for (size_t k = 0; k < 8 && k < b.size(); ++k) s |= uint64_t(b[k]) << (8 * k);
  return s;
}

::testing::AssertionResult check_payload(const Bytes& got, uint64_t seq, size_t size) {
  if (got.size() != size)
    return ::testing::AssertionFailure() << "packet " << seq << ": size " << got.size() << ", expected " << size;
  const Bytes want = make_payload(seq, size);
  for (size_t k = 0; k < size; ++k)
    if (got[k] != want[k])
      return ::testing::AssertionFailure() << "packet " << seq << ": byte " << k << " is " << int(got[k])
                                           << ", expected " << int(want[k]);
  return ::testing::AssertionSuccess();
}

Config Iface::build() const {
  Config c;
  c.log.level = log_level;
  netdaq::MemoryRegionConfig payload;
  payload.name = "payload";
  payload.buf_size = buf_size;
  payload.num_bufs = num_bufs;
  c.memory_regions.push_back(payload);
  std::vector<std::string> regions{"payload"};
  if (split_header) {
    netdaq::MemoryRegionConfig hdr;
    hdr.name = "hdr";
    hdr.buf_size = split_header;
    hdr.num_bufs = num_bufs;
    c.memory_regions.push_back(hdr);
    regions = {"hdr", "payload"};
  }
  netdaq::InterfaceConfig i;
  i.name = "if0";
  i.engine = "socket";
  i.address = address;
  i.options.get<netdaq::SocketOptions>() = socket;
  i.tx.destination = destination;
  i.tx.rate_pps = rate_pps;
  for (unsigned k = 0; k < rx_queues; ++k) {
    netdaq::QueueConfig q;
    q.id = static_cast<uint16_t>(k);
    q.mode = mode;
    q.batch_size = batch;
    q.ring_depth = ring_depth;
    q.timeout_us = timeout_us;
    q.memory_regions = regions;
    i.rx.queues.push_back(q);
  }
  for (unsigned k = 0; k < tx_queues; ++k) {
    netdaq::QueueConfig q;
    q.id = static_cast<uint16_t>(k);
    q.batch_size = batch;
    q.ring_depth = ring_depth;
    q.memory_regions = regions;
    i.tx.queues.push_back(q);
  }
  c.interfaces.push_back(i);
  return c;
}

std::string issues(const netdaq::Config& c) {
  std::string s;
  for (const auto& i : c.validate()) s += i.to_string() + "\n";
  return s;
}

Bytes bytes_of(const netdaq::Packet& p) {
  Bytes b;
  b.reserve(p.size());
  for (unsigned s = 0; s < p.segments(); ++s) {
    auto seg = p.segment(s);
    b.insert(b.end(), seg.begin(), seg.end());
  }
  return b;
}

std::vector<Bytes> collect_all(const std::vector<netdaq::RxQueue*>& qs, size_t count,
                               std::chrono::milliseconds timeout, std::vector<size_t>* per_queue,
                               std::chrono::milliseconds settle, std::atomic<size_t>* progress) {
  std::vector<Bytes> out;
  if (per_queue) per_queue->assign(qs.size(), 0);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool settling = false;
  while (true) {
    bool any = false;
    for (size_t i = 0; i < qs.size(); ++i) {
      if (auto burst = qs[i]->poll()) {
        any = true;
        uint64_t sizes = 0;
        for (const auto& p : burst) {
          out.push_back(bytes_of(p));
          sizes += p.size();
        }
        EXPECT_EQ(burst.bytes(), sizes) << "RxBurst::bytes() is the sum of its packets' sizes";
        if (per_queue) (*per_queue)[i] += burst.size();
        if (progress) progress->store(out.size(), std::memory_order_relaxed);
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (!settling && out.size() >= count) {
      settling = true;
      deadline = now + settle;
    }
    if (now > deadline) break;
    if (!any) std::this_thread::sleep_for(50us);
  }
  return out;
}

std::vector<Bytes> collect(netdaq::RxQueue& q, size_t count, std::chrono::milliseconds timeout,
                           std::chrono::milliseconds settle) {
  return collect_all({&q}, count, timeout, nullptr, settle);
}

size_t send_payloads(netdaq::TxQueue& q, const std::vector<Bytes>& payloads, std::chrono::milliseconds timeout,
                     const Delivered& delivered, size_t window, size_t* unsent) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t next = 0;
  if (unsent) *unsent = 0;
  while (next < payloads.size() && std::chrono::steady_clock::now() < deadline) {
    size_t want = payloads.size() - next;
    if (delivered && window) {
      const size_t in_flight = next - std::min(next, delivered());
      if (in_flight >= window) {
        std::this_thread::sleep_for(50us);
        continue;
      }
      want = std::min(want, window - in_flight);
    }
    auto burst = q.allocate(want);
    if (!burst) {
      std::this_thread::sleep_for(50us);
      continue;
    }
    for (size_t i = 0; i < burst.size(); ++i) {
      const Bytes& b = payloads[next + i];
      netdaq::Packet& p = burst[i];
      size_t off = 0;
      for (unsigned s = 0; s < p.segments(); ++s) {
        auto buf = p.buffer(s);
        const size_t n = std::min(buf.size(), b.size() - off);
        std::memcpy(buf.data(), b.data() + off, n);
        p.set_size(static_cast<uint32_t>(n), s);
        off += n;
      }
    }
    while (!burst.empty() && std::chrono::steady_clock::now() < deadline) {
      const size_t before = burst.size();
      const size_t n = burst.send();
      next += n;
      if (n == 0 || burst.size() == before) std::this_thread::sleep_for(50us);
      if (burst.empty()) break;
    }
    if (unsent) *unsent += burst.size();  // released unsent below, at the end of this scope
  }
  return next;
}



// ---- Socket ----
Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}
Socket::~Socket() { close(); }
void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Socket Socket::udp(bool ipv6) {
  Socket s(::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0));
  sockaddr_storage ss;
  socklen_t len;
  fill_addr(ipv6 ? "::" : "0.0.0.0", 0, &ss, &len);
  ::bind(s.fd(), reinterpret_cast<sockaddr*>(&ss), len);
  const int big = 4 << 20;
  setsockopt(s.fd(), SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
  return s;
}

Socket Socket::udp_bound(const std::string& host, uint16_t port) {
  sockaddr_storage ss;
  socklen_t len;
  if (!fill_addr(host, port, &ss, &len)) return Socket();
  Socket s(::socket(ss.ss_family, SOCK_DGRAM, 0));
  if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&ss), len) != 0) s.close();
  return s;
}

Socket Socket::tcp_connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  sockaddr_storage ss;
  socklen_t len;
  if (!fill_addr(host, port, &ss, &len)) return Socket();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    Socket s(::socket(ss.ss_family, SOCK_STREAM, 0));
    if (::connect(s.fd(), reinterpret_cast<sockaddr*>(&ss), len) == 0) {
      const int one = 1;
      setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return s;
    }
    if (std::chrono::steady_clock::now() > deadline) return Socket();
    std::this_thread::sleep_for(10ms);
  }
}

bool Socket::send_to(const std::string& host, uint16_t port, const Bytes& b) {
  sockaddr_storage ss;
  socklen_t len;
  if (!fill_addr(host, port, &ss, &len)) return false;
  return ::sendto(fd_, b.data(), b.size(), 0, reinterpret_cast<sockaddr*>(&ss), len) == static_cast<ssize_t>(b.size());
}

bool Socket::send_all(const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n) {
    const ssize_t w = ::send(fd_, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool Socket::send_message(const Bytes& b) {
  const uint32_t n = static_cast<uint32_t>(b.size());
  const unsigned char prefix[4] = {static_cast<unsigned char>(n >> 24), static_cast<unsigned char>(n >> 16),
                                   static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n)};
  return send_all(prefix, 4) && send_all(b.data(), b.size());
}

// ---- Subprocess ----
Subprocess::Subprocess(const std::vector<std::string>& argv, const std::string& stdout_file,
                       const std::string& stdin_file) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, stdin_file.empty() ? "/dev/null" : stdin_file.c_str(), O_RDONLY, 0);
  if (!stdout_file.empty())
    posix_spawn_file_actions_addopen(&fa, 1, stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
}

Subprocess::~Subprocess() { stop(); }

bool Subprocess::running() { return pid_ > 0 && wait(0ms) == -1 && pid_ > 0; }

int Subprocess::wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int st = 0;
    const pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
      pid_ = -1;
      return status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(5ms);
  }
}

void Subprocess::stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  if (wait(1000ms) == -1 && pid_ > 0) {
    kill(pid_, SIGKILL);
    wait(5000ms);
  }
}

// ---- files ----
TempFile::TempFile() {
  char tmpl[] = "/tmp/netdaq-it-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd >= 0) ::close(fd);
  path = tmpl;
}
TempFile::~TempFile() { unlink(path.c_str()); }

Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Bytes b(c.size());
  if (!c.empty()) std::memcpy(b.data(), c.data(), c.size());  // an empty vector's data() may be null
  return b;
}

void write_file(const std::string& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

}  // namespace ndqtest

namespace ndqtest {
uint64_t engine_counter(const netdaq::QueueStats& s, const std::string& name) {
  for (const auto& [k, v] : s.engine_counters)
    if (k == name) return v;
  // A renamed or absent counter must not read as a huge value that passes EXPECT_GT.
  ADD_FAILURE() << "no engine counter '" << name << "' in " << describe(s);
  return 0;
}

std::vector<netdaq::QueueStats> stats_of(const std::vector<netdaq::RxQueue*>& qs) {
  std::vector<netdaq::QueueStats> v;
  for (auto* q : qs) v.push_back(q->stats());
  return v;
}

netdaq::QueueStats since(const netdaq::QueueStats& before, const netdaq::QueueStats& now) {
  netdaq::QueueStats d = now;
  d.packets -= before.packets;
  d.bytes -= before.bytes;
  d.bursts -= before.bursts;
  d.copies -= before.copies;
  d.errors -= before.errors;
  d.connections -= before.connections;
  for (size_t r = 0; r < netdaq::kDropReasons; ++r) d.drops[r] -= before.drops[r];
  return d;
}

uint16_t be16(std::span<const std::byte> b, size_t at) {
  return static_cast<uint16_t>((unsigned(b[at]) << 8) | unsigned(b[at + 1]));
}

std::string describe(const netdaq::QueueStats& s) {
  std::string t = s.queue + ": packets=" + std::to_string(s.packets) + " bursts=" + std::to_string(s.bursts) +
                  " copies=" + std::to_string(s.copies) + " errors=" + std::to_string(s.errors) +
                  " pool_in_use=" + std::to_string(s.pool_in_use) + " drops:";
  for (size_t r = 0; r < netdaq::kDropReasons; ++r)
    if (s.drops[r]) t += std::string(" ") + netdaq::to_string(static_cast<netdaq::DropReason>(r)) + "=" + std::to_string(s.drops[r]);
  return t;
}
}  // namespace ndqtest
