// Reading a packet's fields by offset into its UDP payload, across the header-data split
// (segment 0 then segment 1). Host code, no CUDA: used by the GPU pipeline's CPU side.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "netdaq/burst.h"
#include "netdaq/sample_format.h"

namespace netdaq::gpu {

// Bytes [offset, offset + n) of the packet when they lie inside one segment; else null
// (the packet is too short, or the field straddles the split).
inline const std::byte* packet_bytes(const Packet& p, uint32_t offset, uint32_t n) noexcept {
  uint32_t start = 0;
  for (unsigned s = 0; s < p.segments(); ++s) {
    const auto seg = p.segment(s);
    const uint32_t len = static_cast<uint32_t>(seg.size());
    if (offset >= start && uint64_t{offset} + n <= uint64_t{start} + len) return seg.data() + (offset - start);
    start += len;
  }
  return nullptr;
}

// Calls fn(bytes, n, at) for each piece of [offset, offset + n) of the packet, one per segment
// it touches (at: the piece's offset within the range), so that a span across two buffers
// is copied in two. False, and no call, when the range reaches beyond the packet.
template <class Fn>
bool for_each_piece(const Packet& p, uint32_t offset, uint32_t n, Fn&& fn) noexcept {
  if (uint64_t{offset} + n > p.size()) return false;
  uint32_t start = 0, done = 0;
  for (unsigned s = 0; s < p.segments() && done < n; ++s) {
    const auto seg = p.segment(s);
    const auto len = static_cast<uint32_t>(seg.size());
    const uint32_t from = offset + done;
    if (from < start + len) {
      const uint32_t take = std::min(n - done, start + len - from);
      fn(seg.data() + (from - start), take, done);
      done += take;
    }
    start += len;
  }
  return true;
}

// An unsigned integer of `bytes` (1, 2, 4 or 8) bytes in the given byte order.
inline uint64_t load_uint(const std::byte* at, unsigned bytes, ByteOrder order) noexcept {
  static_assert(std::endian::native == std::endian::little, "host byte order assumed little-endian");
  const bool swap = order == ByteOrder::big;
  switch (bytes) {
    case 8: {
      uint64_t v;
      std::memcpy(&v, at, 8);
      return swap ? __builtin_bswap64(v) : v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, at, 4);
      return swap ? __builtin_bswap32(v) : v;
    }
    case 2: {
      uint16_t v;
      std::memcpy(&v, at, 2);
      return swap ? __builtin_bswap16(v) : v;
    }
    default:
      return static_cast<uint8_t>(*at);
  }
}

}  // namespace netdaq::gpu
