#include "protocols/spead.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace netdaq::protocols {

namespace {

uint64_t load_be64(const std::byte* p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  return v;
}

// The special items of one packet, as found in its item-pointer list.
struct PacketItems {
  bool has_heap_counter = false, has_heap_size = false, has_heap_offset = false, has_payload_length = false;
  uint64_t heap_counter = 0, heap_size = 0, heap_offset = 0, payload_length = 0;
};

// Only SPEAD-64-48 and SPEAD-64-40 (the flavours MeerKAT, SKA and spead2 use); null when the
// widths are fine, else why not.
const char* check_flavour(uint8_t item_pointer_width, uint8_t heap_address_width) noexcept {
  if (item_pointer_width + heap_address_width != spead::kPointerBytes)
    return "SPEAD item pointer width + heap address width is not 8 bytes";
  if (heap_address_width != 6 && heap_address_width != 5) return "SPEAD flavour is not 64-48 or 64-40";
  return nullptr;
}

}  // namespace

void SpeadDecoder::decode(std::span<const std::byte> first, uint32_t packet_len, Decoded& out) const noexcept {
  out.reset();
  // Headers must lie in the first segment, and nothing past packet_len belongs to the packet.
  const uint32_t readable = static_cast<uint32_t>(std::min<size_t>(first.size(), packet_len));
  if (packet_len < spead::kHeaderBytes) return out.malformed("shorter than the SPEAD header");
  if (readable < spead::kHeaderBytes) return out.malformed("SPEAD header beyond the first segment");

  const auto* h = reinterpret_cast<const uint8_t*>(first.data());
  if (h[0] != spead::kMagic) return out.malformed("not SPEAD (magic is not 0x53)");
  if (h[1] != spead::kVersion) return out.malformed("SPEAD version is not 4");
  if (const char* why = check_flavour(h[2], h[3])) return out.malformed(why);
  const uint32_t nitems = uint32_t{h[6]} << 8 | h[7];  // h[4..5] reserved: ignored
  const uint32_t payload_start = spead::kHeaderBytes + spead::kPointerBytes * nitems;  // <= 524,288
  if (payload_start > packet_len) return out.malformed("SPEAD item pointers beyond the packet");
  if (payload_start > readable) return out.malformed("SPEAD item pointers beyond the first segment");

  const unsigned address_bits = 8u * h[3];
  const uint64_t address_mask = (uint64_t{1} << address_bits) - 1;
  const uint64_t id_mask = (uint64_t{1} << (63 - address_bits)) - 1;  // the top bit is the mode
  PacketItems special;
  // Any order (the spec: "in no particular order"); a repeated special item: the last one counts.
  for (uint32_t i = 0; i < nitems; ++i) {
    const uint64_t pointer = load_be64(first.data() + spead::kHeaderBytes + spead::kPointerBytes * i);
    // Absolute (address) items point into the heap's payload, which the frame holds already.
    if (!(pointer >> 63)) continue;
    const uint64_t id = (pointer >> address_bits) & id_mask;
    const uint64_t value = pointer & address_mask;
    switch (id) {
      case spead::kNullId: break;
      case spead::kHeapCounterId: special.has_heap_counter = true, special.heap_counter = value; break;
      case spead::kHeapSizeId: special.has_heap_size = true, special.heap_size = value; break;
      case spead::kHeapOffsetId: special.has_heap_offset = true, special.heap_offset = value; break;
      case spead::kPayloadLengthId: special.has_payload_length = true, special.payload_length = value; break;
      case spead::kItemDescriptorId: break;  // absolute by the spec; an immediate one means nothing here
      case spead::kStreamControlId: break;   // a stop comes with no payload: it places nothing
      default:
        if (stream_item_ != 0 && id == stream_item_) {
          out.has_stream = true;
          out.stream = value;
        } else if (out.nitems < kMaxItems) {  // frame metadata; more than kMaxItems are dropped
          out.items[out.nitems++] = Item{id, value};
        }
    }
  }

  if (!special.has_heap_counter) return out.malformed("SPEAD heap counter (item 0x1) missing");
  if (!special.has_heap_offset) return out.malformed("SPEAD heap offset (item 0x3) missing");
  if (!special.has_payload_length) return out.malformed("SPEAD payload length (item 0x4) missing");
  // The payload length says where this packet's payload ends: the spec keeps it so that packets
  // can be found in a stored stream, so bytes after it (e.g. padding to a minimum size) are not
  // the heap's, and are left out of the span.
  if (special.payload_length > packet_len - payload_start)
    return out.malformed("SPEAD payload length beyond the packet");
  // Both values are below 2^48: the sum cannot wrap.
  if (special.has_heap_size && special.heap_offset + special.payload_length > special.heap_size)
    return out.malformed("SPEAD payload outside its heap (heap offset + payload length > heap size)");

  out.verdict = Verdict::data;
  out.frame_bits = 64;
  out.frame_bytes = special.has_heap_size ? special.heap_size : 0;
  // No payload (a stream stop, a heap of immediate items only): nothing to place.
  if (special.payload_length == 0) return;
  out.nspans = 1;
  out.spans[0] = Span{special.heap_counter, special.heap_offset, payload_start,
                      static_cast<uint32_t>(special.payload_length)};
}

}  // namespace netdaq::protocols
