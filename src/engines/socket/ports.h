// Socket engine: the four kinds of port (one source file each) and how the engine opens them.
//
//   udp_rx.cpp  UDP receive: recvmmsg into pool buffers, SO_REUSEPORT queues, GRO split
//   udp_ip_rx.cpp  UDP receive with IP headers (socket.ip_headers): raw socket, port filter
//   udp_tx.cpp  UDP send: sendmmsg from pool buffers, GSO batching
//   tcp_rx.cpp  TCP receive: listener, length-prefixed messages cut into pool buffers
//   tcp_tx.cpp  TCP send: reconnecting client, length-prefixed messages with writev
//
// TCP framing (both directions): every message is a 4-byte big-endian length L followed
// by L payload bytes. A message is one packet (its segments concatenated).
#pragma once

#include <memory>
#include <string>

#include "core/engine.h"
#include "netdaq/engines/socket.h"
#include "engines/socket/address.h"

namespace netdaq::detail::socket_engine {

// `addr` is where to bind; when its port is 0 the port the kernel picked is written back
// so that the interface's other queues join the same SO_REUSEPORT group.
std::unique_ptr<RxPort> open_udp_rx(const QueueResources& q, SockAddr& addr, const std::string& url,
                                    const std::string& context);
// socket.ip_headers: each packet keeps a synthetic Ethernet header and the received IPv4/UDP
// headers in front of its payload (udp_ip_rx.cpp).
std::unique_ptr<RxPort> open_udp_ip_rx(const QueueResources& q, SockAddr& addr, const std::string& url,
                                       const std::string& context);
std::unique_ptr<TxPort> open_udp_tx(const QueueResources& q, const SockAddr& dest, const std::string& url,
                                    const std::string& context);
std::unique_ptr<RxPort> open_tcp_rx(const QueueResources& q, SockAddr& addr, const std::string& url,
                                    const std::string& context);
std::unique_ptr<TxPort> open_tcp_tx(const QueueResources& q, const SockAddr& dest, const std::string& url,
                                    const std::string& context);

// Copies len bytes into a packet's segments (segment 0 first, the rest into segment 1) and
// sets their lengths. The caller guarantees len <= the packet's total capacity.
void scatter_into(PacketFields& f, const std::byte* src, uint32_t len) noexcept;
// Sets a packet's segment lengths for a datagram of len bytes received across them.
void set_packet_length(PacketFields& f, uint32_t len) noexcept;
// Total capacity of a queue's packets (the sum of its segments' buffer sizes).
uint32_t packet_capacity(const QueueResources& q) noexcept;

}  // namespace netdaq::detail::socket_engine
