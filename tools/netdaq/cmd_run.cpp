// netdaq run [CONFIG]: opens a Session from a config, streams the netdaq payload format from
// every TX queue and checks it on every RX queue (docs/cli.md). Plan (run_plan.cpp), run
// (run_traffic), report (run_report.cpp).
#include <cstdio>
#include <memory>

#include "cli.h"
#include "run_plan.h"
#include "run_report.h"

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
  return run_and_report(o, *plan);
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
  add_metrics_options(*cmd, *o);
  cmd->footer("Exit status: 0 ok (also after Ctrl-C), 1 config or setup error, 2 --expect-no-loss failed.");
  cmd->callback([o, exit_code] { *exit_code = run(*o); });
}

}  // namespace netdaq::cli
