#include "peer_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace ndqtest {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

std::string join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace

PeerProcess::PeerProcess(const std::string& ns, const std::vector<std::string>& argv) {
  std::vector<std::string> full;
  if (!ns.empty()) full = {"nsenter", "--net=/run/netns/" + ns, "--"};
  // Line-buffered stdout: readiness is read from the output while the peer runs. stdbuf
  // preloads a library, which an ASan-built peer (netdaq in the sanitizer pass) refuses
  // unless told not to check the link order.
  const char* asan = std::getenv("ASAN_OPTIONS");
  full.insert(full.end(), {"env", std::string("ASAN_OPTIONS=") + (asan && *asan ? std::string(asan) + ":" : "") +
                                      "verify_asan_link_order=0",
                           "stdbuf", "-oL", "-eL"});
  full.insert(full.end(), argv.begin(), argv.end());
  command_ = join(full);

  char tmpl[] = "/tmp/netdaq-peer-XXXXXX";
  const int ofd = mkstemp(tmpl);
  if (ofd < 0) throw std::runtime_error(std::string("mkstemp: ") + std::strerror(errno));
  ::close(ofd);
  out_path_ = tmpl;
  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path_.c_str(), O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> args;
  for (auto& a : full) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  stdin_fd_ = in[1];
  if (rc != 0) {
    pid_ = -1;
    close_stdin();
    unlink(out_path_.c_str());
    throw std::runtime_error("cannot start " + full[0] + ": " + std::strerror(rc));
  }
}

PeerProcess::~PeerProcess() {
  if (pid_ > 0) {
    close_stdin();
    if (wait(2000ms) == -1) stop(SIGINT, 2000ms);
  }
  close_stdin();
  unlink(out_path_.c_str());
}

void PeerProcess::close_stdin() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  stdin_fd_ = -1;
}

int PeerProcess::wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return status_;
  const auto deadline = Clock::now() + timeout;
  while (true) {
    int st = 0;
    const pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      status_ = r < 0 ? 255 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
      pid_ = -1;
      return status_;
    }
    if (Clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(5ms);
  }
}

int PeerProcess::stop(int sig, std::chrono::milliseconds grace) {
  if (pid_ <= 0) return status_;
  kill(pid_, sig);
  if (wait(grace) == -1) {
    kill(pid_, SIGKILL);
    wait(5000ms);
  }
  return status_;
}

bool PeerProcess::wait_for_output(const std::string& text, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (output().find(text) != std::string::npos) return true;
    if (wait(0ms) != -1 || Clock::now() >= deadline) return output().find(text) != std::string::npos;
    std::this_thread::sleep_for(10ms);
  }
}

std::string PeerProcess::output() const {
  std::ifstream f(out_path_, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace ndqtest
