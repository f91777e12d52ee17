// DPDK's environment (EAL): one per process, initialised from the first config with a dpdk
// interface and kept until the process exits (DPDK cannot initialise it twice). Owns the
// files EAL leaves behind: its runtime directory is removed at exit, after a failed start,
// and for earlier netdaq processes that died without removing theirs.
#pragma once

#include <string>

#include "netdaq/config.h"
#include "netdaq/engines/dpdk.h"

namespace netdaq::detail::dpdk {

// Initialises EAL on the first call; later calls check that they ask for the same EAL.
// Throws Error: resource (hugepages missing: says how to reserve them), state (EAL already
// running with other eal: settings, or failed earlier in this process), system (EAL's own
// error, with its last log lines).
void acquire_eal(const Config& config);

// The EAL arguments this config gives (for logs and tests).
std::string eal_arguments(const Config& config);

// EAL's last error lines (what DPDK logged at error level), for error messages.
std::string last_dpdk_errors();

}  // namespace netdaq::detail::dpdk
