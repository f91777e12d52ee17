// Human and JSON output of a TrafficResult (run/bench): the periodic live line
// (live_line.cpp), the summary tables (summary_text.cpp) and the JSON form (result_json.cpp).
#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "format.h"
#include "traffic.h"

namespace netdaq::cli {

void print_live(std::FILE* out, const LiveSample& s, bool has_rx, bool has_tx);
void print_summary(std::FILE* out, const TrafficResult& r);
// Members "seconds", "interrupted", "queues", "flows", "streams" and "totals" of the current object.
void write_result_json(nlohmann::ordered_json& j, const TrafficResult& r);
nlohmann::ordered_json drops_json(const QueueStats& s);
nlohmann::ordered_json latency_json(const LatencyHistogram& l);
// One line of `netdaq run --stats FILE`: a live sample with its drops per reason.
nlohmann::ordered_json live_json(const LiveSample& s);

}  // namespace netdaq::cli
