// SPEAD (Streaming Protocol for Exchanging Astronomical Data, rev. 1 2012; MeerKAT, SKA,
// spead2): one heap is one frame. Each packet carries an 8-byte header, item pointers, and a
// piece of the heap's payload; the immediate items heap counter (frame), heap size, heap
// offset and packet payload length say where that piece goes. SPEAD-64-48 and SPEAD-64-40.
#pragma once

#include <cstdint>
#include <span>

#include "netdaq/config.h"
#include "protocols/decoder.h"

namespace netdaq::protocols {

// The header's fixed fields and the item identifiers SPEAD itself defines.
namespace spead {
inline constexpr uint8_t kMagic = 0x53;  // ASCII 'S'
inline constexpr uint8_t kVersion = 4;
inline constexpr uint32_t kHeaderBytes = 8;
inline constexpr uint32_t kPointerBytes = 8;  // ItemPointerWidth + HeapAddrWidth, always 64 bits here

inline constexpr uint64_t kNullId = 0x0;  // padding: ignored
inline constexpr uint64_t kHeapCounterId = 0x1;
inline constexpr uint64_t kHeapSizeId = 0x2;
inline constexpr uint64_t kHeapOffsetId = 0x3;
inline constexpr uint64_t kPayloadLengthId = 0x4;
inline constexpr uint64_t kItemDescriptorId = 0x5;
inline constexpr uint64_t kStreamControlId = 0x6;

inline constexpr uint64_t kStreamStop = 2;  // a stream-control value (0 start, 1 reissue, 3 update)
}  // namespace spead

class SpeadDecoder final : public Decoder {
 public:
  explicit SpeadDecoder(const SpeadOptions& options) noexcept : stream_item_(options.stream_item) {}

  void decode(std::span<const std::byte> first, uint32_t packet_len, Decoded& out) const noexcept override;

 private:
  uint64_t stream_item_;  // 0: the flow id names the stream
};

}  // namespace netdaq::protocols
