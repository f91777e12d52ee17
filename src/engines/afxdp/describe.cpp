// The afxdp engine as the core sees it: capabilities, the `afxdp:` options (declared once
// here: key, type, range, default, doc) and its validation. Compiled in every build.
#include "core/engine_descriptor.h"
#include "core/option_table.h"
#include "engines/afxdp/limits.h"
#include "engines/afxdp/validate.h"
#include "netdaq/burst.h"
#include "netdaq/engines/afxdp.h"

namespace netdaq {
static_assert(static_cast<size_t>(XdpAttach::generic) + 1 == detail::afxdp_limits::kXdpAttachNames.size());
static_assert(static_cast<size_t>(XskMode::copy) + 1 == detail::afxdp_limits::kXskModeNames.size());
const char* to_string(XdpAttach a) noexcept { return detail::afxdp_limits::kXdpAttachNames[static_cast<size_t>(a)].data(); }
const char* to_string(XskMode m) noexcept { return detail::afxdp_limits::kXskModeNames[static_cast<size_t>(m)].data(); }
}  // namespace netdaq

namespace netdaq::detail {

namespace {

using namespace option;
using L = std::string_view;
namespace lim = afxdp_limits;

const std::vector<OptionDecl<AfxdpOptions>>& afxdp_options() {
  static const std::vector<OptionDecl<AfxdpOptions>> table{
      choice("attach", &AfxdpOptions::attach, lim::kXdpAttachNames, L("how the XDP program is attached")),
      choice("mode", &AfxdpOptions::mode, lim::kXskModeNames, L("AF_XDP socket: zero-copy, copy or auto")),
      flag("need_wakeup", &AfxdpOptions::need_wakeup, "XDP_USE_NEED_WAKEUP: syscalls only when the kernel asks"),
      integer("busy_poll_us", &AfxdpOptions::busy_poll_us, "SO_PREFER_BUSY_POLL + SO_BUSY_POLL (0 = off)"),
      integer("busy_poll_budget", &AfxdpOptions::busy_poll_budget, lim::busy_poll_budget, "packets per busy poll"),
      integer("rx_ring", &AfxdpOptions::rx_ring, lim::xsk_ring, "rx ring descriptors"),
      integer("fill_ring", &AfxdpOptions::fill_ring, lim::xsk_ring, "buffers each rx queue lends the kernel"),
      integer("tx_ring", &AfxdpOptions::tx_ring, lim::xsk_ring, "tx ring descriptors (packets in flight)"),
      integer("comp_ring", &AfxdpOptions::comp_ring, lim::xsk_ring, "completion ring descriptors"),
      text("dst_mac", &AfxdpOptions::dst_mac, "tx: destination MAC; empty: the neighbour table's entry"),
      text("src_ip", &AfxdpOptions::src_ip, "tx: source IP; empty: the interface's first address"),
      integer("src_port", &AfxdpOptions::src_port, "tx: UDP source port; 0: tx.destination's port"),
      flag("tx_raw_frames", &AfxdpOptions::tx_raw_frames, "tx: the application writes whole Ethernet frames"),
  };
  return table;
}

EngineDescriptor afxdp_descriptor() {
  EngineDescriptor d;
  d.name = "afxdp";
  d.capabilities = {.whole_frames = true, .flow_steering = true, .rx_ring_handover = true, .max_flows = static_cast<uint32_t>(lim::kMaxFlows),
                    .max_queues = static_cast<uint32_t>(lim::kMaxRxQueues),
                    .rx_buffers_per_packet = kMaxSegments};  // multi-buffer receive (rx.cpp)
  d.capabilities_of = [caps = d.capabilities](const InterfaceConfig& i) {
    EngineCapabilities c = caps;
    c.tx_whole_frames = i.options.get<AfxdpOptions>().tx_raw_frames;
    return c;
  };
  d.blocks = {block_spec(afxdp_options())};
  d.validate = check_afxdp_engine;
  // Rx: the fill ring's buffers wait in the kernel; tx: sent, not yet completed.
  d.lent_buffers = [](const InterfaceConfig& i, bool rx) -> uint64_t {
    const auto& o = i.options.get<AfxdpOptions>();
    return rx ? o.fill_ring : o.tx_ring;
  };
  d.lent_buffers_why = [](const InterfaceConfig&, bool rx) {
    return std::string(rx ? " in the kernel (afxdp.fill_ring)" : " in flight (afxdp.tx_ring)");
  };
  d.lent_knobs_rx = "afxdp.fill_ring";
  d.lent_knobs_tx = "afxdp.tx_ring";
  return d;
}

}  // namespace

void describe_afxdp_engine() { describe_engine(afxdp_descriptor()); }

}  // namespace netdaq::detail
