// What each engine can do, asked by name or for a configured interface: applications, the
// CLI, the validator and the GPU code decide by capabilities, never by engine names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "netdaq/config.h"

namespace netdaq {

struct EngineCapabilities {
  bool whole_frames = false;       // Packet::frame() holds each packet's whole Ethernet frame
  bool raw_frames = false;         // frames of any protocol, not UDP payloads (an option of the
                                   // interface, e.g. dpdk.raw_frames): no netdaq payload to check
  bool tx_whole_frames = false;    // TX: the application writes each packet's whole Ethernet frame
                                   // (an option of the interface, e.g. afxdp.tx_raw_frames)
  bool header_data_split = false;  // a queue may name 2 regions: headers, then data
  bool device_memory = false;      // receives into GPU device memory (kind device; with header-
                                   // data split: the data region)
  bool flow_steering = false;      // rx.flows steer packets to their queues (NIC or eBPF)
  bool flow_rss = false;           // a flow spread over several rx queues (rx.flows[].queues)
  bool runtime_flows = false;      // Session::add_flow / remove_flow
  bool immediate_data = false;     // Packet::immediate() carries each message's sequence
                                   // (rdma op write_imm): rx.reorder mode immediate
  bool finite_source = false;      // rx queues read a source that ends (a capture file):
                                   // RxQueue::finished() says when it has been read to its end
  bool rx_ring_handover = false;   // RxQueue::hand_over_rings: a GPU kernel or a CPU thread may own the
                                   // queue's RX and fill rings (rx.reorder launch: rings)
  uint32_t max_flows = 0;          // rx.flows per interface
  uint32_t max_queues = 0;         // rx (and tx) queues per interface; 0: no engine limit
  uint32_t rx_buffers_per_packet = 1;  // RX: buffers one packet may fill (afxdp multi-buffer: 2,
                                       // a packet of two segments); 1: a packet fits one buffer
};

struct EngineInfo {
  std::string name;
  bool built_in = false;           // its runtime is compiled into this netdaq
  EngineCapabilities capabilities;
};

// Every engine netdaq knows (its configuration is validated even where its runtime is not
// built in), in a stable order.
std::vector<EngineInfo> known_engines();
// An engine by name; nullopt when netdaq knows none by that name.
std::optional<EngineInfo> engine_info(std::string_view name);
// The capabilities of an interface's engine with the interface's options applied;
// nullopt for an unknown engine.
std::optional<EngineCapabilities> capabilities_of(const InterfaceConfig& iface);

}  // namespace netdaq
