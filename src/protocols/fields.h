// mode fields: placement from fields the config declares (offset, bits, byte order, shift,
// mask): a frame number, and an index (offset = index x payload_size) or a byte offset;
// optionally a stream, a marker and a timestamp. Covers DAQIRI's batch number + packet index,
// fixed-header formats and CHDR-like headers without code.
#pragma once

#include "protocols/decoder.h"

namespace netdaq::protocols {

class FieldsDecoder final : public Decoder {
 public:
  // cfg: a validated reorder of mode fields.
  explicit FieldsDecoder(const ReorderConfig& cfg);
  void decode(std::span<const std::byte> first, uint32_t packet_len, Decoded& out) const noexcept override;

 private:
  FieldPlacement f_;
  uint32_t payload_offset_;
  uint32_t payload_size_;  // bytes per packet; 0: the rest of the packet
  uint32_t index_bytes_;   // bytes per index step (payload_size)
  uint32_t header_end_;    // every declared field ends before this
};

// The value of a declared field; false when it does not lie in `first`.
bool read_field(const PacketField& f, std::span<const std::byte> first, uint64_t* value) noexcept;

}  // namespace netdaq::protocols
