#include "netns_lab.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "net/mac_address.h"

extern char** environ;

namespace ndqtest {

namespace {
constexpr const char* kPrefix = "ndq";  // namespaces: ndq<pid>_<n>a / b; veths: vq<pid>_<n>a / b
std::atomic<int> g_counter{0};

void must(const std::vector<std::string>& argv) {
  std::string out;
  const int rc = run_command(argv, &out);
  if (rc != 0) {
    std::string cmd;
    for (auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw std::runtime_error("netns lab: '" + cmd + "' failed (status " + std::to_string(rc) + "): " + out);
  }
}

// Removes namespaces of earlier test processes that died without cleaning up.
void remove_stale() {
  DIR* d = opendir("/run/netns");
  if (!d) return;
  std::vector<std::string> stale;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(kPrefix, 0) != 0) continue;
    const auto us = name.find('_');
    if (us == std::string::npos) continue;
    const int pid = std::atoi(name.substr(3, us - 3).c_str());
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) stale.push_back(name);
  }
  closedir(d);
  for (auto& n : stale) run_command({"ip", "netns", "del", n});
}
}  // namespace

int run_command(const std::vector<std::string>& argv, std::string* out) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(pipefd[1]);
  std::string text;
  if (rc == 0) {
    char buf[4096];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
      if (n > 0) text.append(buf, static_cast<size_t>(n));
  }
  close(pipefd[0]);
  if (out) *out = rc == 0 ? text : std::string("cannot run ") + argv[0] + ": " + std::strerror(rc);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool NetnsLab::supported(std::string* why) {
  if (geteuid() != 0) {
    if (why) *why = "network namespaces need root (run the integration tests as root)";
    return false;
  }
  std::string out;
  if (run_command({"ip", "-V"}, &out) != 0) {
    if (why) *why = "the 'ip' command (iproute2) is missing: " + out;
    return false;
  }
  return true;
}

void NetnsLab::enter(const std::string& ns) {
  const std::string path = "/run/netns/" + ns;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("netns lab: cannot open " + path + ": " + std::strerror(errno));
  const int rc = setns(fd, CLONE_NEWNET);
  const int err = errno;
  close(fd);
  if (rc != 0) throw std::runtime_error("netns lab: setns(" + ns + "): " + std::strerror(err));
}

// argv run in network namespace ns. nsenter enters only the network namespace; `ip -n` and
// `ip netns exec` also remount / and /sys, which fails where / is not a mount point (a
// chroot, some containers).
static std::vector<std::string> in_ns(const std::string& ns, std::vector<std::string> argv) {
  std::vector<std::string> full{"nsenter", "--net=/run/netns/" + ns, "--"};
  full.insert(full.end(), std::make_move_iterator(argv.begin()), std::make_move_iterator(argv.end()));
  return full;
}

NetnsLab::NetnsLab(unsigned queues) {
  remove_stale();
  const int n = g_counter.fetch_add(1);
  const std::string id = std::to_string(getpid()) + "_" + std::to_string(n);
  const std::string net = std::to_string(n % 250);
  a_ = {kPrefix + id + "a", "vq" + id + "a", "10.199." + net + ".1", "fd00:199:" + net + "::1"};
  b_ = {kPrefix + id + "b", "vq" + id + "b", "10.199." + net + ".2", "fd00:199:" + net + "::2"};
  try {
    must({"ip", "netns", "add", a_.ns});
    made_a_ = true;
    must({"ip", "netns", "add", b_.ns});
    made_b_ = true;
    const std::string nq = std::to_string(queues);
    must({"ip", "link", "add", a_.veth, "netns", a_.ns, "numtxqueues", nq, "numrxqueues", nq, "type", "veth", "peer",
          "name", b_.veth, "netns", b_.ns, "numtxqueues", nq, "numrxqueues", nq});
    for (const Side* s : {&a_, &b_}) {
      must(in_ns(s->ns, {"ip", "link", "set", "lo", "up"}));
      must(in_ns(s->ns, {"ip", "addr", "add", s->ip4 + "/24", "dev", s->veth}));
      must(in_ns(s->ns, {"ip", "addr", "add", s->ip6 + "/64", "dev", s->veth, "nodad"}));
      must(in_ns(s->ns, {"ip", "link", "set", s->veth, "up"}));
    }
    // Wait (bounded) until both ends report carrier.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (const Side* s : {&a_, &b_}) {
      std::string out;
      while (true) {
        run_command(in_ns(s->ns, {"ip", "-o", "link", "show", s->veth}), &out);
        if (out.find("LOWER_UP") != std::string::npos) break;
        if (std::chrono::steady_clock::now() > deadline)
          throw std::runtime_error("netns lab: " + s->veth + " did not come up: " + out);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  } catch (...) {
    teardown();
    throw;
  }
}

NetnsLab::~NetnsLab() { teardown(); }

std::string NetnsLab::mac(const Side& s) const {
  std::string out;
  if (run_command(in_ns(s.ns, {"ip", "-o", "link", "show", "dev", s.veth}), &out) != 0)
    throw std::runtime_error("netns lab: ip link show " + s.veth + ": " + out);
  const size_t at = out.find("link/ether ");
  if (at == std::string::npos) throw std::runtime_error("netns lab: no MAC in: " + out);
  return out.substr(at + 11, 17);
}

void NetnsLab::set_mtu(int mtu) const {
  for (const Side* s : {&a_, &b_}) {
    std::string out;
    if (run_command(in_ns(s->ns, {"ip", "link", "set", "dev", s->veth, "mtu", std::to_string(mtu)}), &out) != 0)
      throw std::runtime_error("netns lab: ip link set " + s->veth + " mtu " + std::to_string(mtu) + ": " + out);
  }
}

std::array<uint8_t, 6> mac_bytes(const std::string& text) {
  const auto mac = netdaq::detail::parse_mac(text);
  if (!mac) throw std::runtime_error("bad MAC " + text);
  return *mac;
}

int open_capture(NetnsLab& lab, const NetnsLab::Side& side, uint16_t protocol, int rcvbuf) {
  return lab.run_in(side.ns, [&] {
    const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(protocol));
    if (fd < 0) throw std::runtime_error("AF_PACKET socket");
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);
    sockaddr_ll sll{};
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(protocol);
    sll.sll_ifindex = static_cast<int>(if_nametoindex(side.veth.c_str()));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0) {
      ::close(fd);
      throw std::runtime_error("bind AF_PACKET");
    }
    return fd;
  });
}

std::vector<std::vector<std::byte>> capture_frames(int fd, size_t count, std::chrono::milliseconds timeout,
                                                   const std::function<bool(std::span<const std::byte>)>& keep) {
  std::vector<std::vector<std::byte>> out;
  std::byte buf[9000];
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool settling = false;
  while (std::chrono::steady_clock::now() < deadline) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    else if (keep(std::span<const std::byte>(buf, static_cast<size_t>(n))))
      out.emplace_back(buf, buf + n);
    if (!settling && out.size() >= count) {
      settling = true;
      deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    }
  }
  return out;
}

void NetnsLab::teardown() noexcept {
  // Deleting a namespace destroys its end of the veth pair, and with it the other end.
  if (made_a_) run_command({"ip", "netns", "del", a_.ns});
  if (made_b_) run_command({"ip", "netns", "del", b_.ns});
  made_a_ = made_b_ = false;
}

int NetnsLab::exec_in(const std::string& ns, const std::vector<std::string>& argv, std::string* out) const {
  return run_command(in_ns(ns, argv), out);
}

}  // namespace ndqtest
