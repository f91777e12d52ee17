// Hugepages for EAL: whether enough are free, and what to tell the user when they are not.
#pragma once

#include <cstdint>

namespace netdaq::detail::dpdk {

// Throws Error(resource) when less than memory_mb MiB of hugepages are free, saying how many
// there are and how to reserve more (or to run without them).
void check_hugepages(uint32_t memory_mb);

}  // namespace netdaq::detail::dpdk
