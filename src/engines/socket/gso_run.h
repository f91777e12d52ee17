// UDP GSO's unit: a run of consecutive packets that leaves as one message with a UDP_SEGMENT
// cmsg, which the kernel (or the NIC) cuts into datagrams of the run's first packet's size.
#pragma once

#include <algorithm>
#include <cstdint>

namespace netdaq::detail::socket_engine {

inline constexpr uint32_t kMaxGsoBytes = 65507;  // largest UDP payload over IPv4

// The packets in the run that starts at packet i of n (size(k): packet k's bytes): packets of
// size(i) bytes, the last one possibly shorter, at most max_segments and kMaxGsoBytes in all.
// A packet of 0 bytes runs alone.
template <class SizeOf>
uint32_t gso_run(SizeOf size, uint32_t i, uint32_t n, uint32_t max_segments) noexcept {
  const uint32_t seg = size(i);
  if (seg == 0) return 1;
  const uint32_t limit = std::min(max_segments, kMaxGsoBytes / seg);
  uint32_t run = 1;
  while (i + run < n && run < limit && size(i + run) == seg) ++run;
  if (i + run < n && run < limit) {  // a shorter packet may end the run
    const uint32_t last = size(i + run);
    if (last > 0 && last < seg) ++run;
  }
  return run;
}

}  // namespace netdaq::detail::socket_engine
