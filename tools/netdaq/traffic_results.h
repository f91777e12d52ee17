// What the threads of a traffic run counted, as a TrafficResult: per sender, per receiver,
// per stream (checked against what its sender sent, or the rx-only expected count).
#pragma once

#include "traffic.h"
#include "traffic_plan.h"

namespace netdaq::cli {

// Fills res.tx, res.rx, res.gpu and res.streams. Call after the threads were joined.
void collect_results(Workers& w, const TrafficOptions& opt, TrafficResult& res);

}  // namespace netdaq::cli
