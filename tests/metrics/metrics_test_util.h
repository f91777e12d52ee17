// Helpers of the metrics tests: the CI rule for missing tools (tests/require_env.h), free
// ports, a temporary directory, child processes that are always killed, HTTP GETs.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "../require_env.h"

namespace ndqtest {


// A port that was free a moment ago (bound to port 0 on 127.0.0.1, then closed).
uint16_t free_port(int type);

// A fresh directory under /tmp, removed with everything in it when this goes.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

// A child process, stdout and stderr to a file. Killed (SIGKILL) and reaped when this goes.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::filesystem::path& log);
  ~Child();
  bool running();
  void signal(int sig);
  // Exit code (128 + signal when killed), or nullopt if it is still running at the deadline.
  std::optional<int> wait_for(std::chrono::milliseconds timeout);
  std::string log() const;  // what it printed so far

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::filesystem::path log_;
};

// GET http://host:port/path: status and body; status 0 when it could not connect.
struct HttpReply {
  int status = 0;
  std::string body;
  std::string content_type;
};
HttpReply http_get(const std::string& host, uint16_t port, const std::string& path);

// A socket-engine loopback config on 127.0.0.1:port: a receiver (direct mode) and a sender.
struct LoopbackRun {
  uint32_t rx_bufs = 4096;
  uint32_t tx_bufs = 1024;
  uint32_t rcvbuf = 0;       // socket.rcvbuf of the receiver; 0: the engine's default
  uint32_t rate_mbps = 0;    // the sender's rate; 0: unpaced
  std::string run_block;     // a `run:` block for netdaq run, or none for a library session
};
std::string loopback_config(uint16_t port, const LoopbackRun& run = {});

std::string read_file(const std::filesystem::path& p);
void write_file(const std::filesystem::path& p, const std::string& text);

}  // namespace ndqtest
