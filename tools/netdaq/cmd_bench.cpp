// netdaq bench: TX and RX of the netdaq payload format over the socket engine, with
// throughput, loss, duplicates and reordering counted exactly (docs/cli.md). Plan
// (bench_plan.cpp, bench_config.cpp), run (run_traffic), report (bench_report.cpp).
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "bench_pingpong.h"
#include "bench_plan.h"
#include "bench_report.h"
#include "cli.h"
#include "errors.h"
#include "netdaq/netdaq.h"
#include "report.h"
#include "signals.h"
#include "traffic.h"

namespace netdaq::cli {

namespace {

// --role / --echo-format of --ping-pong (bench_pingpong.h), kept beside BenchOptions.
struct PingPongCli {
  std::string role = "both";
  std::string echo_format = "netdaq";
  PingPongRole parsed() const { return role == "client" ? PingPongRole::client : role == "server" ? PingPongRole::server : PingPongRole::both; }
};

// --role client / server: only that end's interfaces (the other end is another process);
// the server's receiver and its way back (opened later: ping_pong_server) kept apart.
void keep_interfaces(Config& c, std::initializer_list<const char*> names) {
  std::erase_if(c.interfaces, [&](const InterfaceConfig& i) {
    for (const char* n : names)
      if (i.name == n) return false;
    return true;
  });
}

void keep_role_interfaces(Config& c, PingPongRole role) {
  if (role == PingPongRole::client) keep_interfaces(c, {"bench-tx", kEchoRx});
  if (role == PingPongRole::server) keep_interfaces(c, {"bench-rx"});
}

// --role server: echo until a signal, --duration, an explicit --count or --idle-timeout.
int ping_pong_server(std::FILE* out, const BenchOptions& o, const PingPongCli& pc, uint64_t count, Session& session) {
  std::unique_ptr<Session> echo;
  const std::function<Session&()> open_echo = [&]() -> Session& {
    Config c = bench_config(o);
    keep_interfaces(c, {kEchoTx});
    echo = std::make_unique<Session>(c);
    return *echo;
  };
  PingPongServerOptions so;
  so.format = pc.echo_format == "sockperf" ? EchoFormat::sockperf : EchoFormat::netdaq;
  so.verify = !o.no_verify;
  so.count = count;
  so.duration_s = o.duration ? *o.duration : 0;
  so.idle_s = o.idle_timeout;
  // An echo waits this long for the engine: a tcp or rdma way back may still be connecting to
  // a client that started after this server (the rdma engine retries up to every 2 s).
  so.send_ns = 10'000'000'000;
  if (!o.quiet)
    std::fprintf(out, "netdaq bench: %s ping-pong server on %s, echoing to %s, busy polling\n", o.protocol.c_str(),
                 o.address.c_str(), o.echo_destination.c_str());
  std::fflush(out);
  PingPongServerResult r;
  if (!setup_step([&] { r = run_ping_pong_server(session, open_echo, so); }, "netdaq bench: ")) return kExitError;
  session.stop();
  if (echo) echo->stop();
  return report_ping_pong_server(out, o, so, r) ? kExitOk : kExitLoss;
}

// --ping-pong: one message in flight (bench_pingpong.h). A lost message fails.
int ping_pong(std::FILE* out, const BenchOptions& o, PingPongRole role, Session& session) {
  PingPongOptions p;
  p.count = o.count;
  p.size = o.size;
  p.verify = !o.no_verify;
  p.reply_ns = static_cast<uint64_t>(o.reply_timeout * 1e9);
  p.duration_s = o.duration ? *o.duration : 0;
  if (!o.quiet) print_ping_pong_headline(out, o);
  PingPongResult r;
  if (!setup_step([&] { r = run_ping_pong(session, p, role); }, "netdaq bench: ")) return kExitError;
  session.stop();
  return report_ping_pong(out, o, r, role) ? kExitOk : kExitLoss;
}

int bench(BenchOptions o, const PingPongCli& pc) {
  std::FILE* out = o.json ? stderr : stdout;
  if (!check_bench_options(o)) return kExitError;
  if (pc.role != "both" && !o.ping_pong) {
    std::fprintf(stderr, "netdaq bench: --role %s needs --ping-pong\n", pc.role.c_str());
    return kExitError;
  }
  const uint64_t count_given = o.count;
  // One message in flight: a burst of one, so that an empty poll attaches and returns one
  // buffer, not 256 (perf: half the client's time at 64 B went there).
  // (The rdma engine's bursts are completions; its sizing is left as it was measured.)
  if (o.ping_pong && o.batch == 0 && o.protocol != kRdmaEngine) o.batch = 1;
  complete_bench_options(o);
  Config cfg = bench_config(o);
  if (o.ping_pong) keep_role_interfaces(cfg, pc.parsed());
  install_stop_signals();
  std::unique_ptr<Session> session;
  if (!setup_step([&] { session = std::make_unique<Session>(cfg); }, "netdaq bench: ", "netdaq bench: "))
    return kExitError;
  if (o.ping_pong && pc.parsed() == PingPongRole::server) return ping_pong_server(out, o, pc, count_given, *session);
  if (o.ping_pong) return ping_pong(out, o, pc.parsed(), *session);
  const TrafficOptions t = bench_traffic_options(o);
  if (!o.quiet) print_bench_headline(out, o, t);

  const auto live = [&](const LiveSample& s) {
    if (!o.quiet) print_live(out, s, o.has_rx(), o.has_tx());
  };
  const std::optional<TrafficResult> r = run_traffic_or_print_error(*session, t, live, "netdaq bench");
  if (!r) return kExitError;
  session->stop();
  return report_bench(out, o, *r) ? kExitOk : kExitUnaccounted;
}

}  // namespace

void add_bench_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<BenchOptions>();
  auto pc = std::make_shared<PingPongCli>();
  auto* cmd = app.add_subcommand("bench", "Measure throughput and exact loss of the netdaq payload over sockets or RDMA");
  cmd->add_option("--protocol", o->protocol, "udp, tcp (socket engine) or rdma (rdma engine, rdma_cm)")
      ->check(CLI::IsMember({"udp", "tcp", kRdmaEngine}))
      ->capture_default_str();
  cmd->add_option("-s,--size", o->size, "Payload bytes per datagram / message (>= 24)")->capture_default_str();
  cmd->add_option("-d,--duration", o->duration, "Seconds to send (default 3 unless --count)")->check(CLI::NonNegativeNumber);
  cmd->add_option("-n,--count", o->count, "Packets to send in all (split over the queues); rx-only: packets expected");
  cmd->add_option("--rate-mbps", o->rate_mbps, "Pace the senders to this total payload rate (Mb/s)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--rate-pps", o->rate_pps, "Pace the senders to this total packet rate")->check(CLI::NonNegativeNumber);
  cmd->add_option("-q,--queues", o->queues, "TX and RX queues (one thread each)")->capture_default_str();
  cmd->add_option("--address", o->address, "Where the receiver binds/listens: HOST:PORT or udp://, tcp:// URL")
      ->capture_default_str();
  cmd->add_option("--destination", o->destination, "Where the sender sends (default: --address)");
  cmd->add_option("--source", o->source, "rdma: the sender's local IP (its RDMA device and route)");
  cmd->add_option("--rdma-op", o->rdma_op, "rdma: send (SEND/RECV) or write_imm (RDMA WRITE with immediate)")
      ->check(CLI::IsMember({"send", "write_imm"}))
      ->capture_default_str();
  cmd->add_option("--rdma-depth", o->rdma_depth, "rdma: receives posted and sends in flight per queue")
      ->check(CLI::Range(1u, 16384u))
      ->capture_default_str();
  cmd->add_flag("--rx-only", o->rx_only, "Only receive (stop at --count, --duration or --idle-timeout)");
  cmd->add_flag("--tx-only", o->tx_only, "Only send");
  cmd->add_option("--mode", o->mode, "RX polling: direct or worker")->check(CLI::IsMember({"direct", "worker"}))
      ->capture_default_str();
  cmd->add_option("--batch", o->batch, "Packets per burst (batch_size; 0 = from --size: 256 for small packets, 64 for 9 KB)")
      ->check(CLI::Range(0u, 1024u))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the result as JSON on stdout (text goes to stderr)");
  cmd->add_flag("--quiet", o->quiet, "No live line and no tables, only the result");
  cmd->add_flag("--no-verify", o->no_verify, "Write and check payload headers only, not every pattern byte (as perftest)");
  cmd->add_option("--idle-timeout", o->idle_timeout, "rx-only: stop this many seconds after the last packet")
      ->capture_default_str();
  cmd->add_option("--drain-ms", o->drain_ms, "Keep receiving after the senders stop")->capture_default_str();
  cmd->add_option("--rcvbuf", o->rcvbuf, "SO_RCVBUF bytes")->capture_default_str();
  cmd->add_option("--sndbuf", o->sndbuf, "SO_SNDBUF bytes")->capture_default_str();
  cmd->add_flag("--no-gso", o->no_gso, "Disable UDP GSO on send");
  cmd->add_flag("--no-gro", o->no_gro, "Disable UDP GRO on receive");
  cmd->add_option("--num-bufs", o->num_bufs, "Buffers per queue pool (default: from batch and size)");
  cmd->add_option("--tx-cpu", o->tx_cpu, "CPU of each sender thread (default: first CPUs)")->delimiter(',');
  cmd->add_option("--rx-cpu", o->rx_cpu, "CPU of each receiver thread / worker (default: last CPUs)")->delimiter(',');
  cmd->add_flag("--no-pin", o->no_pin, "Do not pin threads");
  cmd->add_flag("--busy-poll", o->busy_poll,
                "Senders and receivers never sleep when idle (one core each; for latency, as ib_send_lat polls)");
  cmd->add_flag("--ping-pong", o->ping_pong,
                "Latency as ib_send_lat: one message in flight, sent back by the receiver; round trip / 2 per message");
  cmd->add_option("--echo-address", o->echo_address,
                  "--ping-pong: where the way back's receiver listens (default: --address's port + 1; rdma: on --source)");
  cmd->add_option("--echo-destination", o->echo_destination, "--ping-pong: where the way back is sent (default: --echo-address)");
  cmd->add_option("--reply-timeout", o->reply_timeout, "--ping-pong: seconds each way may take before a message is lost")
      ->capture_default_str();
  cmd->add_option("--role", pc->role,
                  "--ping-pong: both (one thread), client (sends, times) or server (echoes), each its own process "
                  "as sockperf's")
      ->check(CLI::IsMember({"both", "client", "server"}))
      ->capture_default_str();
  cmd->add_option("--echo-format", pc->echo_format,
                  "--role server: netdaq (payloads checked) or sockperf (echoes `sockperf ping-pong`'s messages)")
      ->check(CLI::IsMember({"netdaq", "sockperf"}))
      ->capture_default_str();
  cmd->footer(
      "Throughput is the receiver's: unique packets x size over first-to-last packet (goodput, payload bytes).\n"
      "--ping-pong reports round trip / 2 (ib_send_lat's t_typical is its median), --count messages (default 1000).\n"
      "Exit status: 0 ok, 1 setup error, 2 ping-pong: a message lost, 3 unexplained loss (both ends here: lost != "
      "counted drops).");
  cmd->callback([o, pc, exit_code] { *exit_code = bench(*o, *pc); });
}

}  // namespace netdaq::cli
