// `netdaq run`, stages 2 and 3 as the user sees them: the headline saying what is about to
// run, and the report afterwards (summary, GPU lines, JSON, the --expect-no-loss verdict).
#pragma once

#include <CLI/CLI.hpp>

#include "run_plan.h"
#include "traffic.h"

namespace netdaq::cli {

void print_run_headline(const RunPlan& p);
// Returns the exit code.
int report_run(const RunOptions& o, const RunPlan& p, const TrafficResult& r);
// After the headline: the traffic (live line, --stats lines, --metrics), then the report.
// Returns the exit code.
int run_and_report(const RunOptions& o, RunPlan& p);
// --metrics HOST:PORT and --metrics-linger S (run, replay).
void add_metrics_options(CLI::App& cmd, RunOptions& o);

}  // namespace netdaq::cli
