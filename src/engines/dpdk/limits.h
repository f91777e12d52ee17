// The dpdk engine's limits, shared by its validation (compiled in every build, also without
// DPDK) and its runtime (which checks them against DPDK's own constants: rx.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/config_limits.h"

namespace netdaq::detail::dpdk_limits {

// Descriptors per rx / tx queue, and mbufs cached per lcore (RTE_MEMPOOL_CACHE_MAX_SIZE).
inline constexpr Range desc{64, 32768};
inline constexpr Range mempool_cache{0, 512};
// eal: CPU ids of lcores (RTE_MAX_LCORE is 128 by default; 1024 covers builds that raise it)
// and the memory EAL reserves (-m, MiB).
inline constexpr Range eal_core{0, 1023};
inline constexpr Range eal_memory_mb{16, 1u << 20};
// Rx and tx queues per port, and flows per interface (rte_flow rules it creates).
inline constexpr size_t kMaxQueues = 1024;
inline constexpr size_t kMaxFlows = 1024;
// Bytes DPDK keeps in front of the packet in each mbuf (RTE_PKTMBUF_HEADROOM), and the
// smallest buf_size of a dpdk rx region: the headroom plus room for a packet's headers.
inline constexpr uint32_t kMbufHeadroom = 128;
inline constexpr uint32_t kMinRxBufSize = 256;
// MTU of a port: 0 (leave it) or the IPv4 minimum 68 up to a 16000-byte jumbo frame.
inline constexpr uint32_t kMinMtu = 68;
inline constexpr uint32_t kMaxMtu = 16000;
// Longest eal.file_prefix, and longest DPDK device name (RTE_DEV_NAME_MAX_LEN - 1).
inline constexpr size_t kMaxEalFilePrefix = 32;
inline constexpr size_t kMaxDeviceName = 63;

inline constexpr std::array<std::string_view, 3> kLoopbackNames{"none", "software", "hardware"};

}  // namespace netdaq::detail::dpdk_limits
