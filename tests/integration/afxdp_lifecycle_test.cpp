// afxdp engine life cycle and setup errors: attach on start, detach on exit and on Ctrl-C,
// a SIGKILLed process leaves the interface working and its stale program is replaced by the
// next start; clear errors for a missing interface, no native XDP, no zero-copy, a queue id
// beyond the NIC's queues, a UMEM too small for the rings, missing privileges and memlock,
// and a foreign XDP program. The CLI runs as a separate process (NETDAQ_CLI).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <future>
#include <memory>
#include <thread>

#include "afxdp_util.h"
#include "test_paths.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

// A YAML config for `netdaq run`: afxdp rx on dev with one flow on port.
std::string rx_yaml(const std::string& dev, uint16_t port, double seconds) {
  return "memory_regions:\n  - {name: umem, kind: host, buf_size: 2048, num_bufs: 8192}\n"
         "interfaces:\n  - name: x0\n    engine: afxdp\n    address: " + dev +
         "\n    rx:\n      queues:\n        - {id: 0, batch_size: 64, ring_depth: 16, memory_regions: [umem]}\n"
         "      flows:\n        - {id: 1, queue: 0, match: {udp_dst: " + std::to_string(port) + "}}\n"
         "run:\n  duration_s: " + std::to_string(seconds) + "\nlog:\n  level: info\n";
}

std::string to_text(const Bytes& b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

std::string write_config(const TempFile& f, const std::string& yaml) {
  std::ofstream(f.path) << yaml;
  return f.path;
}

std::vector<std::string> cli_in(const NetnsLab::Side& s, std::vector<std::string> args) {
  std::vector<std::string> argv{"nsenter", "--net=/run/netns/" + s.ns, "--", NETDAQ_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

bool wait_attached(const NetnsLab& lab, const NetnsLab::Side& s, bool want, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (xdp_attached(lab, s) == want) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

// Sends n payloads from B to A:port with the socket engine.
void send_from_b(NetnsLab& lab, uint16_t port, uint64_t first, size_t n) {
  Iface ts;
  ts.destination = "udp://" + lab.a().ip4 + ":" + std::to_string(port);
  ts.tx_queues = 1;
  ts.rate_pps = 50000;
  auto tx = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(ts.build()); });
  EXPECT_EQ(send_sequence(tx->tx_queue("if0"), first, n, 300), n);
  EXPECT_TRUE(sender_accounted(n, tx->tx_queue("if0").stats()));
}

std::string session_error(NetnsLab& lab, const NetnsLab::Side& side, const Config& cfg) {
  return lab.run_in(side.ns, [&]() -> std::string {
    try {
      Session s(cfg);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "(no error)";
  });
}

TEST(AfxdpLifecycle, SigkillLeavesTheInterfaceWorkingAndTheNextStartReplacesTheStaleProgram) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  const uint16_t port = 46200;
  TempFile cfg;
  TempFile out;
  Subprocess child(cli_in(lab.a(), {"run", write_config(cfg, rx_yaml(lab.a().veth, port, 60)), "-q"}), out.path);
  ASSERT_TRUE(wait_attached(lab, lab.a(), true, 10s)) << "netdaq did not attach XDP";

  // While it runs, a second user of the interface is refused, naming the process.
  AfxdpIface rs{.dev = lab.a().veth, .rx_queues = {0}, .flows = {udp_flow(1, 0, port)}};
  const std::string busy = session_error(lab, lab.a(), rs.build());
  EXPECT_NE(busy.find("in use by netdaq process " + std::to_string(child.pid())), std::string::npos) << busy;

  ASSERT_EQ(kill(child.pid(), SIGKILL), 0);
  child.wait(5s);
  ASSERT_TRUE(xdp_attached(lab, lab.a())) << "expected the killed process's program to stay attached";

  // The stale program has no socket to redirect to: traffic falls through to the kernel.
  EXPECT_EQ(lab.exec_in(lab.b().ns, {"ping", "-c", "2", "-i", "0.2", "-W", "2", lab.a().ip4}), 0);
  {
    UdpSink sink(lab, lab.a(), port);
    send_from_b(lab, port, 0, 1000);
    EXPECT_TRUE(exactly_sequence(sink.finish(1000, 10s), 0, 1000, 300)) << "the flow's port with a stale program";
  }

  // The next start replaces the stale program and receives.
  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(rs.build()); });
  auto got = std::async(std::launch::async, [&] { return collect(rx->rx_queue("x0"), 2000, 10s); });
  send_from_b(lab, port, 5000, 2000);
  const auto received = got.get();
  EXPECT_TRUE(exactly_sequence(received, 5000, 2000, 300));
  EXPECT_TRUE(all_accounted(2000, received.size(), {rx->rx_queue("x0").stats()}));
  rx.reset();
  EXPECT_FALSE(xdp_attached(lab, lab.a())) << "a clean exit detaches";
}

TEST(AfxdpLifecycle, CtrlCDetachesAndExitsCleanly) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  TempFile cfg;
  TempFile out;
  Subprocess child(cli_in(lab.a(), {"run", write_config(cfg, rx_yaml(lab.a().veth, 46201, 60)), "-q"}), out.path);
  ASSERT_TRUE(wait_attached(lab, lab.a(), true, 10s));
  ASSERT_EQ(kill(child.pid(), SIGINT), 0);
  const int status = child.wait(10s);
  EXPECT_EQ(status, 0) << to_text(read_file(out.path));
  EXPECT_FALSE(xdp_attached(lab, lab.a()));
  const std::string text = to_text(read_file(out.path));
  EXPECT_NE(text.find("interrupted"), std::string::npos) << text;
}

TEST(AfxdpSetupErrors, MissingInterface) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  AfxdpIface rs{.dev = "ndqnope0", .rx_queues = {0}};
  const std::string e = session_error(lab, lab.a(), rs.build());
  EXPECT_NE(e.find("network interface 'ndqnope0' does not exist"), std::string::npos) << e;
}

TEST(AfxdpSetupErrors, NoNativeXdpOnLoopbackButGenericWorks) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  AfxdpIface rs{.dev = "lo", .rx_queues = {0}};
  rs.afxdp.attach = XdpAttach::native;
  const std::string e = session_error(lab, lab.a(), rs.build());
  EXPECT_NE(e.find("native XDP is not available on interface 'lo'"), std::string::npos) << e;
  EXPECT_NE(e.find("afxdp.attach: generic"), std::string::npos) << e;
  rs.afxdp.attach = XdpAttach::automatic;  // falls back to generic XDP
  const std::string mode = lab.run_in(lab.a().ns, [&] {
    Session s(rs.build());
    return s.rx_queue("x0").stats().mode;
  });
  EXPECT_NE(mode.find("generic XDP"), std::string::npos) << mode;
}

TEST(AfxdpSetupErrors, ZeroCopyRefusedByVeth) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  AfxdpIface rs{.dev = lab.a().veth, .rx_queues = {0}};
  rs.afxdp.mode = XskMode::zero_copy;
  const std::string e = session_error(lab, lab.a(), rs.build());
  EXPECT_NE(e.find("has no AF_XDP zero-copy"), std::string::npos) << e;
  EXPECT_NE(e.find("afxdp.mode: copy"), std::string::npos) << e;
  EXPECT_FALSE(xdp_attached(lab, lab.a())) << "a failed start detaches what it attached";
}

TEST(AfxdpSetupErrors, QueueBeyondTheNicsQueues) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab(2);
  AfxdpIface rs{.dev = lab.a().veth, .rx_queues = {3}};
  const std::string e = session_error(lab, lab.a(), rs.build());
  EXPECT_NE(e.find("queue id 3 is beyond the queues of '" + lab.a().veth + "', which has 2"), std::string::npos) << e;
}

TEST(AfxdpSetupErrors, UmemTooSmallForTheRings) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  AfxdpIface rs{.dev = lab.a().veth, .rx_queues = {0}, .num_bufs = 1024};
  const std::string e = session_error(lab, lab.a(), rs.build());
  EXPECT_NE(e.find("fill_ring"), std::string::npos) << e;
  EXPECT_NE(e.find("1024"), std::string::npos) << e;
}

TEST(AfxdpSetupErrors, InsufficientPrivilegesAndMemlock) {
  NDQ_REQUIRE_AFXDP();
  NDQ_REQUIRE(have_tool("setpriv") && have_tool("prlimit"), "setpriv/prlimit (util-linux) missing");
  NetnsLab lab;
  TempFile cfg;
  const std::string path = write_config(cfg, rx_yaml(lab.a().veth, 46202, 1));
  chmod(path.c_str(), 0644);
  std::string out;
  // An unprivileged user.
  // The CLI's setup-failure exit status is 1 (docs/cli.md).
  EXPECT_EQ(run_command({"nsenter", "--net=/run/netns/" + lab.a().ns, "--", "setpriv", "--reuid=65534",
                         "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", NETDAQ_CLI, "run",
                         path, "-q"},
                        &out),
            1)
      << out;
  EXPECT_NE(out.find("insufficient privileges"), std::string::npos) << out;
  EXPECT_FALSE(xdp_attached(lab, lab.a()));
  // Root without CAP_IPC_LOCK and a 1 MiB memlock limit: the 16 MiB UMEM cannot be locked.
  EXPECT_EQ(run_command({"nsenter", "--net=/run/netns/" + lab.a().ns, "--", "setpriv", "--bounding-set=-ipc_lock",
                         "--inh-caps=-ipc_lock", "prlimit", "--memlock=1048576:1048576", NETDAQ_CLI, "run", path, "-q"},
                        &out),
            1)
      << out;
  EXPECT_NE(out.find("memlock limit 1024 KiB"), std::string::npos) << out;
  EXPECT_NE(out.find("ulimit -l"), std::string::npos) << out;
  EXPECT_FALSE(xdp_attached(lab, lab.a())) << "a failed start detaches what it attached";
}

TEST(AfxdpSetupErrors, ForeignXdpProgramIsNotTouched) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  const std::string obj = "/usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_all.o";  // from xdp-tools' libxdp
  std::string out;
  ASSERT_EQ(lab.exec_in(lab.a().ns, {"ip", "link", "set", "dev", lab.a().veth, "xdpgeneric", "obj", obj, "sec", "xdp"}, &out), 0)
      << out;
  AfxdpIface rs{.dev = lab.a().veth, .rx_queues = {0}};
  const std::string e = session_error(lab, lab.a(), rs.build());
  EXPECT_NE(e.find("already runs XDP program"), std::string::npos) << e;
  EXPECT_NE(e.find("which is not netdaq's"), std::string::npos) << e;
  EXPECT_TRUE(xdp_attached(lab, lab.a())) << "the foreign program must stay";
}

}  // namespace
