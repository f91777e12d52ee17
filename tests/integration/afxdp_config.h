// Configs of afxdp receivers and senders in a netns lab, without gtest: used by the afxdp
// integration tests (through afxdp_util.h) and by bench/roce_sw.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "netdaq/engines/afxdp.h"
#include "netdaq/netdaq.h"

namespace ndqtest {

netdaq::FlowConfig udp_flow(uint32_t id, uint16_t queue, uint16_t udp_dst);

// Interface "x0" of the afxdp engine on netdev dev: rx queues (direct mode) with flows,
// and/or one tx queue `tx_queue` sending to destination.
struct AfxdpIface {
  std::string dev;
  std::vector<uint16_t> rx_queues;
  std::vector<netdaq::FlowConfig> flows;
  std::optional<uint16_t> tx_queue;
  std::string destination;  // udp://ip:port
  std::string dst_mac;
  double rate_pps = 0;
  uint32_t buf_size = 2048;  // the umem region's buffers
  uint32_t num_bufs = 8192;
  netdaq::PollMode mode = netdaq::PollMode::direct;
  uint32_t ring_depth = 16;
  netdaq::AfxdpOptions afxdp = {};
  netdaq::Config build() const;
};

}  // namespace ndqtest
