// The afxdp engine's limits, shared by its validation (compiled in every build) and its
// runtime. The eBPF program's map sizes come from the same header the program is built with.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/config_limits.h"
#include "engines/afxdp/bpf/steer_abi.h"

namespace netdaq::detail::afxdp_limits {

// AF_XDP ring sizes (descriptors; also powers of two) and SO_BUSY_POLL_BUDGET.
inline constexpr Range xsk_ring{64, 16384};
inline constexpr Range busy_poll_budget{1, 1024};
// Flows per interface the eBPF program matches (its flow map) and NIC rx queues it can
// redirect to (the slots of its XSK map).
inline constexpr size_t kMaxFlows = NDQ_MAX_FLOWS;
inline constexpr size_t kMaxRxQueues = NDQ_MAX_QUEUES;
// UMEM chunk sizes: a power of two from XDP_UMEM_MIN_CHUNK_SIZE to the 4 KiB page.
inline constexpr std::array<uint32_t, 2> kBufSizes{2048, 4096};
// Longest netdev name (IFNAMSIZ - 1).
inline constexpr size_t kMaxNetdevName = 15;

inline constexpr std::array<std::string_view, 3> kXdpAttachNames{"auto", "native", "generic"};
inline constexpr std::array<std::string_view, 3> kXskModeNames{"auto", "zero_copy", "copy"};

}  // namespace netdaq::detail::afxdp_limits
