// `netdaq bench --ping-pong --role server|client` against a real peer, on loopback:
// `sockperf ping-pong` (Debian's sockperf) as the client of netdaq's echo server, so that
// netdaq's server is checked by the anchor it is measured against (every message sockperf
// sent came back, none lost, counts equal on both ends), and netdaq's own client and server
// as two processes. In CI a missing sockperf fails (never skips).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../require_env.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The first integer after `"key": ` in JSON text, or -1.
long long json_int(const std::string& j, const std::string& key) {
  std::smatch m;
  return std::regex_search(j, m, std::regex("\"" + key + "\": ([0-9]+)")) ? std::stoll(m[1]) : -1;
}

bool have(const char* tool) {
  return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0;
}

// Exit status of a shell command (bounded by its own `timeout`).
int sh(const std::string& cmd) {
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

// Ports of this process (tests of several binaries run side by side).
uint32_t base_port() { return 40000 + static_cast<uint32_t>(getpid() % 5000) * 4; }

class PingPongPeer : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ndq-pingpong-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (server_ > 0) {
      kill(server_, SIGKILL);
      waitpid(server_, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  // netdaq's echo server in the background (ends 1 s after the last message; 30 s at most).
  void start_server(const std::vector<std::string>& extra) {
    const fs::path out = dir_ / "server.json", err = dir_ / "server.err";
    std::string cmd = std::string("exec timeout -k 5 60 ") + NETDAQ_CLI +
                      " bench --ping-pong --role server --idle-timeout 1 --duration 30 --no-pin --quiet --json";
    for (const auto& a : extra) cmd += " " + a;
    cmd += " >" + out.string() + " 2>" + err.string();
    server_ = fork();
    ASSERT_GE(server_, 0);
    if (server_ == 0) {
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    usleep(300'000);  // its socket bound before the first message
  }

  int wait_server() {
    int st = 0;
    waitpid(server_, &st, 0);
    server_ = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  }

  fs::path dir_;
  pid_t server_ = -1;
};

TEST_F(PingPongPeer, SockperfClientAgainstNetdaqServer) {
  NDQ_REQUIRE(have("sockperf"), "sockperf not installed (apt-get install sockperf)");
  const uint32_t p = base_port(), back = p + 1;
  start_server({"--echo-format sockperf", "--size 1024", "--address 127.0.0.1:" + std::to_string(p),
                "--echo-destination 127.0.0.1:" + std::to_string(back)});
  const fs::path out = dir_ / "sockperf.out";
  const int rc = sh("timeout -k 5 30 sockperf ping-pong -i 127.0.0.1 -p " + std::to_string(p) + " -m 200 -t 1 " +
                    "--nonblocked --client_port " + std::to_string(back) + " >" + out.string() + " 2>&1");
  const int src = wait_server();
  const std::string s = slurp(out), j = slurp(dir_ / "server.json");
  ASSERT_EQ(rc, 0) << s;
  EXPECT_EQ(src, 0) << j << slurp(dir_ / "server.err");

  std::smatch total, valid, drops;
  ASSERT_TRUE(std::regex_search(s, total, std::regex(R"(\[Total Run\].*SentMessages=([0-9]+); ReceivedMessages=([0-9]+))")))
      << s;
  ASSERT_TRUE(std::regex_search(s, valid, std::regex(R"(\[Valid Duration\].*SentMessages=([0-9]+); ReceivedMessages=([0-9]+))")))
      << s;
  ASSERT_TRUE(std::regex_search(s, drops, std::regex(R"(# dropped messages = ([0-9]+); # duplicated messages = ([0-9]+); # out-of-order messages = ([0-9]+))")))
      << s;
  const long long sent = std::stoll(total[1]), received = std::stoll(total[2]);
  EXPECT_GT(sent, 100) << s;  // microseconds a round trip; >= 1000 when idle, far fewer beside a build on 2 cores
  EXPECT_EQ(std::stoll(valid[1]), std::stoll(valid[2])) << s;
  EXPECT_EQ(drops[1], "0");
  EXPECT_EQ(drops[2], "0");
  EXPECT_EQ(drops[3], "0");
  // Every message sockperf sent reached netdaq and was echoed; sockperf got each back but at
  // most the one in flight when its timer ended the run.
  EXPECT_EQ(json_int(j, "received"), sent) << j;
  EXPECT_EQ(json_int(j, "echoed"), sent) << j;
  EXPECT_EQ(json_int(j, "malformed"), 0) << j;
  EXPECT_EQ(json_int(j, "unsent"), 0) << j;
  EXPECT_GE(received, sent - 1) << s;
  EXPECT_LE(received, sent) << s;
}

// A server expecting netdaq payloads echoes nothing of sockperf's and counts each one
// malformed: exit status 2 (the check above can fail).
TEST_F(PingPongPeer, NetdaqServerCountsForeignMessagesMalformed) {
  NDQ_REQUIRE(have("sockperf"), "sockperf not installed (apt-get install sockperf)");
  const uint32_t p = base_port() + 2;
  start_server({"--size 1024", "--address 127.0.0.1:" + std::to_string(p),
                "--echo-destination 127.0.0.1:" + std::to_string(p + 1)});
  const fs::path out = dir_ / "sockperf.out";
  sh("timeout -k 5 30 sockperf ping-pong -i 127.0.0.1 -p " + std::to_string(p) + " -m 64 -t 1 --client_port " +
     std::to_string(p + 1) + " >" + out.string() + " 2>&1");
  const int src = wait_server();
  const std::string j = slurp(dir_ / "server.json");
  EXPECT_EQ(src, 2) << j;
  EXPECT_GT(json_int(j, "malformed"), 0) << j;
  EXPECT_EQ(json_int(j, "echoed"), 0) << j;
}

// netdaq's client and server as two processes (as the benchmark runs them): every message back.
TEST_F(PingPongPeer, NetdaqClientAndServerAsTwoProcesses) {
  const uint32_t p = base_port() + 2;  // after the test above's server ended
  start_server({"--size 64", "--address 127.0.0.1:" + std::to_string(p + 1000),
                "--echo-destination 127.0.0.1:" + std::to_string(p + 1001)});
  const fs::path out = dir_ / "client.json";
  const int rc = sh(std::string("timeout -k 5 30 ") + NETDAQ_CLI + " bench --ping-pong --role client --size 64 " +
                    "--count 2000 --no-pin --quiet --json --address 127.0.0.1:" + std::to_string(p + 1000) +
                    " --echo-address 127.0.0.1:" + std::to_string(p + 1001) + " >" + out.string() + " 2>&1");
  const int src = wait_server();
  const std::string c = slurp(out), j = slurp(dir_ / "server.json");
  ASSERT_EQ(rc, 0) << c;
  EXPECT_EQ(src, 0) << j;
  EXPECT_EQ(json_int(c, "messages"), 2000) << c;
  EXPECT_EQ(json_int(c, "returned"), 2000) << c;
  EXPECT_EQ(json_int(c, "loss"), 0) << c;
  EXPECT_NE(c.find("\"p99.9\""), std::string::npos) << c;
  EXPECT_EQ(json_int(j, "echoed"), 2001) << j;  // and the uncounted warm-up message
  EXPECT_EQ(json_int(j, "malformed"), 0) << j;
}

}  // namespace
