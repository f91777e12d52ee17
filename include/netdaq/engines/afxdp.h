// Options of the afxdp engine (AF_XDP sockets, eBPF steering); docs/afxdp-engine.md. The
// block `afxdp:` of an interface; on another engine's interface, options that differ from
// these defaults are a validation error.
#pragma once

#include <cstdint>
#include <string>

namespace netdaq {

enum class XdpAttach : uint8_t {
  automatic,  // native (driver) XDP, generic (skb) XDP when the driver has none
  native,     // driver XDP only: fail if the driver cannot
  generic,    // skb XDP: every driver, slower
};
const char* to_string(XdpAttach a) noexcept;

enum class XskMode : uint8_t {
  automatic,  // zero-copy when the driver can, else copy (the reason is logged)
  zero_copy,  // fail if the driver cannot
  copy,       // the kernel copies packets into the UMEM
};
const char* to_string(XskMode m) noexcept;

struct AfxdpOptions {
  static constexpr const char* kKey = "afxdp";
  XdpAttach attach = XdpAttach::automatic;
  XskMode mode = XskMode::automatic;
  bool need_wakeup = true;        // XDP_USE_NEED_WAKEUP: syscalls only when the kernel asks
  uint32_t busy_poll_us = 0;      // SO_PREFER_BUSY_POLL + SO_BUSY_POLL (0 = off)
  uint32_t busy_poll_budget = 64; // SO_BUSY_POLL_BUDGET (packets per busy poll)
  // Ring sizes: descriptors, each a power of two 64..16384.
  uint32_t rx_ring = 2048;
  uint32_t fill_ring = 2048;      // buffers each rx queue lends the kernel (<= its region's num_bufs;
                                  // counted in the pool budget)
  uint32_t tx_ring = 2048;        // packets in flight per tx queue (counted in the pool budget)
  uint32_t comp_ring = 2048;      // <= the num_bufs of each tx queue's region
  // TX: Ethernet/IP/UDP headers the engine writes in front of each payload.
  std::string dst_mac;            // default: the neighbour table entry of tx.destination
  std::string src_ip;             // default: the interface's first address of the family
  uint16_t src_port = 0;          // default: tx.destination's port
  // TX: the application writes the whole Ethernet frame (Packet::buffer() starts at the
  // Ethernet header; no tx.destination, dst_mac, src_ip, src_port): protocols whose checks
  // cover the headers (RoCEv2's ICRC covers IP ID and flags).
  bool tx_raw_frames = false;
};

}  // namespace netdaq
