// Which network devices UCX may use (UCX_NET_DEVICES). UCX offers a peer every device it
// finds; on a host with a sensor link and a fleet network the peer may pick the sensor link's
// address and never connect. So a sink names the devices its destinations route through and a
// receiver the device of its listen address.
#pragma once

#include <string>
#include <vector>

#include "netdaq/fleet.h"

namespace netdaq::fleet::detail {

// The devices (comma-separated, each once) this host sends to the addresses through, by the
// kernel's route lookup; "" when any cannot be found (then UCX's default: every device).
std::string devices_routing_to(const std::vector<Address>& destinations);
// The device holding the listen address; "" for a wildcard address or none found.
std::string device_of(const Address& listen);

}  // namespace netdaq::fleet::detail
