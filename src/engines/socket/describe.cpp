// The socket engine as the core sees it: capabilities, the `socket:` options (declared once
// here: key, type, range, default, doc) and its validation. Compiled in every build.
#include "core/engine_descriptor.h"
#include "core/option_table.h"
#include "engines/socket/validate.h"
#include "netdaq/engines/socket.h"

namespace netdaq::detail {

namespace {

using namespace option;

const std::vector<OptionDecl<SocketOptions>>& socket_options() {
  static const std::vector<OptionDecl<SocketOptions>> table{
      flag("gro", &SocketOptions::gro, "UDP GRO on receive when the kernel has it"),
      flag("gso", &SocketOptions::gso, "UDP GSO on send when the kernel has it"),
      integer("rcvbuf", &SocketOptions::rcvbuf, "SO_RCVBUF bytes (SO_RCVBUFFORCE as root)"),
      integer("sndbuf", &SocketOptions::sndbuf, "SO_SNDBUF bytes"),
      integer("busy_poll_us", &SocketOptions::busy_poll_us, "SO_BUSY_POLL"),
      text("multicast_interface", &SocketOptions::multicast_interface, "netdev to join the multicast group on"),
      integer("tcp_max_message", &SocketOptions::tcp_max_message, "TCP: largest message accepted (0: buf_size)"),
      integer("reconnect_ms", &SocketOptions::reconnect_ms, "TCP client: delay between reconnect attempts"),
      flag("ip_headers", &SocketOptions::ip_headers, "UDP rx: IPv4/UDP headers kept in front of each payload"),
  };
  return table;
}

}  // namespace

void describe_socket_engine() {
  EngineDescriptor d;
  d.name = kSocketEngine;
  d.blocks = {block_spec(socket_options())};
  d.blocks[0].common_names = true;  // gro, rcvbuf, busy_poll_us: what other engines call theirs
  // ip_headers: a synthetic Ethernet header and the received IP/UDP headers in Packet::frame().
  d.capabilities_of = [](const InterfaceConfig& i) {
    EngineCapabilities c;
    c.whole_frames = i.options.get<SocketOptions>().ip_headers;
    return c;
  };
  d.validate = check_socket_engine;
  describe_engine(std::move(d));
}

}  // namespace netdaq::detail
