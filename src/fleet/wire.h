// The fleet wire format: active message ids, the fragment header (magic, version, FrameMeta,
// the sink's slot id, presence words after it) and the credit message. Encoded and decoded
// field by field in little-endian order; decoding checks every length (malformed otherwise).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "netdaq/fleet.h"

namespace netdaq::fleet::detail {

enum AmId : uint16_t {
  am_fragment = 0x4e30,  // sink -> receiver: header + presence words; data: the fragment
  am_credit = 0x4e31,    // receiver -> sink: a fragment's fate (placed or refused)
  am_hello = 0x4e32,     // sink -> receiver: a new connection
  am_welcome = 0x4e33,   // receiver -> sink: the connection is accepted
};

inline constexpr uint32_t kMagic = 0x4651444eu;  // "NDQF"
inline constexpr uint16_t kVersion = 1;
inline constexpr size_t kFragmentHeaderBytes = 112;
// Presence words one fragment may carry (32768 granules): the header stays within what UCX
// sends as an active message header.
inline constexpr uint32_t kMaxPresenceWords = 512;
inline constexpr size_t kMaxFragmentHeaderBytes = kFragmentHeaderBytes + kMaxPresenceWords * 8;
inline constexpr size_t kCreditBytes = 40;
inline constexpr size_t kHelloBytes = 16;

struct FragmentHeader {
  FrameMeta meta;
  uint64_t seq = 0;  // the sink's slot id: comes back in the credit
  std::span<const uint64_t> presence;
};

// Writes h (with its presence words) into out; returns the bytes written.
size_t encode_fragment(const FrameMeta& meta, uint64_t seq, uint32_t presence_words,
                       std::byte* out) noexcept;  // presence words already at out+kFragmentHeaderBytes
// False when the bytes are not a fleet fragment header of this version or lengths disagree.
bool decode_fragment(const void* data, size_t length, FragmentHeader& out) noexcept;
// The slot id of a header that is malformed past its magic and version (so the refusal can
// still return the sender's credit); false when even that cannot be read.
bool decode_seq(const void* data, size_t length, uint64_t& seq) noexcept;

enum class CreditStatus : uint8_t { placed = 1, refused = 2 };
enum class RefusalReason : uint8_t { none = 0, no_buffer, too_big, malformed, late, duplicate, failed };

struct Credit {
  CreditStatus status = CreditStatus::placed;
  RefusalReason reason = RefusalReason::none;
  uint64_t seq = 0;
  uint64_t frame = 0;
  uint64_t bytes = 0;
};
void encode_credit(const Credit& c, std::byte* out) noexcept;  // kCreditBytes
bool decode_credit(const void* data, size_t length, Credit& out) noexcept;

void encode_hello(uint32_t node, std::byte* out) noexcept;  // kHelloBytes (also the welcome)
bool decode_hello(const void* data, size_t length, uint32_t& node) noexcept;

}  // namespace netdaq::fleet::detail
