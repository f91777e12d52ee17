// The sensor test pattern: the bytes a test sensor writes into message (frame) `seq`, so a
// receiver can check every byte it got without a copy of what was sent. The same pattern as
// tests/guest/fpga_peer.py (pyverbs) and the rdma engine's tests: byte k < 8 is byte k of seq
// (little-endian), byte k >= 8 is (seq x 131 + k x 7 + (k >> 8) x 13) mod 256.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace netdaq {

constexpr std::byte sensor_pattern_byte(uint64_t seq, uint64_t k) noexcept {
  return k < 8 ? std::byte((seq >> (8 * k)) & 0xff) : std::byte((seq * 131 + k * 7 + (k >> 8) * 13) & 0xff);
}

// Writes bytes [offset, offset + out.size()) of message seq's pattern.
inline void write_sensor_pattern(std::span<std::byte> out, uint64_t seq, uint64_t offset = 0) noexcept {
  for (size_t i = 0; i < out.size(); ++i) out[i] = sensor_pattern_byte(seq, offset + i);
}

}  // namespace netdaq
