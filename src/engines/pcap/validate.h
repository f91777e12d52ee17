// The pcap engine's configuration rules (validate.cpp), checked without touching the system.
#pragma once

#include <string>

#include "core/config_check.h"

namespace netdaq::detail {
void check_pcap_engine(Checker& c, const InterfaceConfig& iface, const std::string& path);
}  // namespace netdaq::detail
