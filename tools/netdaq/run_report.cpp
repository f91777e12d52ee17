#include "run_report.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "cli.h"
#include "gpu_report.h"
#include "report.h"
#include "run_block.h"

namespace netdaq::cli {

namespace {

uint64_t packets_sent(const TrafficResult& r) {
  uint64_t sent = 0;
  for (auto& x : r.tx) sent += x.sent;
  return sent;
}

// False when writing the file failed (said on stderr).
bool write_run_json(const RunOptions& o, const RunPlan& p, const TrafficResult& r, bool loss) {
  nlohmann::ordered_json j = {{"netdaq", version()},
                              {"command", o.command},
                              {"config", p.session->config().source},
                              {"payload_size", run_block(p.session->config()).tx_payload_size}};
  write_result_json(j, r);
  if (!r.gpu.empty()) j["gpu"] = gpu_json(r);
  j["ok"] = !loss;
  if (write_file(o.json, j.dump(2) + "\n")) return true;
  std::fprintf(stderr, "%scannot write %s\n", prefix_of(o).c_str(), o.json.c_str());
  return false;
}

}  // namespace

void print_run_headline(const RunPlan& p) {
  const RunBlock& rc = run_block(p.session->config());
  std::FILE* out = p.out;
  std::fprintf(out, "netdaq run: %s: %zu tx queue%s, %zu rx queue%s, payload %u B, ",
               p.session->config().source.c_str(), p.ntx, p.ntx == 1 ? "" : "s", p.nrx, p.nrx == 1 ? "" : "s",
               rc.tx_payload_size);
  if (p.ntx && rc.tx_packets)
    std::fprintf(out, "%llu packets per tx queue", static_cast<unsigned long long>(rc.tx_packets));
  else if (p.traffic.duration_s > 0)
    std::fprintf(out, "%.1f s", p.traffic.duration_s);
  else
    std::fprintf(out, "until Ctrl-C");
  std::fprintf(out, " (Ctrl-C stops and prints the summary)\n");
  std::fflush(out);
}

int report_run(const RunOptions& o, const RunPlan& p, const TrafficResult& r) {
  print_summary(p.out, r);
  print_gpu_summary(p.out, r);
  const uint64_t sent = packets_sent(r);
  // Loss: anything lost, dropped or malformed, or a loop that carried nothing at all.
  const bool loss = r.total_lost() || r.total_drops() || r.total_malformed() || (p.ntx && p.nrx && sent == 0);
  if (!o.json.empty() && !write_run_json(o, p, r, loss)) return kExitError;
  if (o.expect_no_loss && loss) {
    std::fprintf(p.out, "%s--expect-no-loss: %s\n", prefix_of(o).c_str(),
                 sent == 0 ? "nothing was sent" : "packets were lost or dropped");
    return kExitLoss;
  }
  return kExitOk;
}

void add_metrics_options(CLI::App& cmd, RunOptions& o) {
  auto* metrics = cmd.add_option("--metrics", o.metrics,
                                 "Serve Prometheus metrics at http://HOST:PORT/metrics while the run lasts (port 0: a free one)")
                      ->type_name("HOST:PORT");
  cmd.add_option("--metrics-linger", o.metrics_linger,
                 "Keep serving the final metrics SECONDS after the summary (Ctrl-C stops), for a last scrape")
      ->type_name("SECONDS")
      ->check(CLI::NonNegativeNumber)
      ->needs(metrics);
}

int run_and_report(const RunOptions& o, RunPlan& p) {
  if (p.metrics) {
    std::fprintf(p.out, "metrics: %s\n", p.metrics->url().c_str());
    std::fflush(p.out);
  }
  const bool has_rx = p.nrx > 0, has_tx = p.ntx > 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> stats(nullptr, std::fclose);
  if (!o.stats.empty()) {
    stats.reset(std::fopen(o.stats.c_str(), "w"));
    if (!stats) {
      std::fprintf(stderr, "%s--stats %s: cannot write: %s\n", prefix_of(o).c_str(), o.stats.c_str(), std::strerror(errno));
      return kExitError;
    }
  }
  const auto live = [&](const LiveSample& s) {
    if (!o.quiet) print_live(p.out, s, has_rx, has_tx);
    if (stats) {
      const std::string line = live_json(s).dump() + "\n";
      std::fputs(line.c_str(), stats.get());
      std::fflush(stats.get());
    }
  };
  const std::optional<TrafficResult> r = run_traffic_or_print_error(*p.session, p.traffic, live, ("netdaq " + o.command).c_str());
  if (!r) return kExitError;
  if (p.metrics) p.metrics->freeze(*r);
  p.session->stop();
  const int code = report_run(o, p, *r);
  if (p.metrics) p.metrics->linger(o.metrics_linger, p.out);
  return code;
}

}  // namespace netdaq::cli
