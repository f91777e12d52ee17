// Works out the headers a TX queue puts in front of each payload: source MAC and IP from the
// interface (or the config), destination from tx.destination, its MAC from afxdp.dst_mac or
// the kernel's neighbour table.
#pragma once

#include <string>

#include "engines/afxdp/interface_info.h"
#include "net/frame_headers.h"
#include "netdaq/config.h"
#include "netdaq/engines/afxdp.h"

namespace netdaq::detail::afxdp {

// Throws Error(invalid_config / not_found) saying what is missing and how to provide it.
Ipv4UdpHeaders resolve_tx_headers(const NetdevInfo& dev, const InterfaceConfig& iface, const std::string& context);

}  // namespace netdaq::detail::afxdp
