// What two netdaq rdma queues tell each other in rdma_cm's private data (op: write_imm), and
// what a manual peer file holds. Host byte order: both ends are netdaq on little-endian hosts;
// the magic catches a peer that is not.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace netdaq::detail::rdma {

inline constexpr uint32_t kWireMagic = 0x5244514e;  // "NQDR"
inline constexpr uint32_t kWireVersion = 1;

// rx -> tx (rdma_accept): the receive ring the sender writes into. Slot i lies at
// addr + i * stride and holds up to slot_size bytes; message seq goes to slot seq % slots.
struct RingOffer {
  uint32_t magic = kWireMagic;
  uint32_t version = kWireVersion;
  uint64_t addr = 0;
  uint32_t rkey = 0;
  uint32_t slots = 0;
  uint32_t stride = 0;
  uint32_t slot_size = 0;
};

// tx -> rx (rdma_connect): where the receiver writes its credit, the count of messages whose
// slots the application has given back (the sender may write seq < credit + slots).
struct CreditOffer {
  uint32_t magic = kWireMagic;
  uint32_t version = kWireVersion;
  uint64_t addr = 0;
  uint32_t rkey = 0;
  uint32_t reserved = 0;
};

template <class T>
std::vector<uint8_t> to_bytes(const T& t) {
  std::vector<uint8_t> b(sizeof t);
  std::memcpy(b.data(), &t, sizeof t);
  return b;
}

template <class T>
std::optional<T> from_bytes(const std::vector<uint8_t>& b) {
  T t;
  if (b.size() < sizeof t) return std::nullopt;
  std::memcpy(&t, b.data(), sizeof t);
  if (t.magic != kWireMagic || t.version != kWireVersion) return std::nullopt;
  return t;
}

}  // namespace netdaq::detail::rdma
