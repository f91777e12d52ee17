// A libxdp ring as the kernel maps it, described for a consumer outside libxdp (a GPU kernel):
// indices, flags, entries and the page-aligned span that holds them (to register it), and
// what happens to that span when the queue goes while the consumer still holds it.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "netdaq/shared_rings.h"

namespace netdaq::detail::afxdp {

void* throwaway_mapping(size_t bytes) noexcept;  // zeroed, private; nullptr if refused
void drop_mapping(void* p, size_t bytes) noexcept;

// A handed-over ring's address range (SharedRing::address_hold): once parked, an inaccessible
// mapping holds it until the last holder lets go.
class RingAddress {
 public:
  RingAddress(void* span, size_t bytes) noexcept : span_(span), bytes_(bytes) {}
  ~RingAddress();
  RingAddress(const RingAddress&) = delete;
  RingAddress& operator=(const RingAddress&) = delete;
  void* span() const noexcept { return span_; }
  size_t bytes() const noexcept { return bytes_; }
  // Replaces the ring's mapping by an inaccessible one (one mmap: no other mapping can land
  // in between); the socket's file is no longer held by it. False if refused.
  bool park() noexcept;

 private:
  void* span_;
  size_t bytes_;
  bool parked_ = false;
};

// Called by a port whose ring was handed over, before its socket goes: where the new owner
// still holds the address, the ring's mapping is parked and libxdp's own unmapping (through
// the ring's pointers) is pointed at a throwaway mapping of the same size.
template <class Ring>
void release_handed_over(Ring& ring, const SharedRing& shared) noexcept {
  if (!shared.address_hold || shared.address_hold.use_count() <= 1) return;  // nobody else needs it
  auto* address = static_cast<RingAddress*>(shared.address_hold.get());
  void* stand_in = throwaway_mapping(address->bytes());
  if (!stand_in) return;
  if (!address->park()) {
    drop_mapping(stand_in, address->bytes());
    return;
  }
  auto moved = [&](auto* p) {
    return reinterpret_cast<decltype(p)>(static_cast<char*>(stand_in) +
                                         (reinterpret_cast<char*>(p) - static_cast<char*>(address->span())));
  };
  ring.producer = moved(ring.producer);
  ring.consumer = moved(ring.consumer);
  ring.flags = moved(ring.flags);
  ring.ring = moved(ring.ring);
}

template <class Ring>
SharedRing shared_ring(Ring& ring, size_t entry_bytes) {
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
  r.address_hold = std::make_shared<RingAddress>(r.span, r.span_bytes);
  return r;
}

}  // namespace netdaq::detail::afxdp
