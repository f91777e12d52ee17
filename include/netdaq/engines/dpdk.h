// Options of the dpdk engine; docs/dpdk-engine.md. The block `dpdk:` of an interface (its
// port; on another engine's interface, options that differ from these defaults are a
// validation error) and the top-level block `eal:` (DPDK's environment, one per process).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace netdaq {

enum class DpdkLoopback : uint8_t {
  none,
  software,  // the engine hands tx bursts to the rx queue of the same id (no NIC involved)
  hardware,  // the port's own loopback (rte_eth_conf.lpbk_mode = 1), where the PMD has one
};
const char* to_string(DpdkLoopback l) noexcept;

struct DpdkOptions {
  static constexpr const char* kKey = "dpdk";
  uint16_t rx_desc = 1024;        // descriptors per rx queue (64..32768)
  uint16_t tx_desc = 1024;        // descriptors per tx queue (counted in the pool budget)
  uint32_t mtu = 0;               // 0: leave the port's MTU
  bool promiscuous = true;
  bool isolate = false;           // rte_flow isolated mode: only the flows reach netdaq, the
                                  // rest goes to the kernel (PMDs with a kernel side: mlx5, tap)
  DpdkLoopback loopback = DpdkLoopback::none;
  bool tx_checksum_offload = true;  // IPv4/UDP checksums by the NIC where it can, else by the CPU
  uint32_t mempool_cache = 256;   // mbufs cached per lcore (0..512)
  bool raw_frames = false;        // rx: hand over whole Ethernet frames (any protocol, e.g.
                                  // eCPRI) instead of UDP payloads; no software flow matching
  // TX: Ethernet/IPv4/UDP headers the engine writes in front of each payload.
  std::string dst_mac;            // required for tx (DPDK has no neighbour table)
  std::string src_ip;             // required for tx
  uint16_t src_port = 0;          // default: tx.destination's port
  // TX: the application writes the whole Ethernet frame (Packet::buffer() starts at the
  // Ethernet header; no tx.destination, dst_mac, src_ip, src_port, no checksum offload).
  bool tx_raw_frames = false;
};

// DPDK's environment (EAL), one per process: the first Session with a dpdk interface
// initialises it from its config; later sessions must ask for the same EAL or none.
struct EalConfig {
  static constexpr const char* kKey = "eal";
  std::vector<int> cores;         // CPUs EAL lcores run on (-l); default: main_core only
  int main_core = -1;             // --main-lcore; default: first of cores, else the first CPU
                                  // this process may run on
  bool hugepages = true;          // false: --no-huge (plain memory; slower, vdevs only)
  uint32_t memory_mb = 256;       // memory EAL reserves for mbuf headers, rings and queues
  std::string file_prefix;        // default netdaq-<pid>: processes never share EAL files
  std::vector<std::string> allow; // PCI devices EAL may use besides the dpdk interfaces' own
  std::vector<std::string> vdevs; // virtual devices besides the dpdk interfaces' own
  std::vector<std::string> args;  // further EAL arguments, verbatim (e.g. --log-level=pmd,8)
  bool operator==(const EalConfig&) const = default;
};

}  // namespace netdaq
