// Asks for a packet's bytes (its whole frame when the engine keeps one) ahead of its turn: a
// decoder's first pass over them (RoCE: the ICRC) otherwise waits on every cache miss in turn
// (bench/roce_sw.md). HostFrames fetches kPrefetchAhead packets ahead; the roce_sw bench's
// diagnostics do the same.
#pragma once

#include <cstddef>

#include "netdaq/burst.h"

namespace netdaq::frames {

constexpr size_t kPrefetchAhead = 2;  // packets: far enough for the misses, near enough to stay cached

inline void prefetch_packet(const Packet& p) noexcept {
  auto bytes = p.frame_head();
  if (bytes.empty()) bytes = p.segment(0);
  for (size_t at = 0; at < bytes.size(); at += 64) __builtin_prefetch(bytes.data() + at);
  const auto rest = p.segment(1);  // a frame in two buffers
  for (size_t at = 0; at < rest.size(); at += 64) __builtin_prefetch(rest.data() + at);
}

}  // namespace netdaq::frames
