// A narrow sequence counter (8, 16 or 32 bits) as 64 bits: the value nearest to the newest
// seen that has these low bits. Shared by the CPU frame tracker and the GPU-driven receiver's
// loop (src/gpu/xsk_receive.cuh).
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace netdaq::gpu {

// first: the stream's first packet (newest is set to it). newest only moves forward. False
// when the value lies before the stream's first packet (the caller counts it late).
NDQ_HOST_DEVICE inline bool unwrap_sequence(uint64_t raw, unsigned bits, bool first, int64_t& newest, uint64_t* seq) {
  if (bits >= 64) {
    *seq = raw;
    return true;
  }
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  raw &= mask;
  if (first) {
    newest = static_cast<int64_t>(raw);
    *seq = raw;
    return true;
  }
  const uint64_t diff = (raw - static_cast<uint64_t>(newest)) & mask;
  const int64_t d = diff > (mask >> 1) ? static_cast<int64_t>(diff) - static_cast<int64_t>(mask) - 1
                                       : static_cast<int64_t>(diff);
  const int64_t s = newest + d;
  if (s < 0) return false;
  if (s > newest) newest = s;
  *seq = static_cast<uint64_t>(s);
  return true;
}

}  // namespace netdaq::gpu
