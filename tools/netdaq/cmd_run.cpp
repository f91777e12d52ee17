// netdaq run [CONFIG]: opens a Session from a config, streams the netdaq payload format from
// every TX queue and checks it on every RX queue (docs/cli.md). Plan (run_plan.cpp), run
// (run_traffic), report (run_report.cpp).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "cli.h"
#include "report.h"
#include "run_plan.h"
#include "run_report.h"
#include "traffic.h"

namespace netdaq::cli {

namespace {

int run(const RunOptions& o) {
  if (o.print_config) {
    std::fputs(default_config_text(), stdout);
    return kExitOk;
  }
  std::optional<RunPlan> plan = plan_run(o);
  if (!plan) return kExitError;
  print_run_headline(*plan);
  if (plan->metrics) {
    std::fprintf(plan->out, "metrics: %s\n", plan->metrics->url().c_str());
    std::fflush(plan->out);
  }
  const bool has_rx = plan->nrx > 0, has_tx = plan->ntx > 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> stats(nullptr, std::fclose);
  if (!o.stats.empty()) {
    stats.reset(std::fopen(o.stats.c_str(), "w"));
    if (!stats) {
      std::fprintf(stderr, "netdaq run: --stats %s: cannot write: %s\n", o.stats.c_str(), std::strerror(errno));
      return kExitError;
    }
  }
  const auto live = [&](const LiveSample& s) {
    if (!o.quiet) print_live(plan->out, s, has_rx, has_tx);
    if (stats) {
      const std::string line = live_json(s).dump() + "\n";
      std::fputs(line.c_str(), stats.get());
      std::fflush(stats.get());
    }
  };
  const std::optional<TrafficResult> r = run_traffic_or_print_error(*plan->session, plan->traffic, live, "netdaq run");
  if (!r) return kExitError;
  if (plan->metrics) plan->metrics->freeze(*r);
  plan->session->stop();
  const int code = report_run(o, *plan, *r);
  if (plan->metrics) plan->metrics->linger(o.metrics_linger, plan->out);
  return code;
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
  cmd->add_option("--stats", o->stats, "Write a JSON line per stats interval to FILE (rates, drops per reason, pools)");
  cmd->add_flag("--expect-no-loss", o->expect_no_loss, "Exit 2 if any packet was lost, dropped or malformed");
  cmd->add_flag("-q,--quiet", o->quiet, "No live line, only the summary");
  cmd->add_flag("--no-verify", o->no_verify, "Write and check payload headers only, not every pattern byte (a receiver elsewhere must not verify either)");
  cmd->add_flag("--print-config", o->print_config, "Print the built-in default config and exit");
  auto* metrics = cmd->add_option("--metrics", o->metrics,
                  "Serve Prometheus metrics at http://HOST:PORT/metrics while the run lasts (port 0: a free one)")
      ->type_name("HOST:PORT");
  cmd->add_option("--metrics-linger", o->metrics_linger,
                  "Keep serving the final metrics SECONDS after the summary (Ctrl-C stops), for a last scrape")
      ->type_name("SECONDS")
      ->check(CLI::NonNegativeNumber)
      ->needs(metrics);
  cmd->footer("Exit status: 0 ok (also after Ctrl-C), 1 config or setup error, 2 --expect-no-loss failed.");
  cmd->callback([o, exit_code] { *exit_code = run(*o); });
}

}  // namespace netdaq::cli
