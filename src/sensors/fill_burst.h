// What every packetizer's fill(TxBurst&) does: each buffer of the burst gets the sensor's next
// packet (next_packet(span) -> its bytes, 0 when none fits or none is left), and the count of
// packets filled is returned.
#pragma once

#include <cstddef>
#include <cstdint>

#include "netdaq/burst.h"

namespace netdaq::sensors {

template <class Packetizer>
size_t fill_burst(Packetizer& source, TxBurst& burst) noexcept {
  size_t n = 0;
  for (Packet& p : burst) {
    const uint32_t len = source.next_packet(p.buffer());
    if (len == 0) break;
    p.set_size(len);
    ++n;
  }
  return n;
}

}  // namespace netdaq::sensors
