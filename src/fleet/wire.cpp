// Fleet wire encoding (see wire.h).
#include "fleet/wire.h"

#include <bit>
#include <cstring>

namespace netdaq::fleet::detail {

namespace {
template <class T>
void put(std::byte*& p, T v) noexcept {
  std::memcpy(p, &v, sizeof v);  // x86/ARM little-endian hosts only (static_assert below)
  p += sizeof v;
}
template <class T>
T get(const std::byte*& p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}
static_assert(std::endian::native == std::endian::little, "fleet wire format is little-endian");
}  // namespace

size_t encode_fragment(const FrameMeta& m, uint64_t seq, uint32_t presence_words,
                       std::byte* out) noexcept {
  std::byte* p = out;
  put<uint32_t>(p, kMagic);
  put<uint16_t>(p, kVersion);
  put<uint16_t>(p, m.complete ? 1 : 0);
  put<uint32_t>(p, m.node);
  put<uint32_t>(p, m.granule);
  put<uint32_t>(p, presence_words);
  put<uint32_t>(p, 0);
  for (uint64_t v : {m.stream, m.frame, m.offset, m.frame_offset, m.built_bytes, m.bytes,
                     m.bytes_present, m.first_ns, m.last_ns, m.sent_ns, seq})
    put<uint64_t>(p, v);
  return kFragmentHeaderBytes + size_t(presence_words) * 8;
}

bool decode_fragment(const void* data, size_t length, FragmentHeader& out) noexcept {
  if (data == nullptr || length < kFragmentHeaderBytes) return false;
  const std::byte* p = static_cast<const std::byte*>(data);
  if (get<uint32_t>(p) != kMagic || get<uint16_t>(p) != kVersion) return false;
  const uint16_t flags = get<uint16_t>(p);
  FrameMeta& m = out.meta;
  m.complete = (flags & 1) != 0;
  m.node = get<uint32_t>(p);
  m.granule = get<uint32_t>(p);
  const uint32_t words = get<uint32_t>(p);
  (void)get<uint32_t>(p);
  if (words > kMaxPresenceWords || length != kFragmentHeaderBytes + size_t(words) * 8) return false;
  if (words > 0 && m.granule == 0) return false;
  for (uint64_t* v : {&m.stream, &m.frame, &m.offset, &m.frame_offset, &m.built_bytes, &m.bytes,
                      &m.bytes_present, &m.first_ns, &m.last_ns, &m.sent_ns, &out.seq})
    *v = get<uint64_t>(p);
  if (m.bytes_present > m.bytes) return false;
  // The words may sit unaligned in UCX's buffer: the caller copies them out (memcpy).
  out.presence = {reinterpret_cast<const uint64_t*>(p), words};
  return true;
}

bool decode_seq(const void* data, size_t length, uint64_t& seq) noexcept {
  if (data == nullptr || length < kFragmentHeaderBytes) return false;
  const std::byte* p = static_cast<const std::byte*>(data);
  if (get<uint32_t>(p) != kMagic || get<uint16_t>(p) != kVersion) return false;
  std::memcpy(&seq, static_cast<const std::byte*>(data) + kFragmentHeaderBytes - 8, 8);
  return true;
}

void encode_credit(const Credit& c, std::byte* out) noexcept {
  std::byte* p = out;
  put<uint32_t>(p, kMagic);
  put<uint16_t>(p, kVersion);
  put<uint8_t>(p, static_cast<uint8_t>(c.status));
  put<uint8_t>(p, static_cast<uint8_t>(c.reason));
  put<uint64_t>(p, c.seq);
  put<uint64_t>(p, c.frame);
  put<uint64_t>(p, c.bytes);
  put<uint64_t>(p, 0);
}

bool decode_credit(const void* data, size_t length, Credit& out) noexcept {
  if (data == nullptr || length != kCreditBytes) return false;
  const std::byte* p = static_cast<const std::byte*>(data);
  if (get<uint32_t>(p) != kMagic || get<uint16_t>(p) != kVersion) return false;
  const uint8_t status = get<uint8_t>(p);
  const uint8_t reason = get<uint8_t>(p);
  if (status != 1 && status != 2) return false;
  if (reason > static_cast<uint8_t>(RefusalReason::failed)) return false;
  out.status = static_cast<CreditStatus>(status);
  out.reason = static_cast<RefusalReason>(reason);
  out.seq = get<uint64_t>(p);
  out.frame = get<uint64_t>(p);
  out.bytes = get<uint64_t>(p);
  return true;
}

void encode_hello(uint32_t node, std::byte* out) noexcept {
  std::byte* p = out;
  put<uint32_t>(p, kMagic);
  put<uint16_t>(p, kVersion);
  put<uint16_t>(p, 0);
  put<uint32_t>(p, node);
  put<uint32_t>(p, 0);
}

bool decode_hello(const void* data, size_t length, uint32_t& node) noexcept {
  if (data == nullptr || length != kHelloBytes) return false;
  const std::byte* p = static_cast<const std::byte*>(data);
  if (get<uint32_t>(p) != kMagic || get<uint16_t>(p) != kVersion) return false;
  (void)get<uint16_t>(p);
  node = get<uint32_t>(p);
  return true;
}

}  // namespace netdaq::fleet::detail
