// Allowed values of configuration fields: one table shared by the YAML loader (type errors),
// the validator (range errors) and docs/config.md, so every message names the same limits.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace netdaq::detail {

// Inclusive integer range.
struct Range {
  int64_t min;
  uint64_t max;
  bool contains(int64_t v) const noexcept { return v >= min && (v < 0 || static_cast<uint64_t>(v) <= max); }
  bool contains(uint64_t v) const noexcept {
    return v <= max && (min <= 0 || v >= static_cast<uint64_t>(min));
  }
  // "must be an integer 1..1024"
  std::string describe() const { return "must be an integer " + std::to_string(min) + ".." + std::to_string(max); }
};

template <class T>
constexpr Range type_range() {
  return {static_cast<int64_t>(std::numeric_limits<T>::min()), static_cast<uint64_t>(std::numeric_limits<T>::max())};
}

namespace limits {
inline constexpr Range buf_size{64, 1u << 20};
inline constexpr Range num_bufs{1, 1u << 30};
inline constexpr Range gpu{-1, static_cast<uint64_t>(std::numeric_limits<int>::max())};
inline constexpr Range batch_size{1, 1024};
inline constexpr Range timeout_us{0, 10'000'000};
inline constexpr Range ring_depth{1, 65536};
inline constexpr Range cpu_core{-1, 1023};
inline constexpr Range vlan{0, 4095};
inline constexpr Range tx_payload_size{24, 65507};
inline constexpr Range packets_per_frame{1, 1u << 20};
inline constexpr Range max_open_frames{1, 1024};
inline constexpr Range frame_buffers{1, 4096};
inline constexpr Range frame_timeout_us{1, 60'000'000};
inline constexpr Range bursts_in_flight{1, 64};
inline constexpr Range payload_size{1, 1u << 20};
inline constexpr Range job_packets{0, 65536};
inline constexpr Range job_timeout_us{1, 1'000'000};
inline constexpr Range stats_interval_ms{10, std::numeric_limits<uint32_t>::max()};
// afxdp engine: AF_XDP ring sizes (descriptors; also powers of two) and SO_BUSY_POLL_BUDGET.
inline constexpr Range xsk_ring{64, 16384};
inline constexpr Range busy_poll_budget{1, 1024};
// dpdk engine: descriptors per rx / tx queue, mbufs cached per lcore (RTE_MEMPOOL_CACHE_MAX_SIZE).
inline constexpr Range dpdk_desc{64, 32768};
inline constexpr Range mempool_cache{0, 512};
// eal: CPU ids of lcores (RTE_MAX_LCORE is 128 by default; 1024 covers builds that raise it)
// and the memory EAL reserves (-m, MiB).
inline constexpr Range eal_core{0, 1023};
inline constexpr Range eal_memory_mb{16, 1u << 20};
}  // namespace limits

// afxdp engine: flows per interface its eBPF program matches (the size of its flow map) and
// NIC rx queues it can redirect to (the slots of its XSK map: ids 0..255).
inline constexpr size_t kMaxAfxdpFlows = 64;
inline constexpr size_t kMaxAfxdpRxQueues = 256;
// AF_XDP UMEM chunk sizes: a power of two from XDP_UMEM_MIN_CHUNK_SIZE to the 4 KiB page.
inline constexpr std::array<uint32_t, 2> kAfxdpBufSizes{2048, 4096};
// dpdk engine: rx and tx queues per port, and flows per interface (rte_flow rules it creates).
inline constexpr size_t kMaxDpdkQueues = 1024;
inline constexpr size_t kMaxDpdkFlows = 1024;
// Bytes DPDK keeps in front of the packet in each mbuf (RTE_PKTMBUF_HEADROOM), and the
// smallest buf_size of a dpdk rx region: the headroom plus room for a packet's headers.
inline constexpr uint32_t kDpdkMbufHeadroom = 128;
inline constexpr uint32_t kDpdkMinRxBufSize = 256;
// MTU of a dpdk port: 0 (leave it) or the IPv4 minimum 68 up to a 16000-byte jumbo frame.
inline constexpr uint32_t kDpdkMinMtu = 68;
inline constexpr uint32_t kDpdkMaxMtu = 16000;
// Longest eal.file_prefix, and longest DPDK device name (RTE_DEV_NAME_MAX_LEN - 1).
inline constexpr size_t kMaxEalFilePrefix = 32;
inline constexpr size_t kMaxDpdkDeviceName = 63;
// Longest netdev name (IFNAMSIZ - 1).
inline constexpr size_t kMaxNetdevName = 15;

// Known names. An engine also counts as valid when it is registered under another name
// (tests and out-of-tree engines).
inline constexpr std::array<std::string_view, 4> kEngineNames{"socket", "afxdp", "dpdk", "rdma"};
inline constexpr std::array<std::string_view, 6> kLogLevels{"trace", "debug", "info", "warn", "error", "off"};
inline constexpr std::array<std::string_view, 5> kMemoryKindNames{"host", "huge", "pinned", "mapped", "device"};
inline constexpr std::array<std::string_view, 2> kPollModeNames{"direct", "worker"};
inline constexpr std::array<std::string_view, 7> kSampleFormatNames{"raw", "int4", "int8", "int16", "fp16", "bf16", "fp32"};
inline constexpr std::array<std::string_view, 2> kByteOrderNames{"little", "big"};
inline constexpr std::array<std::string_view, 2> kReorderModeNames{"sequence", "arrival"};
inline constexpr std::array<std::string_view, 3> kStagingNames{"auto", "copy", "direct"};
inline constexpr std::array<std::string_view, 3> kLaunchModeNames{"per_burst", "graph", "persistent"};
inline constexpr std::array<std::string_view, 3> kXdpAttachNames{"auto", "native", "generic"};
inline constexpr std::array<std::string_view, 3> kXskModeNames{"auto", "zero_copy", "copy"};
inline constexpr std::array<std::string_view, 3> kDpdkLoopbackNames{"none", "software", "hardware"};

}  // namespace netdaq::detail
