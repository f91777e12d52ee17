// A libxdp ring as the kernel maps it, described for a consumer outside libxdp (a GPU kernel):
// indices, flags, entries and the page-aligned span that holds them (to register it).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "netdaq/shared_rings.h"

namespace netdaq::detail::afxdp {

template <class Ring>
SharedRing shared_ring(Ring& ring, size_t entry_bytes) noexcept {
  SharedRing r;
  r.producer = ring.producer;
  r.consumer = ring.consumer;
  r.flags = ring.flags;
  r.entries = ring.ring;
  r.size = ring.size;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = std::min({reinterpret_cast<uintptr_t>(ring.producer), reinterpret_cast<uintptr_t>(ring.consumer),
                                 reinterpret_cast<uintptr_t>(ring.flags), reinterpret_cast<uintptr_t>(ring.ring)}) &
                       ~(page - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(ring.ring) + ring.size * entry_bytes + page - 1) & ~(page - 1);
  r.span = reinterpret_cast<void*>(lo);
  r.span_bytes = hi - lo;
  return r;
}

}  // namespace netdaq::detail::afxdp
