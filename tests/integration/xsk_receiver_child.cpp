#include "xsk_receiver_child.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "netdaq/session.h"
#include "netns_lab.h"
#include "xsk_frames_scenario.h"

extern char** environ;

namespace ndqtest {

using netdaq::gpu::XskFrameReceiver;

namespace {

constexpr const char* kRole = "NDQ_XSK_CHILD";
constexpr int kReadyFd = 100;  // the child's end of the pipe it reports on

// The child: "ns veth port gpu|cpu". Reports "R" once the receiver runs (or "E<why>"), then
// takes frames until killed. Never returns.
[[noreturn]] void run_child(const std::string& spec) {
  std::istringstream in(spec);
  std::string ns, veth, driver;
  uint16_t port = 0;
  in >> ns >> veth >> port >> driver;
  try {
    NetnsLab::enter(ns);
    const bool gpu = driver == "gpu";
    netdaq::Session session(afxdp_port_config(veth, port, gpu ? netdaq::MemoryKind::mapped : netdaq::MemoryKind::host));
    XskFrameReceiver rx(session, "x0", xsk_scenario_reorder(8), gpu ? XskFrameReceiver::Driver::gpu : XskFrameReceiver::Driver::cpu);
    if (write(kReadyFd, "R", 1) != 1) _exit(2);
    for (;;) {
      while (netdaq::gpu::Frame f = rx.next_frame()) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  } catch (const std::exception& e) {
    const std::string why = std::string("E") + e.what();
    (void)!write(kReadyFd, why.data(), why.size());
    _exit(1);
  }
}

// Takes the child's role before any test runs, where NDQ_XSK_CHILD says so.
struct ChildRole : ::testing::Environment {
  void SetUp() override {
    if (const char* spec = std::getenv(kRole)) run_child(spec);
  }
};
[[maybe_unused]] ::testing::Environment* const kChildRole = ::testing::AddGlobalTestEnvironment(new ChildRole);

}  // namespace

ReceiverChild::ReceiverChild(const std::string& ns, const std::string& veth, uint16_t port,
                             XskFrameReceiver::Driver driver) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  // The same binary, running only the current test (the environment above intercepts it).
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string filter = std::string("--gtest_filter=") + t->test_suite_name() + "." + t->name();
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  env.push_back(std::string(kRole) + "=" + ns + " " + veth + " " + std::to_string(port) + " " +
                (driver == XskFrameReceiver::Driver::gpu ? "gpu" : "cpu"));
  std::vector<char*> envp, argv;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe", arg = filter;
  argv = {self.data(), arg.data(), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], kReadyFd);  // dup2 clears O_CLOEXEC on the copy
  const int rc = posix_spawn(&pid_, self.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(rc));
  }
  pollfd p{fds[0], POLLIN, 0};
  char buf[512] = {};
  ssize_t n = 0;
  if (poll(&p, 1, 60000) == 1) n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  if (n >= 1 && buf[0] == 'R') return;
  kill();
  throw std::runtime_error(n > 1 ? std::string("the receiver child failed: ") + (buf + 1)
                                 : std::string("the receiver child did not report within 60 s"));
}

ReceiverChild::~ReceiverChild() { kill(); }

bool ReceiverChild::kill() {
  if (pid_ < 0) return false;
  int status = 0;
  const bool running = waitpid(pid_, &status, WNOHANG) == 0;
  if (running) {
    ::kill(pid_, SIGKILL);
    (void)waitpid(pid_, &status, 0);
  }
  pid_ = -1;
  return running;
}

}  // namespace ndqtest
