// The dpdk engine's configuration rules (validate.cpp), checked without touching the system.
#pragma once

#include <string>
#include <vector>

#include "core/config_check.h"
#include "netdaq/engines/dpdk.h"

namespace netdaq::detail {
void check_dpdk_engine(Checker& c, const InterfaceConfig& iface, const std::string& path);
// eal: (DPDK's environment): its values, and that some interface uses the dpdk engine.
void check_eal(Checker& c);
// eal: keys set to other values than their defaults (describe.cpp, from the declarations).
std::vector<std::string> set_eal_keys(const EalConfig& e);
}  // namespace netdaq::detail
