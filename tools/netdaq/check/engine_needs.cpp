#include "check/engine_needs.h"

#include "netdaq/engines/afxdp.h"
#include "netdaq/engines/dpdk.h"
#if __has_include("netdaq/engines/pcap.h")  // the capture-file engine, where this tree has it
#include "netdaq/engines/pcap.h"
#define NETDAQ_CHECK_PCAP 1
#endif
#include "netdaq/engines/rdma.h"
#include "netdaq/engines/socket.h"

namespace netdaq::cli::check {

EngineNeeds needs_of(const std::string& engine) {
  EngineNeeds n;
  if (engine == AfxdpOptions::kKey) {
    n.addressing = Addressing::netdev;
    n.xdp = n.nic_queues = n.pins_memory = true;
    n.cap_net_admin = n.cap_net_raw = n.cap_bpf = true;  // XDP attach, AF_XDP sockets, BPF maps
  } else if (engine == DpdkOptions::kKey) {
    n.addressing = Addressing::pci;
    n.owns_port = n.nic_queues = true;
    n.cap_sys_admin = n.cap_ipc_lock = n.cap_net_admin = true;  // vfio, hugepages, pagemap
  } else if (engine == kRdmaEngine) {
    n.pins_memory = n.roce = true;
#ifdef NETDAQ_CHECK_PCAP
  } else if (engine == kPcapEngine) {
    n.addressing = Addressing::none;
#endif
  } else if (engine == kSocketEngine) {
    n.gro = true;  // refined by the interface's socket.gro
  }
  return n;
}

EngineNeeds& operator|=(EngineNeeds& a, const EngineNeeds& b) {
  if (a.addressing == Addressing::none) a.addressing = b.addressing;
  a.xdp |= b.xdp;
  a.owns_port |= b.owns_port;
  a.nic_queues |= b.nic_queues;
  a.pins_memory |= b.pins_memory;
  a.roce |= b.roce;
  a.gro |= b.gro;
  a.cap_net_admin |= b.cap_net_admin;
  a.cap_net_raw |= b.cap_net_raw;
  a.cap_bpf |= b.cap_bpf;
  a.cap_sys_admin |= b.cap_sys_admin;
  a.cap_ipc_lock |= b.cap_ipc_lock;
  return a;
}

}  // namespace netdaq::cli::check
