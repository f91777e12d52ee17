// `netdaq bench` as the user sees it: the headline, then (bench_report.cpp) the summary
// tables, the one-line result and the JSON; for --ping-pong its own (bench_pingpong_report.cpp).
#pragma once

#include <cstdio>

#include "bench_pingpong.h"
#include "bench_plan.h"
#include "traffic.h"

namespace netdaq::cli {

void print_bench_headline(std::FILE* out, const BenchOptions& o, const TrafficOptions& t);
// Prints and returns whether the accounting holds (bench_check.h; true when one end only).
bool report_bench(std::FILE* out, const BenchOptions& o, const TrafficResult& r);

// --ping-pong: the headline, then the result line and the JSON. Returns whether every message
// came back.
void print_ping_pong_headline(std::FILE* out, const BenchOptions& o);
bool report_ping_pong(std::FILE* out, const BenchOptions& o, const PingPongResult& r,
                      PingPongRole role = PingPongRole::both);

}  // namespace netdaq::cli
