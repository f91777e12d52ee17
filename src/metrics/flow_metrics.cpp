// Per-flow families of engines that classify packets (afxdp's eBPF program). A flow's
// queue_id is the NIC rx queue it is steered to.
#include <string>

#include "metrics/families.h"

namespace netdaq::metrics {

namespace {

struct FlowField {
  const char* name;
  const char* help;
  uint64_t FlowStats::*field;
};

constexpr FlowField kFlowCounters[] = {
    {"netdaq_flow_packets_total", "Packets of the flow steered to its queue.", &FlowStats::packets},
    {"netdaq_flow_bytes_total", "Bytes of the flow steered to its queue.", &FlowStats::bytes},
    {"netdaq_flow_wrong_queue_packets_total",
     "Packets of the flow that arrived on another NIC queue than the flow's (passed to the kernel).",
     &FlowStats::wrong_queue},
};

}  // namespace

void write_flow_metrics(TextWriter& w, std::span<const FlowStats> flows) {
  bool matched = false, unmatched = false;
  for (const auto& f : flows) (f.unmatched ? unmatched : matched) = true;
  if (matched) {
    for (const auto& c : kFlowCounters) {
      w.family(c.name, c.help, MetricType::counter);
      for (const auto& f : flows) {
        if (f.unmatched) continue;
        const std::string id = std::to_string(f.flow), queue = std::to_string(f.queue);
        w.sample({{"interface", f.interface}, {"flow", id}, {"queue_id", queue}}, f.*c.field);
      }
    }
  }
  if (!unmatched) return;
  w.family("netdaq_unmatched_packets_total", "Packets that matched no configured flow (passed to the kernel).",
           MetricType::counter);
  for (const auto& f : flows)
    if (f.unmatched) w.sample({{"interface", f.interface}}, f.packets);
  w.family("netdaq_unmatched_bytes_total", "Bytes of the packets that matched no configured flow.",
           MetricType::counter);
  for (const auto& f : flows)
    if (f.unmatched) w.sample({{"interface", f.interface}}, f.bytes);
}

}  // namespace netdaq::metrics
