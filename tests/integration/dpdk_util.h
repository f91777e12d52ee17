// Shared pieces of the dpdk integration tests: configs for dpdk interfaces on virtual devices
// (EAL on plain memory unless a test asks for hugepages), and hugepages reserved for a test
// and given back afterwards.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "afxdp_util.h"
#include "hugepage_pool.h"
#include "peers.h"
#include "test_util.h"

namespace ndqtest {

bool dpdk_built();
#define NDQ_REQUIRE_DPDK()                                                                          \
  do {                                                                                              \
    NDQ_REQUIRE_ROOT();                                                                             \
    NDQ_REQUIRE(::ndqtest::dpdk_built(), "netdaq was built without the dpdk engine (libdpdk-dev)"); \
  } while (0)

// Interface "d0" of the dpdk engine on `device` (e.g. "net_ring0"): rx queues 0..rx_queues-1
// and tx queues 0..tx_queues-1, each with a region of its own.
struct DpdkIface {
  std::string device;
  unsigned rx_queues = 1;
  unsigned tx_queues = 0;
  std::vector<netdaq::FlowConfig> flows;
  std::string destination = "udp://10.9.0.2:5000";
  uint32_t num_bufs = 4096;
  uint32_t batch = 64;
  netdaq::PollMode mode = netdaq::PollMode::direct;
  netdaq::DpdkOptions dpdk = defaults();
  netdaq::EalConfig eal = plain_memory();
  std::string log_level = "warn";

  static netdaq::DpdkOptions defaults() {
    netdaq::DpdkOptions o;
    o.dst_mac = "02:00:00:00:00:02";
    o.src_ip = "10.9.0.1";
    o.rx_desc = 512;
    o.tx_desc = 512;
    return o;
  }
  static netdaq::EalConfig plain_memory() {
    netdaq::EalConfig e;
    e.hugepages = false;
    e.memory_mb = 128;
    return e;
  }
  netdaq::Config build() const;
};

// Files under the EAL runtime directories and hugetlbfs mounts that a file prefix left.
std::vector<std::string> dpdk_files(const std::string& prefix);

}  // namespace ndqtest
