// Runs the netdaq CLI binary and checks its output and exit codes (docs/cli.md).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../require_env.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

struct Result {
  int status = -1;  // exit code, or 128 + signal
  std::string out;  // stdout + stderr
};

// Starts the CLI with args; returns its pid and the read end of its output pipe.
pid_t spawn(const std::vector<std::string>& args, int* out_fd) {
  int p[2];
  if (pipe(p) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    dup2(p[1], 2);
    close(p[0]);
    close(p[1]);
    std::vector<char*> argv;
    std::string exe = NETDAQ_CLI;
    argv.push_back(exe.data());
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  close(p[1]);
  *out_fd = p[0];
  return pid;
}

// Reads until EOF or the deadline, then waits for the process.
Result finish(pid_t pid, int fd, std::chrono::seconds timeout, std::string prefix = {}) {
  Result r;
  r.out = std::move(prefix);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      r.out += "\n<timed out>";
      break;
    }
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    r.out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  int st = 0;
  waitpid(pid, &st, 0);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

Result run_cli(const std::vector<std::string>& args, std::chrono::seconds timeout = std::chrono::seconds(60)) {
  int fd = -1;
  const pid_t pid = spawn(args, &fd);
  if (pid < 0) return {};
  return finish(pid, fd, timeout);
}

std::string example(const std::string& name) { return std::string(NETDAQ_SOURCE_DIR) + "/examples/" + name; }

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The first integer value of "key" in a JSON text. A missing key fails the test (and returns
// -1), so two missing keys can never compare equal into a pass.
long long json_int(const std::string& json, const std::string& key) {
  std::smatch m;
  if (std::regex_search(json, m, std::regex("\"" + key + "\": (-?[0-9]+)"))) return std::stoll(m[1]);
  ADD_FAILURE() << "no integer \"" << key << "\" in the JSON: " << json;
  return -1;
}

// The number value of "key" (the first in the text); NaN, and a failure, when missing.
double json_number(const std::string& json, const std::string& key) {
  std::smatch m;
  if (std::regex_search(json, m, std::regex("\"" + key + "\": (-?[0-9.eE+-]+)"))) return std::stod(m[1]);
  ADD_FAILURE() << "no number \"" << key << "\" in the JSON: " << json;
  return std::nan("");
}

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("netdaq_cli_test_" + std::to_string(getpid()) + "_" + name);
}

}  // namespace

TEST(Cli, VersionListsSocketEngine) {
  auto r = run_cli({"--version"});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("netdaq 0."), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("engines:.*\\bsocket\\b"))) << r.out;
}

TEST(Cli, VersionSaysWhatGpuItCanUse) {
  auto r = run_cli({"--version"});
  EXPECT_EQ(r.status, 0) << r.out;
  const std::regex gpu_line(
      "\\ngpu: (not built in|built in, no usable GPU \\(.+\\)|"
      "[0-9]+: .+ \\(cc [0-9]+\\.[0-9]+, [0-9]+ GiB, dma-buf (yes|no), peermem (yes|no)\\))(\\n|$)");
  EXPECT_TRUE(std::regex_search(r.out, gpu_line)) << r.out;
}

TEST(Cli, HelpListsSubcommands) {
  auto r = run_cli({"--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* s : {"run", "bench", "validate"}) EXPECT_NE(r.out.find(s), std::string::npos) << s;
  EXPECT_EQ(run_cli({"no-such-command"}).status, 1);
}

TEST(Cli, EveryExampleValidates) {
  // An example for an engine this build lacks (e.g. dpdk-*.yaml without libdpdk) can only say so.
  const auto version = run_cli({"--version"});
  std::smatch engines;
  ASSERT_TRUE(std::regex_search(version.out, engines, std::regex("engines:([^\n]*)"))) << version.out;
  const std::string built = engines[1].str() + " ";
  std::vector<std::string> args{"validate"};
  for (const auto& e : fs::directory_iterator(std::string(NETDAQ_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() != ".yaml") continue;
    const std::string text = read_file(e.path());
    bool buildable = true;
    const std::regex engine_key("engine: *([a-z0-9_-]+)");
    for (auto m = std::sregex_iterator(text.begin(), text.end(), engine_key); m != std::sregex_iterator(); ++m)
      buildable = buildable && built.find(" " + (*m)[1].str() + " ") != std::string::npos;
    if (buildable) args.push_back(e.path().string());
    else std::printf("skipped %s: its engine is not built in (engines:%s)\n", e.path().c_str(), built.c_str());
  }
  ASSERT_GE(args.size(), 7u);  // loopback, loopback-worker, tcp, multicast, header-split, ipv6
  auto r = run_cli(args);
  EXPECT_EQ(r.status, 0) << r.out;
  for (size_t i = 1; i < args.size(); ++i) EXPECT_NE(r.out.find(args[i] + ": OK"), std::string::npos) << args[i] << "\n" << r.out;
}

TEST(Cli, BrokenConfigNamesFileAndLine) {
  const auto p = temp_path("broken.yaml");
  std::ofstream(p) << "memory_regions:\n"
                      "  - {name: bufs, kind: host, buf_size: 2048, num_bufs: 16384}\n"
                      "interfaces:\n"
                      "  - name: rx\n"
                      "    engine: socket\n"
                      "    address: udp://127.0.0.1:46999\n"
                      "    rx:\n"
                      "      queues:\n"
                      "        - {id: 0, batch_size: -5, memory_regions: [nope]}\n";
  auto r = run_cli({"validate", example("loopback.yaml"), p.string()});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find(example("loopback.yaml") + ": OK"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(std::regex_replace(p.string(), std::regex("[.]"), "\\.") + ":9:[0-9]+: ")))
      << r.out;
  fs::remove(p);
  auto missing = run_cli({"validate", "/nonexistent/netdaq.yaml"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.out.find("/nonexistent/netdaq.yaml"), std::string::npos) << missing.out;
}

TEST(Cli, BrokenFleetBlockNamesEveryWrongKeyWithItsLine) {
  if (run_cli({"build", "--help"}).status != 0) GTEST_SKIP() << "built without the fleet (UCX)";
  const auto p = temp_path("fleet.yaml");
  std::ofstream(p) << "fleet:\n"
                      "  nodes: 3\n"
                      "  node: 5\n"
                      "  route: sideways\n"
                      "  destinations: \"10.0.0.1:99999\"\n"
                      "  transport: rdma\n"
                      "  when_full: block\n"
                      "  listen: \"nowhere\"\n";
  auto r = run_cli({"validate", p.string()});
  EXPECT_EQ(r.status, 1) << r.out;
  for (const char* want : {":3:3: fleet.node = '5': must be below fleet.nodes (3)",
                           ":4:3: fleet.route = 'sideways': must be one of: frame, stream, bytes",
                           ":5:3: fleet.destinations = '10.0.0.1:99999'", ":6:3: fleet.transport = 'rdma'",
                           ":7:3: fleet.when_full = 'block': must be one of: drop, wait", ":8:3: fleet.listen = 'nowhere'"})
    EXPECT_NE(r.out.find(p.string() + want), std::string::npos) << want << "\n" << r.out;
  // A builder's file needs no interfaces; the ingest command says what its file lacks.
  std::ofstream(p) << "fleet:\n  nodes: 2\n  listen: \"127.0.0.1:0\"\n";
  EXPECT_EQ(run_cli({"validate", p.string()}).status, 0);
  auto ingest = run_cli({"ingest", p.string()});
  EXPECT_EQ(ingest.status, 1) << ingest.out;
  EXPECT_NE(ingest.out.find("no rx.reorder entry with frames: host"), std::string::npos) << ingest.out;
  fs::remove(p);
}

TEST(Cli, RunLoopbackWithoutLoss) {
  const auto json = temp_path("run.json");
  auto r = run_cli({"run", example("loopback.yaml"), "--duration", "1", "--expect-no-loss", "--json", json.string()});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("rx "), std::string::npos) << r.out;  // live line
  EXPECT_NE(r.out.find("summary"), std::string::npos) << r.out;
  const std::string j = read_file(json);
  EXPECT_GT(json_int(j, "rx_packets"), 0) << j;
  EXPECT_EQ(json_int(j, "rx_packets"), json_int(j, "tx_packets")) << j;
  EXPECT_EQ(json_int(j, "lost"), 0) << j;
  EXPECT_EQ(json_int(j, "drops"), 0) << j;
  EXPECT_NE(j.find("\"ok\": true"), std::string::npos) << j;
  fs::remove(json);
}

// Both sides split headers from payloads: the sender gathers two buffers per datagram, the
// receiver scatters into two; every payload byte is verified across the split.
TEST(Cli, RunHeaderSplitWithoutLoss) {
  auto r = run_cli({"run", example("header-split.yaml"), "--duration", "1", "--expect-no-loss"});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("lost 0, drops 0, malformed 0"), std::string::npos) << r.out;
}

// The GPU example: frames in GPU memory where a GPU is usable; elsewhere (CI) a clear error
// that names the region and why, and exit status 1 before any traffic.
TEST(Cli, RunGpuFramesOrSayWhyNot) {
  const auto json = temp_path("gpu.json");
  auto r = run_cli({"run", example("gpu-frames.yaml"), "--duration", "1", "-q", "--expect-no-loss", "--json", json.string()});
  if (r.status == 1) {
    if (ndqtest::gpu_required()) FAIL() << "NETDAQ_REQUIRE_GPU=1 and netdaq found no usable GPU: " << r.out;
    EXPECT_NE(r.out.find("memory region 'rx_bufs'"), std::string::npos) << r.out;
    EXPECT_TRUE(r.out.find("no usable GPU") != std::string::npos || r.out.find("none is usable") != std::string::npos ||
                r.out.find("no GPU support") != std::string::npos ||
                r.out.find("this build of netdaq has none") != std::string::npos)  // built without CUDA
        << r.out;
    return;
  }
  EXPECT_EQ(r.status, 0) << r.out;
  const std::string j = read_file(json);
  EXPECT_GT(json_int(j, "frames_complete"), 0) << j;
  EXPECT_EQ(json_int(j, "packets_in"), json_int(j, "packets_placed")) << j;
  EXPECT_EQ(json_int(j, "rx_packets"), json_int(j, "packets_in")) << j;
  fs::remove(json);
}

TEST(Cli, RunBuiltInDefault) {
  auto r = run_cli({"run", "--duration", "0.5", "--expect-no-loss", "--json", "-"});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(built in)"), std::string::npos) << r.out;
  auto p = run_cli({"run", "--print-config"});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.out, read_file(example("loopback.yaml")));
}

TEST(Cli, BenchUdpCountsExactly) {
  auto r = run_cli({"bench", "--json", "--quiet", "--protocol", "udp", "--size", "1472", "--count", "20000",
                    "--rate-mbps", "2000", "--address", "127.0.0.1:47110"});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(json_int(r.out, "sent"), 20000) << r.out;
  EXPECT_EQ(json_int(r.out, "packets"), 20000) << r.out;
  EXPECT_EQ(json_int(r.out, "loss"), 0) << r.out;
  EXPECT_EQ(json_int(r.out, "duplicates"), 0) << r.out;
  EXPECT_EQ(json_int(r.out, "malformed"), 0) << r.out;
  EXPECT_NE(r.out.find("\"holds\": true"), std::string::npos) << r.out;  // the accounting it checked
}

// Loss that no drop counter explains fails the bench (exit 3), whatever else it measured: the
// sender sends where the receiver does not listen. Its connected socket sees some of the ICMP
// port-unreachables (tx_error), never all: the first message's packets, at least, are lost
// uncounted. Before the check, this run exited 0 with "lost 20,000" and tx_error=9,747.
TEST(Cli, BenchFailsOnLossItsDropsDoNotExplain) {
  auto r = run_cli({"bench", "--json", "--quiet", "--count", "20000", "--rate-pps", "100000", "--address",
                    "127.0.0.1:47140", "--destination", "127.0.0.1:47141"});
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_EQ(json_int(r.out, "loss"), 20000) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("netdaq bench: FAILED: unexplained loss: lost 20,000 != counted "
                                                  "drops [0-9,]+ \\((none|tx_error=[0-9,]+)\\)")))
      << r.out;
  EXPECT_NE(r.out.find("\"holds\": false"), std::string::npos) << r.out;
  // one end only: the other end's counts are elsewhere, so nothing is checked (and the JSON says so)
  auto tx = run_cli({"bench", "--json", "--quiet", "--tx-only", "--count", "1000", "--destination", "127.0.0.1:47141"});
  EXPECT_EQ(tx.status, 0) << tx.out;
  EXPECT_NE(tx.out.find("\"checked\": false"), std::string::npos) << tx.out;
}

// A packet that is not the payload sent fails the bench too (exit 3), although the loss (unique
// sequence numbers) still adds up: datagrams of another kind reach the receiver's port while
// the bench runs. Before this check the run exited 0 with "malformed" above zero.
TEST(Cli, BenchFailsOnMalformedPackets) {
  constexpr uint16_t kPort = 47162;
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  Result r;
  std::atomic<bool> done{false};
  std::thread bench([&] {
    r = run_cli({"bench", "--json", "--quiet", "--count", "150000", "--rate-pps", "100000", "--address",
                 "127.0.0.1:" + std::to_string(kPort)});
    done = true;
  });
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(kPort);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const char junk[] = "not a netdaq payload";
  // A datagram every 25 ms for as long as the bench runs (its 1.5 s of traffic begin only once
  // the process is up: over a second later in the ASan build, where a fixed 0.3 s head start
  // sent them all before the bench's socket existed); bounded: 400 datagrams, 10 s.
  for (int i = 0; i < 400 && !done; ++i) {
    ::sendto(fd, junk, sizeof junk, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ::close(fd);
  bench.join();
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_GT(json_int(r.out, "malformed"), 0) << r.out;
  EXPECT_NE(r.out.find("\"holds\": true"), std::string::npos) << "the loss itself adds up: " << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("netdaq bench: FAILED: 0 duplicate and [0-9,]+ malformed packets")))
      << r.out;
}

TEST(Cli, BenchUdpSmallPacketsAccountEveryPacket) {
  // Unpaced: loss may happen on a busy machine, but received + lost is exactly what was sent.
  auto r = run_cli({"bench", "--json", "--quiet", "--size", "64", "--count", "100000", "--address", "127.0.0.1:47120"});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(json_int(r.out, "sent"), 100000) << r.out;
  EXPECT_EQ(json_int(r.out, "packets") + json_int(r.out, "loss"), 100000) << r.out;
  EXPECT_EQ(json_int(r.out, "duplicates"), 0) << r.out;
}

TEST(Cli, BenchTcpCountsExactly) {
  auto r = run_cli({"bench", "--json", "--quiet", "--protocol", "tcp", "--size", "8192", "--count", "20000",
                    "--address", "127.0.0.1:47130"});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(json_int(r.out, "sent"), 20000) << r.out;
  EXPECT_EQ(json_int(r.out, "packets"), 20000) << r.out;
  EXPECT_EQ(json_int(r.out, "loss"), 0) << r.out;
  EXPECT_EQ(json_int(r.out, "reordered"), 0) << r.out;
}

// --ping-pong: every message goes there and back, one at a time; the figures are half of each
// round trip, named as such (bench/rdma_vs_perftest.sh compares them with ib_send_lat's).
void expect_ping_pong_returned_all(const Result& r, long long n) {
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"measure\": \"ping-pong\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"quantity\": \"round trip / 2\""), std::string::npos) << r.out;
  EXPECT_EQ(json_int(r.out, "messages"), n) << r.out;
  EXPECT_EQ(json_int(r.out, "returned"), n) << r.out;
  EXPECT_EQ(json_int(r.out, "loss"), 0) << r.out;
  EXPECT_EQ(json_int(r.out, "malformed"), 0) << r.out;
  EXPECT_NE(r.out.find("\"warmed_up\": true"), std::string::npos) << r.out;
  const double min = json_number(r.out, "min"), p50 = json_number(r.out, "p50"), p99 = json_number(r.out, "p99"),
               max = json_number(r.out, "max");
  EXPECT_GT(min, 0) << r.out;
  EXPECT_LE(min, p50) << r.out;
  EXPECT_LE(p50, p99) << r.out;
  EXPECT_LE(p99, max) << r.out;
  EXPECT_LT(p50, 10'000) << r.out;  // a loopback round trip / 2 under 10 ms, even on a loaded CI box
  EXPECT_TRUE(std::regex_search(r.out, std::regex("ping-pong, round trip / 2: p50 [0-9.]+ us, p99 [0-9.]+ us"))) << r.out;
}

TEST(Cli, BenchPingPongUdpReturnsEveryMessage) {
  auto r = run_cli({"bench", "--ping-pong", "--json", "--quiet", "--size", "64", "--count", "2000", "--address",
                    "127.0.0.1:47150"});
  expect_ping_pong_returned_all(r, 2000);
  EXPECT_NE(r.out.find("\"echo_address\": \"127.0.0.1:47151\""), std::string::npos) << r.out;  // port + 1
  // Both ends in one process read one clock: the way there is its own column, within the round trip.
  const size_t ow = r.out.find("\"one_way_us\": {");
  ASSERT_NE(ow, std::string::npos) << r.out;
  const double there = json_number(r.out.substr(ow), "p50"), half = json_number(r.out, "p50");
  EXPECT_GT(there, 0) << r.out;
  EXPECT_LT(there, 2 * half) << r.out;
}

TEST(Cli, BenchPingPongTcpReturnsEveryMessage) {
  auto r = run_cli({"bench", "--ping-pong", "--json", "--quiet", "--protocol", "tcp", "--size", "1472", "--count",
                    "2000", "--address", "127.0.0.1:47152"});
  expect_ping_pong_returned_all(r, 2000);
}

// The way back goes to a port where nothing listens: every message reaches B, none comes back.
// Each is counted lost after the reply timeout (never waited for again) and the run fails.
TEST(Cli, BenchPingPongFailsOnAMessageThatNeverComesBack) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_cli({"bench", "--ping-pong", "--json", "--quiet", "--size", "64", "--count", "5", "--reply-timeout",
                    "0.2", "--address", "127.0.0.1:47154", "--echo-destination", "127.0.0.1:47159"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(json_int(r.out, "messages"), 5) << r.out;
  EXPECT_EQ(json_int(r.out, "returned"), 0) << r.out;
  EXPECT_EQ(json_int(r.out, "loss"), 5) << r.out;
  EXPECT_EQ(json_int(r.out, "lost_there"), 0) << r.out;
  EXPECT_EQ(json_int(r.out, "lost_back"), 5) << r.out;
  EXPECT_NE(r.out.find("\"latency_us\": null"), std::string::npos) << r.out;  // no figure from nothing
  EXPECT_NE(r.out.find("netdaq bench: FAILED: 5 of 5 ping-pong messages lost (on the way there 0, back 5"),
            std::string::npos)
      << r.out;
  // bounded: the warm-up and 5 messages of 0.2 s each, not a hang
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(Cli, BenchPingPongRefusesWhatItCannotMeasure) {
  auto r = run_cli({"bench", "--ping-pong", "--queues", "2"});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("--ping-pong excludes --queues > 1"), std::string::npos) << r.out;
}

TEST(Cli, CtrlCPrintsSummaryAndExitsZero) {
  int fd = -1;
  const pid_t pid = spawn({"run", "--duration", "60"}, &fd);
  ASSERT_GT(pid, 0);
  // Wait for the first live line, then interrupt.
  std::string seen;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  char buf[4096];
  while (seen.find("[") == std::string::npos && std::chrono::steady_clock::now() < until) {
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, 100) > 0) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) break;
      seen.append(buf, static_cast<size_t>(n));
    }
  }
  kill(pid, SIGINT);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = finish(pid, fd, std::chrono::seconds(20), seen);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("summary"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("interrupted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stream"), std::string::npos) << r.out;
}

// capture writes whole frames; the socket engine hands over payloads only, so a socket config
// is refused before any file is written or socket opened, and the error says what is needed.
TEST(Cli, CaptureRefusesPayloadOnlyEngine) {
  const auto pcap = temp_path("capture.pcap");
  auto r = run_cli({"capture", example("loopback.yaml"), "--output", pcap.string(), "--count", "10"});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("engine 'socket'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("payloads only"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("afxdp"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(pcap)) << "nothing is written when capture refuses";
  EXPECT_EQ(run_cli({"capture", example("loopback.yaml")}).status, 1);  // --output is required
}
