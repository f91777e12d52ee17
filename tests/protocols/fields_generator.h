// A sensor with a fixed header (mode fields): DAQIRI's batch number + packet index, or a
// byte offset, a stream number and a marker flag. Layout (big-endian):
//   0: frame number (frame_bits: 16 or 32 bits, wrapping)   4: u32 index or byte offset
//   8: u8 stream   9: u8 flags (bit 7: last packet of the frame)   10..11: 0   12: payload
#pragma once

#include "protocols/generated.h"

namespace netdaq::testgen {

inline constexpr uint32_t kFieldsHeader = 12;

struct FieldsGenOptions {
  uint32_t streams = 1;
  uint32_t frames = 4;              // per stream
  uint32_t frame_bytes = 8000;      // not a multiple of payload: the last packet is shorter
  uint32_t payload = 1000;          // bytes per packet (the last of a frame may be fewer)
  bool byte_offset = false;         // false: the u32 at 4 is the packet index
  uint32_t frame_bits = 32;         // 16: the frame number wraps at 65536
  uint64_t first_frame = 0;
  uint64_t seed = 1;
};

GeneratedTraffic make_fields(const FieldsGenOptions& o);

}  // namespace netdaq::testgen
