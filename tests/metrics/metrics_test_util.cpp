#include "metrics_test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace ndqtest {

namespace fs = std::filesystem;

std::string loopback_config(uint16_t port, const LoopbackRun& run) {
  const std::string p = std::to_string(port);
  std::string y = "memory_regions:\n"
                  "  - {name: rx_bufs, kind: host, buf_size: 2048, num_bufs: " + std::to_string(run.rx_bufs) + "}\n"
                  "  - {name: tx_bufs, kind: host, buf_size: 2048, num_bufs: " + std::to_string(run.tx_bufs) + "}\n"
                  "interfaces:\n"
                  "  - name: receiver\n"
                  "    engine: socket\n"
                  "    address: udp://127.0.0.1:" + p + "\n"
                  "    rx:\n"
                  "      queues:\n"
                  "        - {id: 0, mode: direct, batch_size: 64, memory_regions: [rx_bufs]}\n";
  if (run.rcvbuf) y += "    socket: {rcvbuf: " + std::to_string(run.rcvbuf) + "}\n";
  y += "  - name: sender\n"
       "    engine: socket\n"
       "    tx:\n"
       "      destination: udp://127.0.0.1:" + p + "\n";
  if (run.rate_mbps) y += "      rate_mbps: " + std::to_string(run.rate_mbps) + "\n";
  y += "      queues:\n"
       "        - {id: 0, batch_size: 64, ring_depth: 8, memory_regions: [tx_bufs]}\n";
  return y + run.run_block;
}

uint16_t free_port(int type) {
  const int fd = ::socket(AF_INET, type, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  uint16_t port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) ::close(fd);
  return port;
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "netdaq-metrics-test.XXXXXX").string();
  if (mkdtemp(tmpl.data())) path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
}

Child::Child(const std::vector<std::string>& argv, const fs::path& log) : log_(log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
}

Child::~Child() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
}

bool Child::running() {
  if (pid_ <= 0 || status_) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return false;
  }
  return true;
}

void Child::signal(int sig) {
  if (running()) ::kill(pid_, sig);
}

std::optional<int> Child::wait_for(std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (running() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (pid_ <= 0) return 127;
  return status_;
}

std::string Child::log() const { return read_file(log_); }

HttpReply http_get(const std::string& host, uint16_t port, const std::string& path) {
  httplib::Client cli(host, port);
  cli.set_connection_timeout(2, 0);
  cli.set_read_timeout(5, 0);
  HttpReply r;
  if (auto res = cli.Get(path.c_str())) {
    r.status = res->status;
    r.body = res->body;
    r.content_type = res->get_header_value("Content-Type");
  }
  return r;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
}

}  // namespace ndqtest
