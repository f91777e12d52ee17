// `netdaq run`, stage 1, the plan: the config (file or built-in, with the command line's
// overrides), the session, a GPU frame pipeline for each rx.reorder entry, and the traffic
// options for run_traffic.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "netdaq/gpu_xsk.h"
#include "netdaq/netdaq.h"
#include "run_metrics.h"
#include "traffic.h"

namespace netdaq::cli {

struct RunOptions {
  std::string command = "run";  // names the command in messages and the JSON (run, replay)
  std::string config;
  std::optional<double> duration;
  std::optional<uint64_t> packets;
  std::string json;
  std::string stats;  // --stats FILE: a JSON line per stats interval
  bool expect_no_loss = false;
  bool print_config = false;
  bool quiet = false;
  bool no_verify = false;
  std::function<void(Config&)> adjust_config;  // netdaq replay: feeds the rx interface from a file
  std::string metrics;        // --metrics HOST:PORT: serve Prometheus metrics while the run lasts
  double metrics_linger = 0;  // --metrics-linger S: and S seconds after the summary
};

struct RunPlan {
  std::FILE* out = stdout;  // the text; stderr when the JSON goes to stdout
  std::unique_ptr<Session> session;
  // Declared after the session: destroyed before it.
  std::vector<std::unique_ptr<gpu::FramePipeline>> pipelines;
  std::vector<std::unique_ptr<gpu::XskFrameReceiver>> rings;  // launch: rings
  TrafficOptions traffic;
  size_t ntx = 0, nrx = 0;
  // --metrics: declared last, stopped before the pipelines and the session go.
  std::unique_ptr<RunMetrics> metrics;
};

// "netdaq run: " (or the command that plans the run)
inline std::string prefix_of(const RunOptions& o) { return "netdaq " + o.command + ": "; }

// nullopt when the config or the session failed (printed on stderr).
std::optional<RunPlan> plan_run(const RunOptions& o);

}  // namespace netdaq::cli
