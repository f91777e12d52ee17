// Options of the socket engine (kernel UDP/TCP sockets); docs/socket-engine.md. The block
// `socket:` of an interface; ignored by rdma, an error on another engine's interface when set.
#pragma once

#include <cstdint>
#include <string>

namespace netdaq {

// The engine's name (InterfaceConfig::engine).
inline constexpr const char* kSocketEngine = "socket";

struct SocketOptions {
  static constexpr const char* kKey = "socket";
  bool gro = true;                // UDP GRO on receive when the kernel has it
  bool gso = true;                // UDP GSO on send when the kernel has it
  uint32_t rcvbuf = 32u << 20;    // SO_RCVBUF (bytes; raised with SO_RCVBUFFORCE as root)
  uint32_t sndbuf = 8u << 20;
  uint32_t busy_poll_us = 0;      // SO_BUSY_POLL
  std::string multicast_interface;  // netdev to join the group on (address is a group)
  uint32_t tcp_max_message = 0;   // TCP: largest message accepted (0 = payload buf_size)
  uint32_t reconnect_ms = 200;    // TCP client: delay between reconnect attempts
  bool ip_headers = false;        // UDP rx: keep the IPv4/UDP headers (raw socket) in front of
                                  // each payload, so Packet::frame() has them (e.g. RoCEv2 ICRC)
};

}  // namespace netdaq
