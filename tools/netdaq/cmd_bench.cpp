// netdaq bench: TX and RX of the netdaq payload format over the socket engine, with
// throughput, loss, duplicates and reordering counted exactly (docs/cli.md).
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "netdaq/netdaq.h"
#include "report.h"
#include "signals.h"
#include "traffic.h"

namespace netdaq::cli {

namespace {

struct BenchOptions {
  std::string protocol = "udp";
  uint32_t size = 1472;
  std::optional<double> duration;
  uint64_t count = 0;
  double rate_mbps = 0, rate_pps = 0;
  uint32_t queues = 1;
  std::string address = "127.0.0.1:47000";
  std::string destination;
  bool rx_only = false, tx_only = false;
  std::string mode = "direct";
  uint32_t batch = 0;  // 0: from the size (a burst of at most 1 MiB, 16..256 packets)
  bool json = false;
  bool quiet = false;
  bool no_verify = false;
  double idle_timeout = 2;
  uint32_t drain_ms = 500;
  uint32_t rcvbuf = 64u << 20, sndbuf = 8u << 20;
  bool no_gso = false, no_gro = false;
  std::vector<int> tx_cpu, rx_cpu;
  bool no_pin = false;
  uint32_t num_bufs = 0;
};

std::string with_scheme(const std::string& a, const std::string& proto) {
  if (a.find("://") != std::string::npos) return a;
  return proto + "://" + a;
}

std::vector<int> usable_cpus() {
  std::vector<int> v;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) v.push_back(c);
  return v;
}

Config build_config(const BenchOptions& o) {
  Config c;
  c.source = "<netdaq bench>";
  c.log.level = "warn";
  c.run.tx_payload_size = o.size;
  const uint32_t buf = std::max<uint32_t>(64, (o.size + 63) / 64 * 64);
  const uint32_t batch = o.batch;
  const auto mode = o.mode == "worker" ? PollMode::worker : PollMode::direct;
  // Pools: the buffers cycle through a FIFO, so a pool no larger than the bursts in flight
  // keeps them warm in cache (the copy into a buffer, the check of it and the next receive
  // into it hit L2). Direct mode holds one burst in the application and one being received;
  // worker mode holds a ring of bursts, deep enough to ride out the consumer thread losing
  // its CPU for a while (64 bursts). Pools get 2x what the queue holds (worker: one spare
  // burst).
  const uint32_t rx_depth = mode == PollMode::worker ? 64 : 2;
  const uint32_t tx_depth = 2;
  const uint32_t rx_bufs = o.num_bufs ? o.num_bufs
                                      : (mode == PollMode::worker ? (rx_depth + 2) * batch : 2 * (rx_depth + 1) * batch);
  const uint32_t tx_bufs = o.num_bufs ? o.num_bufs : 2 * tx_depth * batch;
  const uint32_t ring_depth = rx_depth;
  const std::string proto = o.protocol;

  SocketOptions so;
  so.gro = !o.no_gro;
  so.gso = !o.no_gso;
  so.rcvbuf = o.rcvbuf;
  so.sndbuf = o.sndbuf;

  // One region per queue, so each queue's buffers stay warm in its own pool.
  auto add_queue = [&](std::vector<QueueConfig>& queues, const std::string& region, uint32_t num_bufs,
                       uint32_t depth, PollMode queue_mode, int cpu) {
    MemoryRegionConfig r;
    r.name = region;
    r.buf_size = buf;
    r.num_bufs = num_bufs;
    c.memory_regions.push_back(r);
    QueueConfig q;
    q.id = static_cast<uint16_t>(queues.size());
    q.mode = queue_mode;
    q.batch_size = batch;
    q.timeout_us = 100;
    q.ring_depth = depth;
    q.memory_regions = {region};
    if (queue_mode == PollMode::worker) q.cpu_core = cpu;
    queues.push_back(q);
  };

  if (!o.tx_only) {
    InterfaceConfig rx;
    rx.name = "bench-rx";
    rx.engine = "socket";
    rx.address = with_scheme(o.address, proto);
    rx.socket = so;
    for (uint32_t i = 0; i < o.queues; ++i)
      add_queue(rx.rx.queues, "rx" + std::to_string(i), rx_bufs, ring_depth, mode,
                i < o.rx_cpu.size() ? o.rx_cpu[i] : -1);
    c.interfaces.push_back(rx);
  }
  if (!o.rx_only) {
    InterfaceConfig tx;
    tx.name = "bench-tx";
    tx.engine = "socket";
    tx.tx.destination = with_scheme(o.destination.empty() ? o.address : o.destination, proto);
    tx.tx.rate_mbps = o.rate_mbps / o.queues;  // the pacer is per queue
    tx.tx.rate_pps = o.rate_pps / o.queues;
    tx.socket = so;
    for (uint32_t i = 0; i < o.queues; ++i)
      add_queue(tx.tx.queues, "tx" + std::to_string(i), tx_bufs, tx_depth, PollMode::direct, -1);
    c.interfaces.push_back(tx);
  }
  return c;
}

int bench(BenchOptions o) {
  std::FILE* out = o.json ? stderr : stdout;
  if (o.rx_only && o.tx_only) {
    std::fprintf(stderr, "netdaq bench: --rx-only and --tx-only exclude each other\n");
    return kExitError;
  }
  if (o.size < kPayloadHeaderSize) {
    std::fprintf(stderr, "netdaq bench: --size must be at least %zu (the payload header)\n", kPayloadHeaderSize);
    return kExitError;
  }
  if (o.queues == 0) o.queues = 1;
  if (o.batch == 0) {
    // A burst that stays in cache while it is verified: 256 small packets, 64 of 9 KB.
    const uint32_t buf = std::max<uint32_t>(64, (o.size + 63) / 64 * 64);
    o.batch = 256;
    while (o.batch > 16 && uint64_t{o.batch} * buf > (1u << 20)) o.batch /= 2;
  }
  // CPU placement: on a machine of a few cores, a sender and a receiver in one process each
  // get a core of their own (tx from the first CPU up, rx from the last down).
  const auto cpus = usable_cpus();
  if (!o.no_pin && !o.rx_only && !o.tx_only && cpus.size() >= 2) {
    const size_t n = cpus.size();
    for (uint32_t i = o.tx_cpu.size(); i < o.queues; ++i) o.tx_cpu.push_back(cpus[i % n]);
    for (uint32_t i = o.rx_cpu.size(); i < o.queues; ++i) o.rx_cpu.push_back(cpus[n - 1 - (i % n)]);
  }
  if (o.no_pin) o.tx_cpu.clear(), o.rx_cpu.clear();

  Config cfg = build_config(o);
  install_stop_signals();
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(cfg);
  } catch (const ConfigError& e) {
    for (const auto& i : e.issues()) std::fprintf(stderr, "netdaq bench: %s\n", i.to_string().c_str());
    return kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "netdaq bench: %s\n", e.what());
    return kExitError;
  }

  TrafficOptions t;
  t.payload_size = o.size;
  t.expected_size = o.size;
  t.verify = !o.no_verify;
  t.drain_ms = o.drain_ms;
  t.stats_interval_ms = 1000;
  t.tx_cpu = o.tx_cpu;
  // worker mode: the queue's worker takes the rx core; the consumer floats
  if (o.mode != "worker") t.rx_cpu = o.rx_cpu;
  std::vector<uint64_t> per_stream;
  if (o.count) {
    for (uint32_t i = 0; i < o.queues; ++i) per_stream.push_back(o.count / o.queues + (i < o.count % o.queues ? 1 : 0));
  }
  const double duration = o.duration ? *o.duration : (o.count ? 0 : 3.0);
  if (!o.rx_only) {
    t.tx_counts = per_stream;
    t.duration_s = duration;
  } else {
    t.rx_expected = per_stream;
    t.duration_s = o.duration ? *o.duration : 0;
    t.idle_timeout_s = o.idle_timeout;
  }
  const bool has_rx = !o.tx_only, has_tx = !o.rx_only;
  if (!o.quiet) {
    char span[64];
    if (o.count)
      std::snprintf(span, sizeof span, "%s packets", format_count(o.count).c_str());
    else if (t.duration_s > 0)
      std::snprintf(span, sizeof span, "%.1f s", t.duration_s);
    else
      std::snprintf(span, sizeof span, "until idle %.1f s", o.idle_timeout);
    std::fprintf(out, "netdaq bench: %s %u B, %u queue%s, %s mode, batch %u%s, %s\n", o.protocol.c_str(), o.size,
                 o.queues, o.queues == 1 ? "" : "s", o.mode.c_str(), o.batch,
                 o.rx_only ? ", rx only" : (o.tx_only ? ", tx only" : ""), span);
  }

  TrafficResult r;
  try {
    r = run_traffic(*session, t, [&](const LiveSample& s) {
      if (!o.quiet) print_live(out, s, has_rx, has_tx);
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "netdaq bench: %s\n", e.what());
    return kExitError;
  }
  session->stop();

  // Receiver's view (first to last packet of any queue) unless tx only.
  uint64_t first = 0, last = 0, packets = 0, tx_packets = 0, tx_bytes = 0, tx_first = 0, tx_last = 0;
  for (auto& x : r.rx) {
    if (x.first_ns && (!first || x.first_ns < first)) first = x.first_ns;
    last = std::max(last, x.last_ns);
  }
  for (auto& x : r.tx) {
    tx_packets += x.sent;
    tx_bytes += x.bytes;
    if (x.first_ns && (!tx_first || x.first_ns < tx_first)) tx_first = x.first_ns;
    tx_last = std::max(tx_last, x.last_ns);
  }
  uint64_t lost = 0, dups = 0, reord = 0, late = 0, expected = 0;
  LatencyHistogram lat;
  for (auto& s : r.streams) {
    packets += s.unique;
    lost += s.lost;
    dups += s.duplicates;
    reord += s.reordered;
    late += s.late;
    expected += s.expected;
    lat.merge(s.latency);
  }
  const double rx_sec = last > first ? double(last - first) / 1e9 : 0;
  const double tx_sec = tx_last > tx_first ? double(tx_last - tx_first) / 1e9 : 0;
  const double sec = has_rx ? rx_sec : tx_sec;
  const uint64_t pk = has_rx ? packets : tx_packets;
  const uint64_t bytes = pk * o.size;
  const double pps = sec > 0 ? double(pk) / sec : 0;
  const double gbps = sec > 0 ? double(bytes) * 8 / sec / 1e9 : 0;
  const uint64_t base = has_tx ? tx_packets : expected;
  const double loss_ratio = base ? double(lost) / double(base) : 0;
  std::array<uint64_t, kDropReasons> drops{};
  for (auto& s : r.stats)
    for (size_t i = 0; i < kDropReasons; ++i) drops[i] += s.drops[i];

  if (!o.quiet) print_summary(out, r);
  std::fprintf(out, "\n%s %u B: %s packets in %.3f s = %s, %.3f Gb/s goodput", o.protocol.c_str(), o.size,
               format_count(pk).c_str(), sec, format_rate(pps).c_str(), gbps);
  if (has_rx)
    std::fprintf(out, "; lost %s (%.4f%%), duplicates %s, reordered %s, malformed %s", format_count(lost).c_str(),
                 loss_ratio * 100, format_count(dups).c_str(), format_count(reord).c_str(),
                 format_count(r.total_malformed()).c_str());
  std::fprintf(out, "\n");
  std::fflush(out);

  if (o.json) {
    nlohmann::ordered_json j = {{"netdaq", version()},
                                {"command", "bench"},
                                {"protocol", o.protocol},
                                {"size", o.size},
                                {"queues", o.queues},
                                {"mode", o.mode},
                                {"batch", o.batch},
                                {"role", o.rx_only ? "rx" : (o.tx_only ? "tx" : "both")},
                                {"packets", pk},
                                {"bytes", bytes},
                                {"seconds", sec},
                                {"pps", pps},
                                {"gbps", gbps},
                                {"sent", tx_packets},
                                {"expected", base},
                                {"loss", lost},
                                {"loss_ratio", loss_ratio},
                                {"duplicates", dups},
                                {"reordered", reord},
                                {"late", late},
                                {"malformed", r.total_malformed()}};
    QueueStats total;
    total.drops = drops;
    j["drops"] = drops_json(total);
    j["tx"] = {{"packets", tx_packets},
               {"bytes", tx_bytes},
               {"seconds", tx_sec},
               {"pps", tx_sec > 0 ? double(tx_packets) / tx_sec : 0.0},
               {"gbps", tx_sec > 0 ? double(tx_bytes) * 8 / tx_sec / 1e9 : 0.0}};
    if (lat.n) j["latency_us"] = latency_json(lat);
    write_result_json(j["detail"], r);
    write_file("-", j.dump(2) + "\n");
  }
  return kExitOk;
}

}  // namespace

void add_bench_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<BenchOptions>();
  auto* cmd = app.add_subcommand("bench", "Measure throughput and exact loss of the netdaq payload over sockets");
  cmd->add_option("--protocol", o->protocol, "udp or tcp")->check(CLI::IsMember({"udp", "tcp"}))->capture_default_str();
  cmd->add_option("-s,--size", o->size, "Payload bytes per datagram / message (>= 24)")->capture_default_str();
  cmd->add_option("-d,--duration", o->duration, "Seconds to send (default 3 unless --count)")->check(CLI::NonNegativeNumber);
  cmd->add_option("-n,--count", o->count, "Packets to send in all (split over the queues); rx-only: packets expected");
  cmd->add_option("--rate-mbps", o->rate_mbps, "Pace the senders to this total payload rate (Mb/s)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--rate-pps", o->rate_pps, "Pace the senders to this total packet rate")->check(CLI::NonNegativeNumber);
  cmd->add_option("-q,--queues", o->queues, "TX and RX queues (one thread each)")->capture_default_str();
  cmd->add_option("--address", o->address, "Where the receiver binds/listens: HOST:PORT or udp://, tcp:// URL")
      ->capture_default_str();
  cmd->add_option("--destination", o->destination, "Where the sender sends (default: --address)");
  cmd->add_flag("--rx-only", o->rx_only, "Only receive (stop at --count, --duration or --idle-timeout)");
  cmd->add_flag("--tx-only", o->tx_only, "Only send");
  cmd->add_option("--mode", o->mode, "RX polling: direct or worker")->check(CLI::IsMember({"direct", "worker"}))
      ->capture_default_str();
  cmd->add_option("--batch", o->batch, "Packets per burst (batch_size; 0 = from --size: 256 for small packets, 64 for 9 KB)")
      ->check(CLI::Range(0u, 1024u))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the result as JSON on stdout (text goes to stderr)");
  cmd->add_flag("--quiet", o->quiet, "No live line and no tables, only the result");
  cmd->add_flag("--no-verify", o->no_verify, "Check payload headers only, not every pattern byte");
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
  cmd->footer(
      "Throughput is the receiver's: unique packets x size over first-to-last packet (goodput, payload bytes).\n"
      "Exit status: 0 ok, 1 setup error.");
  cmd->callback([o, exit_code] { *exit_code = bench(*o); });
}

}  // namespace netdaq::cli
