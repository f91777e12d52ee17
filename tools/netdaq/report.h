// Human output of run/bench: the periodic live line, the summary tables, and the JSON form
// of a TrafficResult.
#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "traffic.h"

namespace netdaq::cli {

std::string format_rate(double pps);     // "84.9 kpps"
std::string format_count(uint64_t n);    // "1,234,567"
void print_live(std::FILE* out, const LiveSample& s, bool has_rx, bool has_tx);
void print_summary(std::FILE* out, const TrafficResult& r);
// Members "queues", "streams" and "totals" of the current object.
void write_result_json(nlohmann::ordered_json& j, const TrafficResult& r);
nlohmann::ordered_json drops_json(const QueueStats& s);
nlohmann::ordered_json latency_json(const LatencyHistogram& l);
bool write_file(const std::string& path, const std::string& text);  // "-" = stdout

}  // namespace netdaq::cli
