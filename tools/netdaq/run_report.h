// `netdaq run`, stages 2 and 3 as the user sees them: the headline saying what is about to
// run, and the report afterwards (summary, GPU lines, JSON, the --expect-no-loss verdict).
#pragma once

#include "run_plan.h"
#include "traffic.h"

namespace netdaq::cli {

void print_run_headline(const RunPlan& p);
// Returns the exit code.
int report_run(const RunOptions& o, const RunPlan& p, const TrafficResult& r);

}  // namespace netdaq::cli
