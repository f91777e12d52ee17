// VITA-49.2 (VRT) signal data packets (ReorderMode::vita49): a data packet's samples are placed
// by its sample-count timestamp, a context or command packet is counted, not placed.
#pragma once

#include "protocols/decoder.h"

namespace netdaq::protocols {

class Vita49Decoder final : public Decoder {
 public:
  explicit Vita49Decoder(const Vita49Options& options) noexcept;
  void decode(std::span<const std::byte> first, uint32_t packet_len, Decoded& out) const noexcept override;

 private:
  void place_samples(uint64_t sample, uint64_t samples, uint32_t packet_offset, Decoded& out) const noexcept;
  Vita49Options options_;
};

}  // namespace netdaq::protocols
