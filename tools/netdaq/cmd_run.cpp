// netdaq run [CONFIG]: opens a Session from a config, streams the netdaq payload format from
// every TX queue and checks it on every RX queue (docs/cli.md).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli.h"
#include "gpu_report.h"
#include "netdaq/netdaq.h"
#include "report.h"
#include "signals.h"
#include "traffic.h"

namespace netdaq::cli {

namespace {

struct RunOptions {
  std::string config;
  std::optional<double> duration;
  std::optional<uint64_t> packets;
  std::string json;
  bool expect_no_loss = false;
  bool print_config = false;
  bool quiet = false;
  bool no_verify = false;
};

int run(const RunOptions& o) {
  if (o.print_config) {
    std::fputs(default_config_text(), stdout);
    return kExitOk;
  }
  std::FILE* out = o.json == "-" ? stderr : stdout;
  Config cfg;
  try {
    cfg = o.config.empty() ? Config::parse(default_config_text(), default_config_name()) : Config::load(o.config);
    if (o.duration) cfg.run.duration_s = *o.duration;
    if (o.packets) cfg.run.tx_packets = *o.packets;
  } catch (const ConfigError& e) {
    for (const auto& i : e.issues()) std::fprintf(stderr, "%s\n", i.to_string().c_str());
    return kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "netdaq run: %s: %s\n", o.config.empty() ? default_config_name() : o.config.c_str(), e.what());
    return kExitError;
  }

  install_stop_signals();
  std::unique_ptr<Session> session;
  // GPU data plane: a frame pipeline for each rx.reorder entry, fed by its queue's receiver.
  std::vector<std::unique_ptr<gpu::FramePipeline>> pipelines;
  std::vector<gpu::FramePipeline*> rx_pipelines;
  try {
    session = std::make_unique<Session>(cfg);
    for (RxQueue* q : session->rx_queues()) {
      rx_pipelines.push_back(nullptr);
      const InterfaceConfig* iface = session->config().find_interface(q->interface());
      for (const auto& g : iface->rx.reorder) {
        if (g.queue != q->config().id) continue;
        pipelines.push_back(std::make_unique<gpu::FramePipeline>(*session, iface->name, g));
        rx_pipelines.back() = pipelines.back().get();
      }
    }
  } catch (const ConfigError& e) {
    for (const auto& i : e.issues()) std::fprintf(stderr, "%s\n", i.to_string().c_str());
    return kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "netdaq run: %s\n", e.what());
    return kExitError;
  }
  const auto& rc = session->config().run;
  const size_t ntx = session->tx_queues().size(), nrx = session->rx_queues().size();

  TrafficOptions t;
  t.payload_size = rc.tx_payload_size;
  t.expected_size = ntx ? rc.tx_payload_size : 0;
  t.tx_counts.assign(ntx, rc.tx_packets);
  // With a packet count the senders stop at the count; --duration still bounds them.
  t.duration_s = rc.tx_packets && !o.duration ? 0 : rc.duration_s;
  t.drain_ms = rc.drain_ms;
  t.stats_interval_ms = rc.stats_interval_ms;
  t.verify = !o.no_verify;
  t.rx_pipelines = rx_pipelines;

  std::fprintf(out, "netdaq run: %s: %zu tx queue%s, %zu rx queue%s, payload %u B, ",
               session->config().source.c_str(), ntx, ntx == 1 ? "" : "s", nrx, nrx == 1 ? "" : "s", rc.tx_payload_size);
  if (ntx && rc.tx_packets)
    std::fprintf(out, "%llu packets per tx queue", static_cast<unsigned long long>(rc.tx_packets));
  else if (t.duration_s > 0)
    std::fprintf(out, "%.1f s", t.duration_s);
  else
    std::fprintf(out, "until Ctrl-C");
  std::fprintf(out, " (Ctrl-C stops and prints the summary)\n");
  std::fflush(out);

  TrafficResult r;
  try {
    r = run_traffic(*session, t, [&](const LiveSample& s) {
      if (!o.quiet) print_live(out, s, nrx > 0, ntx > 0);
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "netdaq run: %s\n", e.what());
    return kExitError;
  }
  session->stop();
  print_summary(out, r);
  print_gpu_summary(out, r);

  uint64_t sent = 0;
  for (auto& x : r.tx) sent += x.sent;
  const bool loss = r.total_lost() || r.total_drops() || r.total_malformed() || (ntx && nrx && sent == 0);
  if (!o.json.empty()) {
    nlohmann::ordered_json j = {{"netdaq", version()},
                                {"command", "run"},
                                {"config", session->config().source},
                                {"payload_size", rc.tx_payload_size}};
    write_result_json(j, r);
    if (!r.gpu.empty()) j["gpu"] = gpu_json(r);
    j["ok"] = !loss;
    if (!write_file(o.json, j.dump(2) + "\n")) {
      std::fprintf(stderr, "netdaq run: cannot write %s\n", o.json.c_str());
      return kExitError;
    }
  }
  if (o.expect_no_loss && loss) {
    std::fprintf(out, "netdaq run: --expect-no-loss: %s\n", sent == 0 ? "nothing was sent" : "packets were lost or dropped");
    return kExitLoss;
  }
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Send and check netdaq payload traffic on the queues of a config");
  cmd->add_option("config", o->config, "YAML config (default: the built-in examples/loopback.yaml)");
  cmd->add_option("-d,--duration", o->duration, "Seconds to send (overrides run.duration_s; 0 = until Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-n,--packets", o->packets, "Packets per tx queue (overrides run.tx_packets)");
  cmd->add_option("--json", o->json, "Write the summary as JSON to FILE ('-' = stdout; text goes to stderr)");
  cmd->add_flag("--expect-no-loss", o->expect_no_loss, "Exit 2 if any packet was lost, dropped or malformed");
  cmd->add_flag("-q,--quiet", o->quiet, "No live line, only the summary");
  cmd->add_flag("--no-verify", o->no_verify, "Check payload headers only, not every pattern byte");
  cmd->add_flag("--print-config", o->print_config, "Print the built-in default config and exit");
  cmd->footer("Exit status: 0 ok (also after Ctrl-C), 1 config or setup error, 2 --expect-no-loss failed.");
  cmd->callback([o, exit_code] { *exit_code = run(*o); });
}

}  // namespace netdaq::cli
