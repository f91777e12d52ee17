#include "peers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ndqtest {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

std::atomic<int> g_counter{0};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::array<uint8_t, 6> parse_mac(const std::string& s) {
  std::array<unsigned, 6> v{};
  char tail = 0;
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
    throw std::invalid_argument("not a MAC address: '" + s + "'");
  std::array<uint8_t, 6> m{};
  for (size_t i = 0; i < 6; ++i) {
    if (v[i] > 0xff) throw std::invalid_argument("not a MAC address: '" + s + "'");
    m[i] = static_cast<uint8_t>(v[i]);
  }
  return m;
}

in_addr parse_ip4(const std::string& s) {
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) throw std::invalid_argument("not an IPv4 address: '" + s + "'");
  return a;
}

// ---- DPDK runtime directories ----
// testpmd runs with --no-shconf, which still creates an empty /var/run/dpdk/<prefix>.
fs::path dpdk_runtime_root() {
  if (geteuid() == 0) return "/var/run/dpdk";
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  return fs::path(xdg ? xdg : "/tmp") / "dpdk";
}

constexpr const char* kDpdkPrefix = "ndqpeer";  // ndqpeer<pid>_<n>

// Removes runtime directories of earlier test processes that died before cleaning up.
void remove_stale_dpdk_dirs() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dpdk_runtime_root(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kDpdkPrefix, 0) != 0) continue;
    const int pid = std::atoi(name.c_str() + std::strlen(kDpdkPrefix));
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
  }
}

std::string new_dpdk_prefix() {
  remove_stale_dpdk_dirs();
  return kDpdkPrefix + std::to_string(getpid()) + "_" + std::to_string(g_counter.fetch_add(1));
}

void remove_dpdk_dir(const std::string& prefix) {
  std::error_code ec;
  fs::remove_all(dpdk_runtime_root() / prefix, ec);
}

// Removes the runtime directory of one testpmd run when it goes out of scope.
struct DpdkDirGuard {
  std::string prefix;
  ~DpdkDirGuard() { remove_dpdk_dir(prefix); }
};

// EAL options shared by every testpmd run: no hugepages, no shared config files, no PCI
// scan, no telemetry socket; two lcores (main, forwarding) pinned to the given CPUs; one
// virtual device.
std::vector<std::string> testpmd_argv(const std::string& prefix, const std::string& vdev, unsigned main_cpu,
                                      unsigned fwd_cpu) {
  return {"dpdk-testpmd", "--no-huge", "-m", "256", "--no-shconf", "--no-telemetry", "--no-pci",
          "--file-prefix", prefix, "--lcores",
          "0@" + std::to_string(allowed_cpu(main_cpu)) + ",1@" + std::to_string(allowed_cpu(fwd_cpu)),
          "--vdev", vdev, "--",
          // 8 K mbufs instead of testpmd's default ~155 K (338 MB, more than -m allows).
          "--total-num-mbufs=8192"};
}

// The "Forward statistics for port 0" blocks testpmd prints at each stop (counts since that
// start of forwarding), without the "Accumulated ... all ports" blocks.
std::vector<std::string> port0_blocks(const std::string& out) {
  std::vector<std::string> blocks;
  const std::string head = "Forward statistics for port 0 ";
  for (size_t p = out.find(head); p != std::string::npos; p = out.find(head, p + 1)) {
    const size_t body = out.find('\n', p);
    if (body == std::string::npos) break;
    const size_t end = out.find("-----", body);
    blocks.push_back(out.substr(body, end == std::string::npos ? std::string::npos : end - body));
  }
  return blocks;
}

// The unsigned number after "label" in text (0 if absent).
uint64_t field(const std::string& text, const std::string& label) {
  const size_t p = text.find(label);
  if (p == std::string::npos) return 0;
  return std::strtoull(text.c_str() + p + label.size(), nullptr, 10);
}

// The first line that explains a failed testpmd run, or a fallback.
std::string testpmd_failure(const std::string& out, int status) {
  std::smatch m;
  for (const char* pat : {"Cause: ([^\n]*)", "(EAL: [^\n]*(?:Error|error|failed|Cannot)[^\n]*)", "(Fail[^\n]*)"})
    if (std::regex_search(out, m, std::regex(pat))) return "dpdk-testpmd failed (status " + std::to_string(status) + "): " + m[1].str();
  return "dpdk-testpmd exited with status " + std::to_string(status);
}

// Why testpmd has no port to work on (a vdev that failed to probe: no such interface, no
// XDP support), or "" when it has one. testpmd then still runs and exits 0.
std::string testpmd_port_problem(const std::string& out) {
  if (out.find("No probed ethernet devices") == std::string::npos) return "";
  std::smatch m;
  if (std::regex_search(out, m, std::regex("(?:^|\n)([^\n]*(?:failed|Failed|error|Error)[^\n]*)")))
    return "dpdk-testpmd has no port: " + m[1].str();
  return "dpdk-testpmd has no port (No probed ethernet devices)";
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::trunc);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace

// ---- addresses and CPUs ----
UdpFlow lab_flow(const NetnsLab& lab, const NetnsLab::Side& from, const NetnsLab::Side& to, uint16_t src_port,
                 uint16_t dst_port) {
  UdpFlow f;
  f.src_mac = lab.mac(from);
  f.dst_mac = lab.mac(to);
  f.src_ip = from.ip4;
  f.dst_ip = to.ip4;
  f.src_port = src_port;
  f.dst_port = dst_port;
  return f;
}

unsigned allowed_cpu(unsigned k) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) == 0) return k;
  k %= static_cast<unsigned>(CPU_COUNT(&set));
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set) && k-- == 0) return cpu;
  return 0;
}

std::string describe(const PeerReport& r) {
  std::ostringstream s;
  s << "command: " << r.command << "\n";
  if (!r.error.empty()) s << "error: " << r.error << "\n";
  s << "packets=" << r.packets << " dropped=" << r.dropped << " errors=" << r.errors << " seconds=" << r.seconds
    << "\n";
  constexpr size_t kTail = 4000;
  s << "output" << (r.output.size() > kTail ? " (tail)" : "") << ":\n"
    << (r.output.size() > kTail ? r.output.substr(r.output.size() - kTail) : r.output);
  return s.str();
}

// ---- UdpSink ----
UdpSink::UdpSink(NetnsLab& lab, const NetnsLab::Side& side, uint16_t port) {
  sock_ = lab.run_in(side.ns, [&] { return Socket::udp_bound(side.ip4, port); });
  if (sock_.fd() < 0) throw std::runtime_error("cannot bind " + side.ip4 + ":" + std::to_string(port));
  // Room for everything a test sends even if this thread falls behind (as root, past rmem_max).
  const int big = 256 << 20;
  setsockopt(sock_.fd(), SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
  const timeval tv{0, 20'000};  // recv returns every 20 ms so the thread sees stop_
  setsockopt(sock_.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  thread_ = std::thread([this] { loop(); });
}

UdpSink::~UdpSink() { stop(); }

std::vector<Bytes> UdpSink::finish(size_t count, std::chrono::milliseconds timeout, std::chrono::milliseconds settle) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (received() < count && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(settle);
  stop();
  return std::move(got_);
}

size_t UdpSink::received() {
  std::lock_guard<std::mutex> l(mu_);
  return got_.size();
}

void UdpSink::loop() {
  Bytes buf(65536);
  while (!stop_.load()) {
    const ssize_t n = ::recv(sock_.fd(), buf.data(), buf.size(), 0);
    if (n < 0) continue;  // timeout (EAGAIN) or EINTR
    std::lock_guard<std::mutex> l(mu_);
    got_.emplace_back(buf.begin(), buf.begin() + n);
  }
}

void UdpSink::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

// ---- testpmd txonly ----
PeerReport testpmd_txonly_af_packet(const TestpmdTxOptions& o) {
  if (o.ns.empty() || o.veth.empty()) throw std::invalid_argument("testpmd_txonly_af_packet: ns and veth are required");
  if (o.payload_size > 1472) throw std::invalid_argument("testpmd_txonly_af_packet: payload_size > 1472");
  if (o.count == 0 && o.duration.count() <= 0)
    throw std::invalid_argument("testpmd_txonly_af_packet: set count or duration");
  parse_mac(o.flow.dst_mac);
  parse_ip4(o.flow.src_ip);
  parse_ip4(o.flow.dst_ip);

  const DpdkDirGuard dir{new_dpdk_prefix()};
  auto argv = testpmd_argv(dir.prefix, "net_af_packet0,iface=" + o.veth, o.main_cpu, o.fwd_cpu);
  argv.insert(argv.end(), {"--txpkts=" + std::to_string(kUdpFrameOverhead + o.payload_size),
                           "--tx-ip=" + o.flow.src_ip + "," + o.flow.dst_ip,
                           "--tx-udp=" + std::to_string(o.flow.src_port) + "," + std::to_string(o.flow.dst_port),
                           "--eth-peer=0," + o.flow.dst_mac});
  // Count mode: txonly has no packet limit, but "start tx_first K" sends exactly K bursts
  // (with the txonly settings above) before forwarding in rxonly mode, which sends nothing.
  // K bursts of B plus one burst of the remainder give any count.
  TempFile cmds;
  if (o.count) {
    const uint64_t burst = std::min<uint64_t>(o.count, 256);  // half the PMD's 512-frame ring
    std::string text = "set burst " + std::to_string(burst) + "\nstart tx_first " + std::to_string(o.count / burst) +
                       "\nstop\n";
    if (o.count % burst)
      text += "set burst " + std::to_string(o.count % burst) + "\nstart tx_first 1\nstop\n";
    write_text(cmds.path, text);
    argv.insert(argv.end(), {"--forward-mode=rxonly", "--cmdline-file=" + cmds.path});
  } else {
    argv.push_back("--forward-mode=txonly");
  }

  PeerReport r;
  const auto t0 = Clock::now();
  const auto deadline = t0 + o.timeout;
  int status = -1;
  {
    PeerProcess p(o.ns, argv);
    r.command = p.command();
    if (o.count) {
      p.close_stdin();  // after the command file, non-interactive testpmd waits for Enter: EOF
      status = p.wait(o.timeout);
      r.seconds = seconds_since(t0);
    } else if (p.wait_for_output("Press enter to exit", o.timeout)) {
      const auto started = Clock::now();
      while (Clock::now() < std::min(started + o.duration, deadline) && p.wait(0ms) == -1)
        std::this_thread::sleep_for(std::min<Clock::duration>(10ms, started + o.duration - Clock::now()));
      p.close_stdin();
      r.seconds = seconds_since(started);
      // Exit takes well under a second; give it at least 3 s even at the deadline.
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      status = p.wait(std::max(left, std::chrono::milliseconds(3000)));
    } else {
      status = p.wait(0ms);  // exited before forwarding (its error below), or -1: still starting
    }
    if (status == -1) {
      r.error = "dpdk-testpmd did not finish within " + std::to_string(o.timeout.count()) + " ms";
      p.stop(SIGINT, 3000ms);
    }
    r.output = p.output();
  }

  const auto blocks = port0_blocks(r.output);
  for (const auto& b : blocks) {
    r.packets += field(b, "TX-packets:");
    r.dropped += field(b, "TX-dropped:");
  }
  if (const std::string p = testpmd_port_problem(r.output); !p.empty()) r.error = p;
  if (r.error.empty() && status != 0) r.error = testpmd_failure(r.output, status);
  if (r.error.empty() && blocks.empty()) r.error = "no forward statistics in testpmd's output";
  r.ok = r.error.empty();
  return r;
}

// ---- testpmd rxonly on af_xdp ----
TestpmdRxAfXdp::TestpmdRxAfXdp(const std::string& ns, const std::string& veth, unsigned main_cpu, unsigned fwd_cpu)
    : prefix_(new_dpdk_prefix()) {
  auto argv = testpmd_argv(prefix_, "net_af_xdp0,iface=" + veth + ",start_queue=0,queue_count=1", main_cpu, fwd_cpu);
  argv.push_back("--forward-mode=rxonly");
  // stdin stays open: testpmd receives until stop() closes it.
  proc_ = std::make_unique<PeerProcess>(ns, argv);
  report_.command = proc_->command();
}

TestpmdRxAfXdp::~TestpmdRxAfXdp() { stop(); }

bool TestpmdRxAfXdp::wait_ready(std::chrono::milliseconds timeout) {
  if (ready_) return true;
  if (stopped_ || !proc_->wait_for_output("Press enter to exit", timeout)) return false;
  if (!testpmd_port_problem(proc_->output()).empty()) return false;
  ready_at_ = Clock::now();
  ready_ = true;
  return true;
}

PeerReport TestpmdRxAfXdp::stop() {
  if (stopped_) return report_;
  stopped_ = true;
  proc_->close_stdin();  // EOF: testpmd stops forwarding, prints its statistics and exits
  const int status = proc_->wait(10000ms);
  if (status == -1) proc_->stop(SIGINT, 3000ms);
  if (ready_) report_.seconds = seconds_since(ready_at_);
  report_.output = proc_->output();
  proc_.reset();
  remove_dpdk_dir(prefix_);

  const auto blocks = port0_blocks(report_.output);
  if (!blocks.empty()) {
    const std::string& b = blocks.back();
    report_.packets = field(b, "RX-packets:");
    report_.dropped = field(b, "RX-dropped:") + field(b, "RX-nombufs:");
    report_.errors = field(b, "RX-error:");
  }
  if (const std::string p = testpmd_port_problem(report_.output); !p.empty())
    report_.error = p;
  else if (status == -1)
    report_.error = "dpdk-testpmd did not exit within 10 s of stdin EOF";
  else if (status != 0)
    report_.error = testpmd_failure(report_.output, status);
  else if (!ready_)
    report_.error = "dpdk-testpmd never started forwarding";
  else if (blocks.empty())
    report_.error = "no forward statistics in testpmd's output";
  report_.ok = report_.error.empty();
  return report_;
}

PeerReport testpmd_rxonly_af_xdp(const std::string& ns, const std::string& veth, std::chrono::milliseconds duration) {
  TestpmdRxAfXdp rx(ns, veth);
  if (rx.wait_ready()) std::this_thread::sleep_for(duration);
  return rx.stop();
}

// ---- tcpreplay ----
PeerReport tcpreplay(const TcpreplayOptions& o) {
  if (o.ns.empty() || o.veth.empty() || o.pcap.empty())
    throw std::invalid_argument("tcpreplay: ns, veth and pcap are required");
  std::vector<std::string> argv{"tcpreplay", "-i", o.veth};
  argv.push_back(o.pps ? "--pps=" + std::to_string(o.pps) : "--topspeed");
  argv.push_back(o.pcap);
  PeerReport r;
  int status;
  {
    PeerProcess p(o.ns, argv);
    r.command = p.command();
    p.close_stdin();
    status = p.wait(o.timeout);
    if (status == -1) {
      r.error = "tcpreplay did not finish within " + std::to_string(o.timeout.count()) + " ms";
      p.stop(SIGINT, 3000ms);
    }
    r.output = p.output();
  }
  std::smatch m;
  const bool actual =
      std::regex_search(r.output, m, std::regex(R"(Actual: ([0-9]+) packets \([0-9]+ bytes\) sent in ([0-9.]+) seconds)"));
  if (actual) {
    r.packets = std::stoull(m[1]);
    r.seconds = std::stod(m[2]);
  }
  if (std::regex_search(r.output, m, std::regex(R"(Failed packets:\s+([0-9]+))"))) r.dropped = std::stoull(m[1]);
  if (r.error.empty() && status != 0) r.error = "tcpreplay exited with status " + std::to_string(status);
  if (r.error.empty() && !actual) r.error = "no 'Actual: N packets' line in tcpreplay's output";
  r.ok = r.error.empty();
  return r;
}

// ---- pcap ----
namespace {
void put16(Bytes& b, size_t at, uint16_t v) {
  b[at] = std::byte(v >> 8);
  b[at + 1] = std::byte(v & 0xff);
}

uint16_t ip_checksum(const std::byte* p, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < n; i += 2) sum += (uint32_t(p[i]) << 8) | uint32_t(p[i + 1]);
  if (n & 1) sum += uint32_t(p[n - 1]) << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}
}  // namespace

Bytes udp_frame(const UdpFlow& flow, uint16_t ip_id, const Bytes& payload) {
  if (payload.size() > 65507) throw std::invalid_argument("udp_frame: payload over 65,507 bytes");
  const auto dst = parse_mac(flow.dst_mac), src = parse_mac(flow.src_mac);
  const in_addr sip = parse_ip4(flow.src_ip), dip = parse_ip4(flow.dst_ip);
  Bytes f(kUdpFrameOverhead + payload.size());
  std::memcpy(&f[0], dst.data(), 6);
  std::memcpy(&f[6], src.data(), 6);
  put16(f, 12, 0x0800);
  // IPv4 header at 14.
  f[14] = std::byte(0x45);  // version 4, 5 words
  put16(f, 16, static_cast<uint16_t>(20 + 8 + payload.size()));
  put16(f, 18, ip_id);
  put16(f, 20, 0x4000);  // DF
  f[22] = std::byte(64);  // TTL
  f[23] = std::byte(17);  // UDP
  std::memcpy(&f[26], &sip, 4);
  std::memcpy(&f[30], &dip, 4);
  put16(f, 24, ip_checksum(&f[14], 20));
  // UDP header at 34; checksum 0 = none (IPv4).
  put16(f, 34, flow.src_port);
  put16(f, 36, flow.dst_port);
  put16(f, 38, static_cast<uint16_t>(8 + payload.size()));
  if (!payload.empty()) std::memcpy(&f[42], payload.data(), payload.size());
  return f;
}

void write_udp_pcap(const std::string& path, const UdpFlow& flow, uint64_t count, size_t payload_size,
                    const PayloadFn& payload) {
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  if (!dead) throw std::runtime_error("pcap_open_dead failed");
  pcap_dumper_t* d = pcap_dump_open(dead, path.c_str());
  if (!d) {
    const std::string err = pcap_geterr(dead);
    pcap_close(dead);
    throw std::runtime_error("pcap_dump_open(" + path + "): " + err);
  }
  std::string error;
  for (uint64_t seq = 0; seq < count && error.empty(); ++seq) {
    const Bytes p = payload(seq, payload_size);
    if (p.size() != payload_size) {
      error = "payload " + std::to_string(seq) + " has " + std::to_string(p.size()) + " bytes, not " +
              std::to_string(payload_size);
      break;
    }
    const Bytes f = udp_frame(flow, static_cast<uint16_t>(seq), p);
    pcap_pkthdr h{};
    h.ts.tv_sec = static_cast<time_t>(1'700'000'000 + seq / 1'000'000);
    h.ts.tv_usec = static_cast<suseconds_t>(seq % 1'000'000);
    h.caplen = h.len = static_cast<bpf_u_int32>(f.size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, reinterpret_cast<const u_char*>(f.data()));
  }
  if (error.empty() && pcap_dump_flush(d) != 0) error = "writing " + path + " failed";
  pcap_dump_close(d);
  pcap_close(dead);
  if (!error.empty()) throw std::runtime_error("write_udp_pcap: " + error);
}

}  // namespace ndqtest
