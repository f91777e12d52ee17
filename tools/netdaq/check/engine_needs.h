// What each engine asks of the host, the one place `netdaq check` maps engines to checks
// (the rest of the CLI asks library capabilities, netdaq/engine_info.h; these are the host's
// side: drivers, limits, privileges). Keyed by the engines' own constants, never spelled here.
#pragma once

#include <string>

namespace netdaq::cli::check {

enum class Addressing {
  none,    // no NIC (a capture file, a virtual device)
  netdev,  // address is the netdev (afxdp)
  pci,     // address is a PCI address or a virtual device with iface= (dpdk)
  ip,      // address or tx.destination is an IP endpoint; routes pick the netdev (socket, rdma)
};

struct EngineNeeds {
  Addressing addressing = Addressing::ip;
  bool xdp = false;          // attaches XDP programs: native driver support, LRO and GRO off
  bool owns_port = false;    // takes the PCI port (vfio-pci), sets its own rings; hugepages, IOMMU
  bool nic_queues = false;   // queue ids are the NIC's queues (channels)
  bool pins_memory = false;  // its buffers count against RLIMIT_MEMLOCK (UMEM, memory registrations)
  bool roce = false;         // reaches its peer through an RDMA device and a RoCE v2 GID
  bool gro = false;          // uses the kernel's UDP GRO (socket.gro)
  bool cap_net_admin = false, cap_net_raw = false, cap_bpf = false, cap_sys_admin = false, cap_ipc_lock = false;
};

// The needs of `engine` (an unknown engine: IP addressing, nothing else).
EngineNeeds needs_of(const std::string& engine);
// Both needs together (the NICs several interfaces share).
EngineNeeds& operator|=(EngineNeeds& a, const EngineNeeds& b);

}  // namespace netdaq::cli::check
