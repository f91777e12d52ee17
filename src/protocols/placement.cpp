// The sizes of the placement model that follow from a reorder config (decoder.h).
#include "protocols/decoder.h"

namespace netdaq::protocols {

uint32_t granule_of(const ReorderConfig& cfg) noexcept {
  if (cfg.granule) return cfg.granule;
  switch (cfg.mode) {
    case ReorderMode::vita49: return cfg.vita49.sample_bytes ? cfg.vita49.sample_bytes : 1;
    case ReorderMode::fields:
      if (cfg.fields.index.declared() && cfg.payload_size) return cfg.payload_size;
      return 8;
    default: return 8;
  }
}

uint64_t frame_bytes_of(const ReorderConfig& cfg) noexcept {
  if (cfg.frame_bytes) return cfg.frame_bytes;
  if (cfg.mode == ReorderMode::vita49) return uint64_t{cfg.vita49.samples_per_frame} * cfg.vita49.sample_bytes;
  return uint64_t{cfg.packets_per_frame} * cfg.payload_size;
}

}  // namespace netdaq::protocols
