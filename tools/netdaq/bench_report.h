// `netdaq bench` as the user sees it: the headline, then (bench_report.cpp) the summary
// tables, the one-line result and the JSON.
#pragma once

#include <cstdio>

#include "bench_plan.h"
#include "traffic.h"

namespace netdaq::cli {

void print_bench_headline(std::FILE* out, const BenchOptions& o, const TrafficOptions& t);
// Prints and returns whether the accounting holds (bench_check.h; true when one end only).
bool report_bench(std::FILE* out, const BenchOptions& o, const TrafficResult& r);

}  // namespace netdaq::cli
