// netdaq replay FILE --to CONFIG: runs CONFIG with its rx interface fed from a pcap or pcapng
// capture (the pcap engine) instead of the network, checks the netdaq payloads like `netdaq run`
// and prints the same summary when the file has been read to its end (docs/cli.md). The config
// (replay_config.cpp), then `netdaq run`'s plan, traffic and report.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "replay_config.h"
#include "run_plan.h"
#include "run_report.h"

namespace netdaq::cli {

namespace {

struct ReplayOptions {
  RunOptions run;
  ReplaySettings feed;
  std::string pace;  // "asap" | "recorded" ("" : asap, or recorded when --speed is given)
  std::string chosen;
};

// "udp payloads, recorded pace x2, 3 passes"
std::string settings_text(const ReplayOptions& o) {
  std::string t = o.feed.frames ? "whole frames" : "udp payloads";
  if (o.feed.pace == PcapPace::recorded) {
    char x[48];
    std::snprintf(x, sizeof x, ", recorded pace x%g", o.feed.speed);
    t += x;
  } else {
    t += ", asap";
  }
  t += o.feed.loop == 0 ? ", looping" : ", " + std::to_string(o.feed.loop) + (o.feed.loop == 1 ? " pass" : " passes");
  return t;
}

void print_replay_headline(const ReplayOptions& o, const RunPlan& p) {
  const std::string text = settings_text(o);
  std::fprintf(p.out, "netdaq replay: %s -> %s interface %s: %zu rx queue%s, %s (Ctrl-C stops and prints the summary)\n",
               o.feed.file.c_str(), p.session->config().source.c_str(), o.chosen.c_str(), p.nrx, p.nrx == 1 ? "" : "s",
               text.c_str());
  std::fflush(p.out);
}

int replay(ReplayOptions& o) {
  if (std::FILE* f = std::fopen(o.feed.file.c_str(), "rb")) {
    std::fclose(f);
  } else {
    std::fprintf(stderr, "netdaq replay: %s: cannot open the capture: %s\n", o.feed.file.c_str(), std::strerror(errno));
    return kExitError;
  }
  o.feed.pace = o.pace == "recorded" || (o.pace.empty() && o.feed.speed != 1.0) ? PcapPace::recorded : PcapPace::asap;
  if (!o.run.duration) o.run.duration = 0;  // until the file ends (or --duration)
  o.run.adjust_config = [&o](Config& cfg) { o.chosen = feed_from_capture(cfg, o.feed); };
  std::optional<RunPlan> plan = plan_run(o.run);
  if (!plan) return kExitError;
  print_replay_headline(o, *plan);
  return run_and_report(o.run, *plan);
}

}  // namespace

void add_replay_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ReplayOptions>();
  o->run.command = "replay";
  auto* cmd = app.add_subcommand(
      "replay", "Run a config with its rx interface fed from a pcap/pcapng capture instead of the network");
  cmd->add_option("file", o->feed.file, "The capture (pcap or pcapng, Ethernet), e.g. from netdaq capture")->required();
  cmd->add_option("--to", o->run.config, "YAML config whose rx interface the capture feeds")->required();
  cmd->add_option("-i,--interface", o->feed.interface, "The interface to feed (default: the one with rx queues)");
  cmd->add_option("--pace", o->pace, "asap (as fast as the receiver polls) or recorded (the capture's own timing)")
      ->check(CLI::IsMember(std::vector<std::string>{"asap", "recorded"}));
  cmd->add_option("--speed", o->feed.speed, "Recorded pace this many times faster (implies --pace recorded)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--loop", o->feed.loop, "Passes over the file (0 = until Ctrl-C or --duration)");
  cmd->add_flag("--frames", o->feed.frames, "Deliver whole Ethernet frames, not UDP payloads (only counted)");
  cmd->add_flag("--all", o->feed.all, "Every UDP payload of the file, not only those sent to the interface's address");
  cmd->add_option("-d,--duration", o->run.duration, "Stop after S seconds (default: when the file ends)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--json", o->run.json, "Write the summary as JSON to FILE ('-' = stdout; text goes to stderr)");
  cmd->add_option("--stats", o->run.stats, "Write a JSON line per stats interval to FILE");
  cmd->add_flag("--expect-no-loss", o->run.expect_no_loss, "Exit 2 if any packet was lost, dropped or malformed");
  cmd->add_flag("-q,--quiet", o->run.quiet, "No live line, only the summary");
  cmd->add_flag("--no-verify", o->run.no_verify, "Check payload headers only, not every pattern byte");
  add_metrics_options(*cmd, o->run);
  cmd->footer("Exit status: 0 ok (also after Ctrl-C), 1 config, setup or file error, 2 --expect-no-loss failed.");
  cmd->callback([o, exit_code] { *exit_code = replay(*o); });
}

}  // namespace netdaq::cli
