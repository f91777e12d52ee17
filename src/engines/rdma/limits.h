// The rdma engine's limits, shared by its validation (compiled in every build) and its runtime.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "core/config_limits.h"

namespace netdaq::detail::rdma_limits {

// Work requests per queue pair: what every verbs device takes (rxe: up to 32768).
inline constexpr Range depth{1, 16384};
// Inline data: rxe and ConnectX take a few hundred bytes; larger messages are DMA'd.
inline constexpr Range max_inline{0, 1024};
inline constexpr Range min_rnr_timer{0, 31};  // IB encoding (1: 0.01 ms .. 31: 491.52 ms; 0: 655.36 ms)
inline constexpr Range timeout_ms{1, 600'000};
inline constexpr Range gid_index{0, 255};
inline constexpr Range psn{0, (1u << 24) - 1};  // packet sequence numbers are 24 bits
inline constexpr std::array<uint32_t, 5> kMtus{256, 512, 1024, 2048, 4096};
// The largest message: rxe on Linux 6.1 refuses more than 8 MiB per work request.
inline constexpr uint32_t kMaxMessage = 8u << 20;

inline constexpr std::array<std::string_view, 2> kTransportNames{"rc", "uc"};
inline constexpr std::array<std::string_view, 2> kConnectNames{"cm", "manual"};
inline constexpr std::array<std::string_view, 2> kOpNames{"send", "write_imm"};

}  // namespace netdaq::detail::rdma_limits
