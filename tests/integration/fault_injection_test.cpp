// Fault injection.
//
// FaultKill: `netdaq run` (the CLI, a separate process) is SIGKILLed at random moments, 50 times
// per engine, spread over three phases (one test each, so that each stays well inside ctest's
// 60 s): during start (half the kills before the run is ready, half just after), under load (traffic flowing), and
// during shutdown (SIGINT, then SIGKILL after a random short delay). After every kill the next
// start must work (a short run that receives traffic exits 0 with every packet) and nothing may
// be left behind: no process, no network namespace, no /dev/shm entry, no netdaq eBPF program;
// socket: the port is free; afxdp: the stale XDP program the kill left is replaced by the next
// start (which says so) and gone after it; dpdk: no EAL runtime directory of the killed or the
// next process, every hugepage free again.
//   socket: loopback; the victim streams to itself, the test adds a sender under load.
//   afxdp:  a veth pair in namespaces the test creates (NetnsLab); the test sends from B.
//   dpdk:   net_ring0 (its tx ring feeds its rx ring) on hugepages; the victim's own sender is
//           the load (nothing outside the process can reach a ring device).
// The random moments come from a seed printed by every test; NETDAQ_FAULT_SEED=N repeats them
// (the delays are fractions of windows measured on the machine, printed too). NETDAQ_FAULT_KILLS=N
// caps each case's kills (scripts/test.sh's sanitizer pass: each ASan start costs ~1 s).
//
// FaultPool: an application (Session API) holds every burst while a sender keeps sending a
// known count: the pool runs dry, what finds no buffer is counted pool_empty, reception
// recovers once the bursts are released, sent == received + drops exactly.
//
// FaultDescheduled: the receiving thread stops polling for 100 ms under a paced sender: direct
// mode loses to the kernel (small socket buffer), worker mode to ring_full; reception
// recovers; sent == received + drops exactly.
#include <dirent.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "dpdk_util.h"
#include "test_paths.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

// ---- seed ----

// NETDAQ_FAULT_SEED, or one from the clock; the same for every test of this process.
uint64_t fault_seed() {
  static const uint64_t seed = []() -> uint64_t {
    if (const char* s = std::getenv("NETDAQ_FAULT_SEED"); s && *s) return std::strtoull(s, nullptr, 0);
    return static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007u;
  }();
  return seed;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// A generator for this test: the seed mixed with the test's name, so that every test has its
// own sequence and one seed repeats them all. Prints the seed.
class FaultRng {
 public:
  FaultRng() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string name = std::string(info->test_suite_name()) + "." + info->name();
    gen_.seed(fault_seed() ^ fnv1a(name));
    std::printf("[   SEED   ] %llu (NETDAQ_FAULT_SEED=%llu repeats it)\n", static_cast<unsigned long long>(fault_seed()),
                static_cast<unsigned long long>(fault_seed()));
    std::fflush(stdout);
    ::testing::Test::RecordProperty("fault_seed", std::to_string(fault_seed()));
  }
  // Uniform in [0, 1), the same on every platform (53 random bits).
  double uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }

 private:
  std::mt19937_64 gen_;
};

// ---- text and files ----

std::string to_text(const Bytes& b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }
std::string tail(const std::string& s, size_t n = 3000) { return s.size() <= n ? s : "..." + s.substr(s.size() - n); }
long long ms_of(Clock::duration d) { return std::chrono::duration_cast<Ms>(d).count(); }

std::set<std::string> dir_entries(const std::string& dir) {
  std::set<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.insert(e->d_name);
    closedir(d);
  }
  return out;
}

// The first number in a name ("ndq1234_0a", "ndqsA30526"): the pid of the test that made it.
pid_t pid_in(const std::string& name) {
  const auto at = name.find_first_of("0123456789");
  if (at == std::string::npos) return 0;
  return static_cast<pid_t>(std::atoll(name.c_str() + at));
}
bool alive(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

// A process's command line, "" once it is gone: a process that exits between the open and
// the read makes read() fail with ESRCH (which std::ifstream turns into an exception).
std::string cmdline_of(const std::string& pid) {
  std::string cmd;
  const int fd = ::open(("/proc/" + pid + "/cmdline").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return cmd;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) cmd.append(buf, static_cast<size_t>(n));
  ::close(fd);
  for (auto& c : cmd) c = c == '\0' ? ' ' : c;
  return n < 0 ? std::string{} : cmd;
}

// Processes whose command line mentions `needle` (a config path of this test).
std::vector<pid_t> processes_mentioning(const std::string& needle) {
  std::vector<pid_t> found;
  for (const auto& name : dir_entries("/proc")) {
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmd = cmdline_of(name);
    if (cmd.find(needle) != std::string::npos) found.push_back(static_cast<pid_t>(std::atoi(name.c_str())));
  }
  return found;
}

// eBPF programs netdaq loads (the afxdp steering program, the socket engine's GRO drop
// counters), in the whole system. Program names are cut to 15 characters.
size_t netdaq_bpf_programs() {
  static constexpr const char* kNames[] = {"netdaq_steer", "udp_drop_tracep", "udp_enqueue_exi"};
  size_t n = 0;
  uint32_t id = 0;
  while (true) {
    union bpf_attr next {};
    next.start_id = id;
    if (syscall(__NR_bpf, BPF_PROG_GET_NEXT_ID, &next, sizeof next) != 0) break;
    id = next.next_id;
    union bpf_attr get {};
    get.prog_id = id;
    const int fd = static_cast<int>(syscall(__NR_bpf, BPF_PROG_GET_FD_BY_ID, &get, sizeof get));
    if (fd < 0) continue;  // gone meanwhile
    bpf_prog_info info{};
    union bpf_attr q {};
    q.info.bpf_fd = static_cast<uint32_t>(fd);
    q.info.info_len = sizeof info;
    q.info.info = reinterpret_cast<uint64_t>(&info);
    if (syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &q, sizeof q) == 0)
      for (const char* want : kNames)
        if (std::strncmp(info.name, want, sizeof info.name) == 0) ++n;
    close(fd);
  }
  return n;
}

// What the machine had before a test: network namespaces, /dev/shm entries, netdaq eBPF programs.
struct Baseline {
  std::set<std::string> netns = dir_entries("/run/netns");
  std::set<std::string> shm = dir_entries("/dev/shm");
  size_t bpf = netdaq_bpf_programs();

  // Namespaces that are new and ours (not in `allowed`, not made by another live test process).
  std::vector<std::string> new_netns(const std::set<std::string>& allowed) const {
    std::vector<std::string> extra;
    for (const auto& n : dir_entries("/run/netns")) {
      if (netns.count(n) || allowed.count(n)) continue;
      const pid_t owner = pid_in(n);
      if (owner != getpid() && alive(owner)) continue;  // another test process's lab
      extra.push_back(n);
    }
    return extra;
  }
  std::vector<std::string> new_shm() const {
    std::vector<std::string> extra;
    for (const auto& n : dir_entries("/dev/shm"))
      if (!shm.count(n)) extra.push_back(n);
    return extra;
  }
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// ---- the CLI as a child process ----

// `[prefix...] netdaq run ARGS... --stats FILE`, stdout and stderr into one file. `exec` keeps
// the pid netdaq's (nsenter with only --net execs too).
class CliRun {
 public:
  CliRun(const std::vector<std::string>& prefix, const std::vector<std::string>& args) {
    std::vector<std::string> argv{"sh", "-c", "exec \"$@\" 2>&1", "sh"};
    argv.insert(argv.end(), prefix.begin(), prefix.end());
    argv.push_back(NETDAQ_CLI);
    argv.push_back("run");
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--stats");
    argv.push_back(stats_.path);
    started_ = Clock::now();
    proc_ = std::make_unique<Subprocess>(argv, out_.path);
    pid_ = proc_->pid();
  }
  pid_t pid() const { return pid_; }
  Clock::time_point started() const { return started_; }
  std::string output() const { return to_text(read_file(out_.path)); }
  bool running() { return proc_->running(); }
  void signal(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);  // a zombie not yet reaped is fine: its status tells
  }
  int wait(Ms timeout) { return proc_->wait(timeout); }

  // The run loop started: the first --stats line is out.
  bool ready() const {
    struct stat st {};
    return ::stat(stats_.path.c_str(), &st) == 0 && st.st_size > 0;
  }
  // Waits for ready(); false when the process exited first or the timeout passed.
  bool wait_ready(Ms timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      if (ready()) return true;
      if (!running()) return false;
      std::this_thread::sleep_for(2ms);
    }
    return false;
  }
  // The last complete --stats line (an empty object before the first).
  nlohmann::json last_stats() const {
    const std::string text = to_text(read_file(stats_.path));
    const auto end = text.rfind('\n');
    if (end == std::string::npos) return nlohmann::json::object();
    const auto begin = text.rfind('\n', end ? end - 1 : 0);
    try {
      return nlohmann::json::parse(text.substr(begin == std::string::npos || end == 0 ? 0 : begin + 1,
                                               end - (begin == std::string::npos || end == 0 ? 0 : begin + 1)));
    } catch (const std::exception&) {
      return nlohmann::json::object();
    }
  }
  uint64_t rx_packets() const {
    const auto j = last_stats();
    return j.contains("rx_packets") ? j["rx_packets"].get<uint64_t>() : 0;
  }

 private:
  TempFile out_, stats_;
  std::unique_ptr<Subprocess> proc_;
  pid_t pid_ = -1;
  Clock::time_point started_;
};

std::string status_text(int status) {
  if (status == -1) return "still running";
  if (status > 128) return "killed by signal " + std::to_string(status - 128);
  return "exit " + std::to_string(status);
}

// --json FILE's totals, or a failure that says why there are none.
::testing::AssertionResult read_totals(const TempFile& json, nlohmann::json* totals) {
  try {
    *totals = nlohmann::json::parse(to_text(read_file(json.path))).at("totals");
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "no JSON summary: " << e.what();
  }
  return ::testing::AssertionSuccess();
}

// A netdaq payload (docs/cli.md) of `size` bytes.
Bytes netdaq_payload(uint32_t stream, uint64_t seq, size_t size) {
  Bytes b(size);
  write_payload(b, stream, seq, payload_clock_ns());
  return b;
}

// Sends netdaq payloads (stream, seq 0..) from socket s to host:port at about `pps` until
// `stop`, `max_packets` or `limit`, whichever first. Returns how many went out.
size_t send_paced(Socket& s, const std::string& host, uint16_t port, uint32_t stream, double pps, size_t max_packets,
                  Clock::duration limit, const std::atomic<bool>& stop, size_t size = 512) {
  const auto t0 = Clock::now();
  const auto period = std::chrono::duration<double>(1.0 / pps);
  size_t sent = 0;
  while (sent < max_packets && !stop.load() && Clock::now() - t0 < limit) {
    const auto due = t0 + std::chrono::duration_cast<Clock::duration>(period * static_cast<double>(sent));
    if (due > Clock::now()) std::this_thread::sleep_until(due);
    if (s.send_to(host, port, netdaq_payload(stream, sent, size))) ++sent;
  }
  return sent;
}

// ---- one engine under fault injection ----

class EngineRig {
 public:
  virtual ~EngineRig() = default;
  // Wrapper that puts the CLI where its interface is (nsenter), and the run's arguments.
  virtual std::vector<std::string> prefix() const { return {}; }
  const std::string& config() const { return cfg_.path; }
  // Arguments of a victim: runs longer than any kill delay, bounded all the same.
  virtual std::vector<std::string> victim_args() const { return {cfg_.path, "-q", "-n", "1000000", "-d", "5"}; }
  // Traffic from the test to the victim under load, until `stop` (bounded in count and time).
  // Engines without a way in (dpdk's ring) return false: the victim's own sender is the load.
  virtual bool load(const std::atomic<bool>& stop) = 0;
  // While the victim runs, it holds what the checks after its kill look for (they are not vacuous).
  virtual ::testing::AssertionResult holds_resources(pid_t victim) = 0;
  // Called right after a kill was reaped.
  virtual void after_kill(pid_t victim) = 0;
  // The next start: runs and checks a short run that receives traffic. *out: its output.
  virtual ::testing::AssertionResult next_start_works(std::string* out, pid_t* pid) = 0;
  // Nothing of the engine left behind by the victim and the next start.
  virtual ::testing::AssertionResult nothing_left(pid_t victim, pid_t next) = 0;
  // Namespaces that belong to the rig (not leftovers).
  virtual std::set<std::string> own_netns() const { return {}; }
  // One line on what the kills left that the next starts cleaned up.
  virtual std::string cleanup_summary() const { return ""; }
  virtual void check_totals() {}

 protected:
  void write_config(const std::string& yaml) { std::ofstream(cfg_.path) << yaml; }
  TempFile cfg_;
};

// Runs a self-looping config (`-n 2000 --expect-no-loss`): exits 0 with 2000 sent and received.
::testing::AssertionResult self_loop_works(const EngineRig& rig, std::string* out, pid_t* pid) {
  TempFile json;
  std::vector<std::string> args{rig.config(), "-q", "-n", "2000", "-d", "20", "--expect-no-loss", "--json", json.path};
  CliRun run(rig.prefix(), args);
  *pid = run.pid();
  const int status = run.wait(30s);
  *out = run.output();
  if (status == -1) run.signal(SIGKILL), run.wait(5s);
  if (status != 0) return ::testing::AssertionFailure() << "next start: " << status_text(status) << "\n" << tail(*out);
  nlohmann::json t;
  if (auto r = read_totals(json, &t); !r) return r << "\n" << tail(*out);
  if (t.value("rx_packets", 0ull) != 2000 || t.value("tx_packets", 0ull) != 2000 || t.value("lost", 1ull) != 0)
    return ::testing::AssertionFailure() << "next start: totals " << t.dump() << "\n" << tail(*out);
  return ::testing::AssertionSuccess();
}

std::string run_yaml(const std::string& body) {
  return body + "run:\n  duration_s: 5\n  tx_payload_size: 512\n  stats_interval_ms: 50\n  drain_ms: 100\n"
                "log:\n  level: info\n";
}

class SocketRig final : public EngineRig {
 public:
  SocketRig() : port_(free_port(SOCK_DGRAM)) {
    const std::string url = "udp://127.0.0.1:" + std::to_string(port_);
    write_config(run_yaml(
        "memory_regions:\n"
        "  - {name: rx_bufs, kind: host, buf_size: 2048, num_bufs: 4096}\n"
        "  - {name: tx_bufs, kind: host, buf_size: 2048, num_bufs: 1024}\n"
        "interfaces:\n"
        "  - name: receiver\n    engine: socket\n    address: " + url + "\n"
        "    rx:\n      queues:\n        - {id: 0, mode: direct, batch_size: 64, memory_regions: [rx_bufs]}\n"
        "    socket: {rcvbuf: 4194304}\n"
        "  - name: sender\n    engine: socket\n"
        "    tx:\n      destination: " + url + "\n      rate_pps: 50000\n"
        "      queues:\n        - {id: 0, batch_size: 64, ring_depth: 8, memory_regions: [tx_bufs]}\n"));
  }
  bool load(const std::atomic<bool>& stop) override {
    Socket s = Socket::udp();
    send_paced(s, "127.0.0.1", port_, 9, 20000, 40000, 2s, stop);
    return true;
  }
  ::testing::AssertionResult holds_resources(pid_t) override {
    if (!port_in_use(SOCK_DGRAM, port_)) return ::testing::AssertionFailure() << "the run does not hold udp port " << port_;
    return ::testing::AssertionSuccess();
  }
  void after_kill(pid_t) override {}
  ::testing::AssertionResult next_start_works(std::string* out, pid_t* pid) override {
    // SO_REUSEPORT would let a socket of a process that is not quite gone steal half the
    // datagrams: the port must be free before the next start binds it.
    if (port_in_use(SOCK_DGRAM, port_))
      return ::testing::AssertionFailure() << "udp port " << port_ << " still bound after the kill";
    return self_loop_works(*this, out, pid);
  }
  ::testing::AssertionResult nothing_left(pid_t, pid_t) override {
    if (port_in_use(SOCK_DGRAM, port_)) return ::testing::AssertionFailure() << "udp port " << port_ << " still bound";
    return ::testing::AssertionSuccess();
  }

 private:
  uint16_t port_;
};

class AfxdpRig final : public EngineRig {
 public:
  static constexpr uint16_t kPort = 46310;
  static constexpr size_t kVerifyPackets = 1000;

  AfxdpRig() {
    write_config(run_yaml(
        "memory_regions:\n  - {name: umem, kind: host, buf_size: 2048, num_bufs: 4096}\n"
        "interfaces:\n  - name: x0\n    engine: afxdp\n    address: " + lab_.a().veth + "\n"
        "    rx:\n      queues:\n        - {id: 0, batch_size: 64, ring_depth: 16, memory_regions: [umem]}\n"
        "      flows:\n        - {id: 1, queue: 0, match: {udp_dst: " + std::to_string(kPort) + "}}\n"
        "    afxdp: {fill_ring: 1024, rx_ring: 1024}\n"));
    sender_ = lab_.run_in(lab_.b().ns, [] { return Socket::udp(); });
    // Resolve A's address once, so that no datagram of a short run waits for ARP.
    lab_.exec_in(lab_.b().ns, {"ping", "-c", "1", "-W", "2", lab_.a().ip4});
  }
  std::vector<std::string> prefix() const override { return {"nsenter", "--net=/run/netns/" + lab_.a().ns, "--"}; }
  std::set<std::string> own_netns() const override { return {lab_.a().ns, lab_.b().ns}; }
  bool load(const std::atomic<bool>& stop) override {
    send_paced(sender_, lab_.a().ip4, kPort, 9, 10000, 20000, 2s, stop);
    return true;
  }
  ::testing::AssertionResult holds_resources(pid_t) override {
    if (!xdp_attached(lab_, lab_.a())) return ::testing::AssertionFailure() << "no XDP program on " << lab_.a().veth;
    if (netdaq_bpf_programs() == 0) return ::testing::AssertionFailure() << "no netdaq eBPF program loaded";
    return ::testing::AssertionSuccess();
  }
  void after_kill(pid_t) override {
    stale_ = xdp_attached(lab_, lab_.a());
    stale_count_ += stale_;
  }
  ::testing::AssertionResult next_start_works(std::string* out, pid_t* pid) override {
    TempFile json;
    CliRun run(prefix(), {config(), "-q", "-d", "20", "--json", json.path});
    *pid = run.pid();
    auto fail = [&](const std::string& why) {
      run.signal(SIGKILL);
      run.wait(5s);
      *out = run.output();
      return ::testing::AssertionFailure() << "next start: " << why << "\n" << tail(*out);
    };
    if (!run.wait_ready(20s)) return fail("never ready (" + status_text(run.wait(0ms)) + ")");
    const std::atomic<bool> never{false};
    const size_t sent = send_paced(sender_, lab_.a().ip4, kPort, 0, 10000, kVerifyPackets, 10s, never);
    const auto deadline = Clock::now() + 10s;
    while (run.rx_packets() < sent && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
    run.signal(SIGINT);
    const int status = run.wait(20s);
    if (status != 0) return fail("after Ctrl-C: " + status_text(status));
    *out = run.output();
    nlohmann::json t;
    if (auto r = read_totals(json, &t); !r) return r << "\n" << tail(*out);
    if (sent != kVerifyPackets || t.value("rx_packets", 0ull) != sent || t.value("lost", 1ull) != 0 ||
        t.value("malformed", 1ull) != 0)
      return ::testing::AssertionFailure() << "next start: sent " << sent << ", totals " << t.dump() << "\n" << tail(*out);
    // The program the kill left (still attached, no socket behind it) was recognised and replaced.
    const bool replaced = out->find("replaced a stale netdaq XDP program") != std::string::npos;
    if (stale_ && !replaced)
      return ::testing::AssertionFailure() << "a stale program was attached, the next start did not say it replaced it\n"
                                           << tail(*out);
    replaced_count_ += replaced;
    return ::testing::AssertionSuccess();
  }
  ::testing::AssertionResult nothing_left(pid_t, pid_t) override {
    if (xdp_attached(lab_, lab_.a())) return ::testing::AssertionFailure() << "an XDP program is left on " << lab_.a().veth;
    if (xdp_attached(lab_, lab_.b())) return ::testing::AssertionFailure() << "an XDP program is left on " << lab_.b().veth;
    return ::testing::AssertionSuccess();
  }
  std::string cleanup_summary() const override {
    return std::to_string(stale_count_) + " kills left a stale XDP program, the next start replaced " +
           std::to_string(replaced_count_);
  }

 private:
  NetnsLab lab_;
  Socket sender_;
  bool stale_ = false;
  int stale_count_ = 0, replaced_count_ = 0;
};

class DpdkRig final : public EngineRig {
 public:
  static constexpr unsigned kPages = 64;      // reserved for the test
  static constexpr unsigned kPagesUsed = 32;  // what a run takes (eal.memory_mb 64)

  DpdkRig() : hugepages_(kPages) {
    write_config(run_yaml(
        "memory_regions:\n"
        "  - {name: rx, kind: host, buf_size: 2048, num_bufs: 2048}\n"
        "  - {name: tx, kind: host, buf_size: 2048, num_bufs: 2048}\n"
        "interfaces:\n"
        "  - name: ring\n    engine: dpdk\n    address: net_ring0\n"
        "    rx:\n      queues:\n        - {id: 0, batch_size: 64, ring_depth: 16, memory_regions: [rx]}\n"
        "    tx:\n      destination: udp://10.0.0.2:5000\n      rate_pps: 50000\n"
        "      queues:\n        - {id: 0, batch_size: 64, ring_depth: 16, memory_regions: [tx]}\n"
        "    dpdk: {dst_mac: \"02:00:00:00:00:02\", src_ip: 10.0.0.1, rx_desc: 512, tx_desc: 512}\n" +
        eal_yaml()));
    free_before_ = Hugepages::free_pages();
  }
  const Hugepages& hugepages() const { return hugepages_; }
  bool load(const std::atomic<bool>&) override { return false; }
  ::testing::AssertionResult holds_resources(pid_t victim) override {
    if (runtime_files(victim).empty()) return ::testing::AssertionFailure() << "no EAL runtime directory of " << victim;
    if (Hugepages::free_pages() + kPagesUsed > free_before_)
      return ::testing::AssertionFailure() << "the run holds no " << kPagesUsed << " hugepages: " << Hugepages::free_pages()
                                           << " free, " << free_before_ << " before";
    return ::testing::AssertionSuccess();
  }
  void after_kill(pid_t victim) override {
    stale_ = !runtime_files(victim).empty();
    stale_count_ += stale_;
  }
  ::testing::AssertionResult next_start_works(std::string* out, pid_t* pid) override {
    auto r = self_loop_works(*this, out, pid);
    if (r && stale_ && out->find("left by netdaq process") != std::string::npos) ++removed_count_;
    return r;
  }
  ::testing::AssertionResult nothing_left(pid_t victim, pid_t next) override {
    for (pid_t p : {victim, next})
      if (auto files = runtime_files(p); !files.empty())
        return ::testing::AssertionFailure() << "EAL files of process " << p << " left: " << join(files);
    // The pages of a process are freed as it exits; allow the kernel a moment all the same.
    unsigned now = 0;
    for (auto t0 = Clock::now(); (now = Hugepages::free_pages()) != free_before_ && Clock::now() - t0 < 2s;)
      std::this_thread::sleep_for(10ms);
    if (now != free_before_)
      return ::testing::AssertionFailure() << "free hugepages " << now << ", before " << free_before_;
    return ::testing::AssertionSuccess();
  }
  std::string cleanup_summary() const override {
    return std::to_string(stale_count_) + " kills left an EAL runtime directory, the next start removed " +
           std::to_string(removed_count_) + " of them itself";
  }
  void check_totals() override {
    // The next start's removal of what a killed process left must have run (unless no kill
    // ever left a directory, or other DPDK processes on this machine always got there first).
    if (stale_count_ >= 3) {
      EXPECT_GT(removed_count_, 0) << cleanup_summary();
    }
  }

 private:
  static std::string eal_yaml() {
    std::string args;
    // Where DPDK's drivers are not in their standard place (as DpdkIface does).
    if (const char* drivers = std::getenv("NETDAQ_DPDK_DRIVERS")) args = ", args: [\"-d" + std::string(drivers) + "\"]";
    return "eal: {hugepages: true, memory_mb: 64" + args + "}\n";
  }
  // EAL's files of process pid's default prefix (netdaq-<pid>; not netdaq-<pid>NNN).
  static std::vector<std::string> runtime_files(pid_t pid) {
    const std::string prefix = "netdaq-" + std::to_string(pid);
    std::vector<std::string> mine;
    for (const auto& f : dpdk_files(prefix)) {
      const std::string name = std::filesystem::path(f).filename().string();
      if (name.size() == prefix.size() || !std::isdigit(static_cast<unsigned char>(name[prefix.size()])))
        mine.push_back(f);
    }
    return mine;
  }
  Hugepages hugepages_;
  unsigned free_before_ = 0;
  bool stale_ = false;
  int stale_count_ = 0, removed_count_ = 0;
};

// ---- the kill loop ----

enum class Engine { socket, afxdp, dpdk };
enum class Phase { start, load, shutdown };

struct KillCase {
  Engine engine;
  Phase phase;
  int kills;  // 17 + 17 + 16 = 50 per engine
};

const char* engine_name(Engine e) { return e == Engine::socket ? "Socket" : e == Engine::afxdp ? "Afxdp" : "Dpdk"; }
const char* phase_name(Phase p) {
  return p == Phase::start ? "DuringStart" : p == Phase::load ? "UnderLoad" : "DuringShutdown";
}

// How gtest and ctest name a case ("Socket DuringStart, 17 kills"), not as bytes.
void PrintTo(const KillCase& c, std::ostream* os) {
  *os << engine_name(c.engine) << " " << phase_name(c.phase) << ", " << c.kills << " kills";
}

class FaultKill : public ::testing::TestWithParam<KillCase> {};

// The case's kills, or fewer where NETDAQ_FAULT_KILLS caps them (never below two: the start
// phase checks a kill before and one after the run is ready).
int kills_of(const KillCase& c) {
  const char* cap = std::getenv("NETDAQ_FAULT_KILLS");
  if (!cap || !*cap) return c.kills;
  return std::clamp(static_cast<int>(std::strtol(cap, nullptr, 10)), 2, c.kills);
}

TEST_P(FaultKill, NextStartWorksAndNothingIsLeftBehind) {
  const KillCase c = GetParam();
  if (c.engine == Engine::afxdp) NDQ_REQUIRE_AFXDP();
  if (c.engine == Engine::dpdk) NDQ_REQUIRE_DPDK();
  FaultRng rng;
  const Baseline base;
  std::unique_ptr<EngineRig> rig;
  if (c.engine == Engine::socket) rig = std::make_unique<SocketRig>();
  if (c.engine == Engine::afxdp) rig = std::make_unique<AfxdpRig>();
  if (c.engine == Engine::dpdk) {
    auto d = std::make_unique<DpdkRig>();
    NDQ_REQUIRE(d->hugepages().ok(), d->hugepages().why());
    rig = std::move(d);
  }

  // A clean run first: it must work before any kill, and it measures the windows the random
  // moments fall in (start: spawn to the run loop; shutdown: Ctrl-C to exit) on this machine.
  Clock::duration start_window{}, stop_window{};
  {
    CliRun run(rig->prefix(), rig->victim_args());
    ASSERT_TRUE(run.wait_ready(30s)) << status_text(run.wait(0ms)) << "\n" << tail(run.output());
    const auto ready = Clock::now();
    run.signal(SIGINT);
    const int status = run.wait(30s);
    ASSERT_EQ(status, 0) << tail(run.output());
    start_window = std::max<Clock::duration>(20ms, ready - run.started());
    stop_window = std::max<Clock::duration>(20ms, Clock::now() - ready);
  }
  std::printf("[  WINDOW  ] %s %s: start %lld ms (kills in its first half, or 0..20 ms after ready), shutdown %lld ms, "
              "under load 0..300 ms after traffic is seen\n",
              engine_name(c.engine), phase_name(c.phase), ms_of(start_window), ms_of(stop_window));

  const auto t0 = Clock::now();
  const auto budget = 50s;  // ctest gives each test 60 s
  int done = 0, before_ready = 0, exited_first = 0;
  const int kills = kills_of(c);
  if (kills < c.kills) std::printf("[  KILLS   ] %d of %d (NETDAQ_FAULT_KILLS)\n", kills, c.kills);
  for (int k = 0; k < kills; ++k) {
    if (Clock::now() - t0 > budget) {
      std::printf("[  BUDGET  ] stopped after %d of %d kills: %lld s spent (machine too loaded?)\n", done, kills,
                  static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - t0).count()));
      break;
    }
    const double u = rng.uniform();
    Clock::duration delay{};
    bool was_ready = false;
    CliRun victim(rig->prefix(), rig->victim_args());
    const pid_t victim_pid = victim.pid();
    std::ostringstream what;
    switch (c.phase) {
      case Phase::start:
        // Even kills aim inside the start (its first half as measured), odd ones just after
        // the run said it was ready: both kinds must land (checked after the loop).
        if (k % 2 == 0) {
          delay = std::chrono::duration_cast<Clock::duration>(start_window * u / 2);
          std::this_thread::sleep_until(victim.started() + delay);
        } else {
          ASSERT_TRUE(victim.wait_ready(30s)) << "kill " << k + 1 << ": " << status_text(victim.wait(0ms)) << "\n"
                                              << tail(victim.output());
          std::this_thread::sleep_for(std::chrono::duration_cast<Clock::duration>(20ms * u));
          delay = Clock::now() - victim.started();
        }
        was_ready = victim.ready();
        victim.signal(SIGKILL);
        break;
      case Phase::load: {
        ASSERT_TRUE(victim.wait_ready(30s)) << "kill " << k + 1 << ": " << status_text(victim.wait(0ms)) << "\n"
                                            << tail(victim.output());
        std::atomic<bool> stop{false};
        auto sender = std::async(std::launch::async, [&] { return rig->load(stop); });
        // Traffic is flowing: the run counted packets (its own sender's, or the test's).
        const auto deadline = Clock::now() + 10s;
        while (victim.rx_packets() == 0 && victim.running() && Clock::now() < deadline) std::this_thread::sleep_for(2ms);
        const bool flowing = victim.rx_packets() > 0;
        delay = std::chrono::duration_cast<Clock::duration>(300ms * u);
        std::this_thread::sleep_for(delay);
        const auto holds = rig->holds_resources(victim_pid);
        victim.signal(SIGKILL);
        stop = true;
        sender.get();
        was_ready = true;
        ASSERT_TRUE(flowing) << "kill " << k + 1 << ": no traffic reached the run\n" << tail(victim.output());
        ASSERT_TRUE(holds) << "kill " << k;
        break;
      }
      case Phase::shutdown:
        ASSERT_TRUE(victim.wait_ready(30s)) << "kill " << k + 1 << ": " << status_text(victim.wait(0ms)) << "\n"
                                            << tail(victim.output());
        ASSERT_TRUE(rig->holds_resources(victim_pid)) << "kill " << k;
        victim.signal(SIGINT);
        // u^3: skewed toward the Ctrl-C, since a shutdown can take far less than the window's
        // 20 ms floor (afxdp's: a few ms); with u alone every kill could come after the exit.
        delay = std::chrono::duration_cast<Clock::duration>(stop_window * (u * u * u));
        std::this_thread::sleep_for(delay);
        victim.signal(SIGKILL);
        was_ready = true;
        break;
    }
    const int status = victim.wait(10s);
    what << "kill " << k + 1 << "/" << kills << " (u " << u << ", " << ms_of(delay) << " ms"
         << (c.phase == Phase::start ? (was_ready ? ", after ready" : ", before ready") : "") << "): "
         << status_text(status);
    SCOPED_TRACE(what.str() + "; victim pid " + std::to_string(victim_pid) + ", seed " + std::to_string(fault_seed()));
    // A victim dies of the SIGKILL; only a shutdown may have finished (exit 0) before it came.
    const bool killed = status == 128 + SIGKILL;
    const bool clean_exit = c.phase == Phase::shutdown && status == 0;
    if (!killed && !clean_exit) {
      FAIL() << "the victim did not die of the kill: " << status_text(status) << "\n" << tail(victim.output());
    }
    exited_first += clean_exit;
    before_ready += c.phase == Phase::start && !was_ready;
    rig->after_kill(victim_pid);

    // The next start works...
    std::string next_out;
    pid_t next_pid = -1;
    const auto next_t0 = Clock::now();
    ASSERT_TRUE(rig->next_start_works(&next_out, &next_pid)) << "victim's output:\n" << tail(victim.output(), 1500);
    // ... and nothing is left behind.
    EXPECT_TRUE(rig->nothing_left(victim_pid, next_pid));
    const auto procs = processes_mentioning(rig->config());
    EXPECT_TRUE(procs.empty()) << procs.size() << " processes still run the config, first " << procs.front();
    const auto netns = base.new_netns(rig->own_netns());
    EXPECT_TRUE(netns.empty()) << "network namespaces left: " << join(netns);
    const auto shm = base.new_shm();
    EXPECT_TRUE(shm.empty()) << "/dev/shm entries left: " << join(shm);
    std::printf("[   KILL   ] %s; next start ok in %lld ms\n", what.str().c_str(), ms_of(Clock::now() - next_t0));
    std::fflush(stdout);
    ++done;
    if (HasFailure()) break;
  }
  const auto spent = Clock::now() - t0;
  std::printf("[  FAULTS  ] %s %s: %d kills in %.1f s (seed %llu)%s%s%s\n", engine_name(c.engine), phase_name(c.phase),
              done, std::chrono::duration<double>(spent).count(), static_cast<unsigned long long>(fault_seed()),
              c.phase == Phase::start ? (", " + std::to_string(before_ready) + " before the run was ready").c_str() : "",
              c.phase == Phase::shutdown ? (", " + std::to_string(exited_first) + " exited cleanly before the kill").c_str()
                                         : "",
              rig->cleanup_summary().empty() ? "" : ("; " + rig->cleanup_summary()).c_str());
  RecordProperty("kills", done);
  rig->check_totals();
  // On a machine too loaded to finish in the budget, at least two thirds of the kills must run
  // (of each phase, so of the 50 per engine), and each phase's kills must land where it says.
  if (!HasFailure()) {
    EXPECT_GE(done * 3, kills * 2) << "too few kills in "
                                     << std::chrono::duration_cast<std::chrono::seconds>(budget).count() << " s";
    if (c.phase == Phase::start) {
      EXPECT_GT(before_ready, 0) << "no kill landed before the run was ready";
      EXPECT_LT(before_ready, done) << "no kill landed after the run was ready";
    }
    if (c.phase == Phase::shutdown) {
      EXPECT_LT(exited_first, done) << "no kill landed in a shutdown";
    }
  }

  rig.reset();  // the lab and the hugepages go
  EXPECT_TRUE(base.new_netns({}).empty()) << join(base.new_netns({}));
  // Every eBPF program of a killed process is gone (other netdaq processes on this machine may
  // hold some for a moment: wait for the count to come back).
  size_t bpf = 0;
  for (auto w0 = Clock::now(); (bpf = netdaq_bpf_programs()) > base.bpf && Clock::now() - w0 < 5s;)
    std::this_thread::sleep_for(50ms);
  EXPECT_LE(bpf, base.bpf) << "netdaq eBPF programs: " << bpf << " now, " << base.bpf << " before the test";
}

INSTANTIATE_TEST_SUITE_P(Fault, FaultKill,
                         ::testing::Values(KillCase{Engine::socket, Phase::start, 17},
                                           KillCase{Engine::socket, Phase::load, 17},
                                           KillCase{Engine::socket, Phase::shutdown, 16},
                                           KillCase{Engine::afxdp, Phase::start, 17},
                                           KillCase{Engine::afxdp, Phase::load, 17},
                                           KillCase{Engine::afxdp, Phase::shutdown, 16},
                                           KillCase{Engine::dpdk, Phase::start, 17},
                                           KillCase{Engine::dpdk, Phase::load, 17},
                                           KillCase{Engine::dpdk, Phase::shutdown, 16}),
                         [](const auto& info) {
                           return std::string(engine_name(info.param.engine)) + phase_name(info.param.phase);
                         });

// ---- pool exhaustion ----

// Every sequence number of `got` (make_payload) that is >= first, once each; any duplicate or
// corrupted packet fails.
::testing::AssertionResult intact_and_unique(const std::vector<Bytes>& got, size_t size, uint64_t sent,
                                             std::vector<bool>* seen) {
  seen->assign(sent, false);
  for (const Bytes& b : got) {
    const uint64_t seq = payload_seq(b);
    if (seq >= sent) return ::testing::AssertionFailure() << "sequence " << seq << " was never sent";
    if ((*seen)[seq]) return ::testing::AssertionFailure() << "sequence " << seq << " arrived twice";
    (*seen)[seq] = true;
    if (auto r = check_payload(b, seq, size); !r) return r;
  }
  return ::testing::AssertionSuccess();
}

// A validated Session's pool holds what its queues can keep (ring_depth x batch_size in direct
// mode), so an application holding bursts alone cannot empty it: in direct mode poll() stops
// receiving once every burst is held. With UDP GRO it can: a recvmmsg that brought several
// super-datagrams keeps their slot buffers (up to batch_size - 1) while the first is split
// into fresh buffers, and the segments that find none are counted pool_empty. So: a GSO
// sender, a GRO receiver with a pool of exactly its budget, an application that holds every
// burst it gets while the sender goes on, then releases them all. (The budget leaves those slot
// buffers out: with one burst held pool_in_use is already 19 of 64, and the ring_depth-th poll,
// while the application holds only ring_depth - 1 bursts, runs the pool dry. Should the budget
// ever count them, a pool this small is refused and pool_empty is out of a Session's reach.)
TEST(FaultPool, AppHoldsEveryBurstPoolEmptyCountedThenReceptionRecovers) {
  FaultRng rng;  // nothing random here; printed for the record
  constexpr uint32_t kBatch = 16, kDepth = 4, kPool = kBatch * kDepth;  // exactly the budget
  constexpr size_t kBursts = 40, kPerBurst = 64, kSize = 500;
  constexpr uint64_t kCount = kBursts * kPerBurst;
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = "udp://127.0.0.1:" + std::to_string(port);
  rs.rx_queues = 1;
  rs.batch = kBatch;
  rs.ring_depth = kDepth;
  rs.num_bufs = kPool;
  rs.socket.gro = true;
  rs.socket.rcvbuf = 16u << 20;  // what arrives while the bursts are held waits here, not dropped
  Session rx(rs.build());
  Iface ts;
  ts.destination = rs.address;
  ts.tx_queues = 1;
  ts.batch = kPerBurst;
  ts.ring_depth = 4;
  ts.socket.gso = true;  // each burst one GSO message: one super-datagram at the GRO socket
  Session tx(ts.build());
  auto& q = rx.rx_queue("if0");
  ASSERT_NE(q.stats().mode.find("GRO"), std::string::npos) << "needs UDP GRO: " << q.stats().mode;

  // The sender: kBursts bursts of kPerBurst, a few ms apart (bounded: 2 s per burst at most).
  std::atomic<uint64_t> offered{0};
  auto sender = std::async(std::launch::async, [&] {
    for (size_t b = 0; b < kBursts; ++b) {
      std::vector<Bytes> burst;
      for (size_t i = 0; i < kPerBurst; ++i) burst.push_back(make_payload(b * kPerBurst + i, kSize));
      const size_t n = send_payloads(tx.tx_queue("if0"), burst, 2000ms);
      offered += n;
      if (n < burst.size()) break;
      std::this_thread::sleep_for(3ms);
    }
  });
  // Hold: wait until several super-datagrams wait in the socket, then poll and keep every burst.
  for (auto w0 = Clock::now(); offered < 4 * kPerBurst && Clock::now() - w0 < 5s;) std::this_thread::sleep_for(1ms);
  std::vector<RxBurst> held;
  std::vector<Bytes> got;
  for (auto h0 = Clock::now(); held.size() < kDepth && Clock::now() - h0 < 5s;) {
    if (RxBurst b = q.poll()) {
      for (const Packet& p : b) got.push_back(bytes_of(p));
      held.push_back(std::move(b));
    } else {
      std::this_thread::sleep_for(100us);
    }
  }
  ASSERT_EQ(held.size(), kDepth) << describe(q.stats());
  // Every burst is held: poll() gives nothing more while the sender goes on.
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(q.poll()) << "a burst beyond ring_depth";
  const QueueStats held_stats = q.stats();
  EXPECT_EQ(held_stats.pool_in_use, static_cast<int64_t>(kPool)) << "the pool is empty: " << describe(held_stats);
  EXPECT_GT(held_stats.drop(DropReason::pool_empty), 0u) << describe(held_stats);
  const uint64_t released_at = offered.load();  // everything from here on is sent after the release
  held.clear();

  // Release: reception recovers; collect until the sender is done and the queue quiet.
  const auto deadline = Clock::now() + 20s;
  auto last = Clock::now();
  while (Clock::now() < deadline) {
    if (RxBurst b = q.poll()) {
      for (const Packet& p : b) got.push_back(bytes_of(p));
      last = Clock::now();
    } else {
      if (sender.wait_for(0s) == std::future_status::ready && Clock::now() - last > 200ms) break;
      std::this_thread::sleep_for(50us);
    }
  }
  sender.get();
  const QueueStats st = q.stats();
  const QueueStats sent_stats = tx.tx_queue("if0").stats();
  EXPECT_EQ(offered.load(), kCount);
  EXPECT_TRUE(sender_accounted(offered.load(), sent_stats));
  const uint64_t sent = sent_stats.packets;
  EXPECT_EQ(sent, kCount);
  std::vector<bool> seen;
  ASSERT_TRUE(intact_and_unique(got, kSize, sent, &seen));
  EXPECT_TRUE(all_accounted(sent, got.size(), {st}));
  EXPECT_EQ(st.packets, got.size());
  EXPECT_EQ(st.total_drops(), st.drop(DropReason::pool_empty) + st.drop(DropReason::kernel)) << describe(st);
  EXPECT_EQ(st.drop(DropReason::pool_empty), held_stats.drop(DropReason::pool_empty))
      << "pool_empty after the release: " << describe(st);
  EXPECT_EQ(st.pool_in_use, 0);
  size_t after = 0;
  for (uint64_t s = released_at; s < sent; ++s) after += seen[s];
  EXPECT_GT(sent, released_at) << "the sender finished while the bursts were held";
  EXPECT_EQ(after, sent - released_at) << "every packet sent after the release arrives; " << describe(st);
  std::printf("[   POOL   ] sent %llu, received %zu, pool_empty %llu, kernel %llu, %llu sent after the release\n",
              static_cast<unsigned long long>(sent), got.size(),
              static_cast<unsigned long long>(st.drop(DropReason::pool_empty)),
              static_cast<unsigned long long>(st.drop(DropReason::kernel)),
              static_cast<unsigned long long>(sent - released_at));
}

// ---- a receiver descheduled for 100 ms ----

struct DeschedCase {
  PollMode mode;
  DropReason counted;  // what the pause's losses must be counted as
};

void PrintTo(const DeschedCase& c, std::ostream* os) { *os << to_string(c.mode) << " mode, " << to_string(c.counted); }

class FaultDescheduled : public ::testing::TestWithParam<DeschedCase> {};

// A paced sender (known count) to one rx queue; the thread that polls it stops for 100 ms in
// the middle. Direct mode: the socket buffer (small) overflows, the kernel drops. Worker mode:
// the worker keeps reading (large socket buffer), its ring fills, ring_full.
TEST_P(FaultDescheduled, LossesCountedUnderTheirReasonAndReceptionRecovers) {
  const DeschedCase c = GetParam();
  FaultRng rng;
  constexpr uint64_t kCount = 4000;
  constexpr double kPps = 10000;  // 400 ms of traffic; the pause misses about 1000 datagrams
  constexpr size_t kSize = 1000;
  const uint64_t pause_after = 800 + static_cast<uint64_t>(rng.uniform() * 400);  // received before the pause
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = "udp://127.0.0.1:" + std::to_string(port);
  rs.rx_queues = 1;
  rs.mode = c.mode;
  rs.batch = 32;
  rs.ring_depth = 16;
  rs.timeout_us = 200;
  rs.socket.gro = false;  // one datagram at a time: every kernel drop is one datagram
  // Direct: room for about 40 ms of traffic, so the 100 ms pause overflows it. Worker: room for
  // seconds, so only the ring can overflow.
  rs.socket.rcvbuf = c.mode == PollMode::direct ? 512u << 10 : 16u << 20;
  Session rx(rs.build());
  auto& q = rx.rx_queue("if0");

  std::atomic<uint64_t> sent{0};
  std::atomic<bool> stop{false};
  auto sender = std::async(std::launch::async, [&] {
    Socket s = Socket::udp();
    const auto t0 = Clock::now();
    const auto period = std::chrono::duration<double>(1.0 / kPps);
    for (uint64_t i = 0; i < kCount && !stop && Clock::now() - t0 < 20s; ++i) {
      std::this_thread::sleep_until(t0 + std::chrono::duration_cast<Clock::duration>(period * static_cast<double>(i)));
      if (!s.send_to("127.0.0.1", port, make_payload(i, kSize))) break;
      sent = i + 1;
    }
  });

  std::vector<Bytes> got;
  uint64_t pause_from = 0, pause_to = 0;  // what the sender had sent when the pause began / ended
  bool paused = false;
  const auto deadline = Clock::now() + 20s;
  auto last = Clock::now();
  while (Clock::now() < deadline) {
    if (!paused && got.size() >= pause_after) {
      pause_from = sent;
      std::this_thread::sleep_for(100ms);  // descheduled: no poll for 100 ms
      pause_to = sent;
      paused = true;
    }
    if (RxBurst b = q.poll()) {
      for (const Packet& p : b) got.push_back(bytes_of(p));
      last = Clock::now();
    } else {
      if (sender.wait_for(0s) == std::future_status::ready && Clock::now() - last > 300ms) break;
      std::this_thread::sleep_for(20us);
    }
  }
  stop = true;
  sender.get();
  const QueueStats st = q.stats();
  ASSERT_TRUE(paused) << "only " << got.size() << " packets arrived; " << describe(st);
  EXPECT_EQ(sent.load(), kCount);
  std::vector<bool> seen;
  ASSERT_TRUE(intact_and_unique(got, kSize, sent, &seen));
  // Exact accounting, and every loss counted under the reason of this mode.
  EXPECT_TRUE(all_accounted(sent, got.size(), {st}));
  EXPECT_EQ(st.packets, got.size());
  EXPECT_GT(st.drop(c.counted), 0u) << describe(st);
  EXPECT_EQ(st.total_drops(), st.drop(c.counted)) << "losses under another reason: " << describe(st);
  // The losses include datagrams sent during the pause.
  size_t lost_in_pause = 0;
  for (uint64_t s = pause_from; s < pause_to; ++s) lost_in_pause += !seen[s];
  EXPECT_GT(lost_in_pause, 0u) << "sent during the pause: " << pause_from << ".." << pause_to;
  // Reception recovered: what was sent after the pause arrives (most of it; a busy machine may
  // deschedule the receiver again for a moment, and those losses are counted too).
  size_t after = 0;
  for (uint64_t s = pause_to; s < sent; ++s) after += seen[s];
  EXPECT_GT(sent.load(), pause_to + 500) << "the sender finished during the pause";
  EXPECT_GE(after * 2, sent - pause_to) << after << " of " << sent - pause_to << " sent after the pause arrived; "
                                        << describe(st);
  std::printf("[  PAUSE   ] %s: sent %llu, received %zu, %s %llu (%zu of the %llu sent during the pause), "
              "%zu of %llu sent after it arrived\n",
              to_string(c.mode), static_cast<unsigned long long>(sent.load()), got.size(), to_string(c.counted),
              static_cast<unsigned long long>(st.drop(c.counted)), lost_in_pause,
              static_cast<unsigned long long>(pause_to - pause_from), after,
              static_cast<unsigned long long>(sent - pause_to));
}

INSTANTIATE_TEST_SUITE_P(Fault, FaultDescheduled,
                         ::testing::Values(DeschedCase{PollMode::direct, DropReason::kernel},
                                           DeschedCase{PollMode::worker, DropReason::ring_full}),
                         [](const auto& info) {
                           return info.param.mode == PollMode::direct ? std::string("DirectModeKernel")
                                                                      : std::string("WorkerModeRingFull");
                         });

}  // namespace
