// PeerProcess: a program run as a child process in a network namespace, its output captured
// (the integration tests' peers, the GPU tests' `netdaq run`, the replay tests).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace ndqtest {

// A child process in a network namespace: argv run through `nsenter --net` (ns empty: this
// namespace), stdout + stderr line-buffered (stdbuf) into a temporary file, stdin a pipe.
// Closing stdin (or this process dying) gives the child EOF. The destructor stops it
// (stdin EOF, SIGINT, SIGKILL, each with a grace period) and waits for it.
class PeerProcess {
 public:
  PeerProcess(const std::string& ns, const std::vector<std::string>& argv);
  ~PeerProcess();
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  void close_stdin();
  // Waits up to timeout for the exit; returns the exit status (128 + signal when killed),
  // or -1 while it still runs.
  int wait(std::chrono::milliseconds timeout);
  // Sends sig, waits up to grace; then SIGKILL. Returns the exit status.
  int stop(int sig, std::chrono::milliseconds grace);
  // Waits (bounded) until the output contains text; false if it exited first or timed out.
  bool wait_for_output(const std::string& text, std::chrono::milliseconds timeout);
  std::string output() const;
  const std::string& command() const { return command_; }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  int stdin_fd_ = -1;
  std::string out_path_;
  std::string command_;
};

}  // namespace ndqtest
