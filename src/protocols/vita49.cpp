// VITA-49.2 (VRT) decoder. A VRT packet is 32-bit big-endian words:
//   header      type(31..28) C(27) T(26, data types) indicators(25..24) TSI(23..22)
//               TSF(21..20) packet count(19..16) packet size in words(15..0)
//   stream id   1 word, types 1, 3 and every context / command type (4..7)
//   class id    2 words when C
//   integer ts  1 word when TSI != 0
//   frac ts     2 words when TSF != 0
//   payload     samples
//   trailer     1 word when T (data types only)
// Not handled: the 49.2 class-id pad-bit count (a payload must be whole samples, no padding
// bits), the trailer's indicators (Decoded has no field for them: the word is skipped, never
// read, so it may lie in a later segment), and the packet count (placement is by timestamp, so
// a gap in the count is not an error).
#include "protocols/vita49.h"

#include <bit>
#include <cstring>

namespace netdaq::protocols {
namespace {

constexpr uint32_t kWordBytes = 4;

uint32_t read_be32(const std::byte* at) noexcept {
  uint32_t v;
  std::memcpy(&v, at, sizeof v);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap32(v);
  return v;
}

uint64_t read_be64(const std::byte* at) noexcept {
  return (uint64_t{read_be32(at)} << 32) | read_be32(at + kWordBytes);
}

enum Tsi : uint8_t { tsi_none = 0 };
enum Tsf : uint8_t { tsf_none = 0, tsf_sample_count = 1, tsf_real_time = 2, tsf_free_running = 3 };

struct Header {
  uint8_t type = 0;
  bool class_id = false;
  bool trailer_bit = false;  // T in data packets; another flag in context / command packets
  uint8_t tsi = 0;
  uint8_t tsf = 0;
  uint16_t size_words = 0;
};

Header parse_header(uint32_t word) noexcept {
  Header h;
  h.type = static_cast<uint8_t>(word >> 28);
  h.class_id = (word >> 27) & 1;
  h.trailer_bit = (word >> 26) & 1;
  h.tsi = (word >> 22) & 3;
  h.tsf = (word >> 20) & 3;
  h.size_words = static_cast<uint16_t>(word);
  return h;
}

// Types 0..3: signal and extension data; 4..7: context, extension context, command,
// extension command (49.2); 8..15 are reserved.
bool is_data(uint8_t type) noexcept { return type <= 3; }
bool is_reserved(uint8_t type) noexcept { return type >= 8; }
bool has_stream_id(uint8_t type) noexcept { return !is_data(type) || (type & 1); }

// Words before the payload: header, stream id, class id, timestamps.
uint32_t prologue_words(const Header& h) noexcept {
  return 1 + (has_stream_id(h.type) ? 1 : 0) + (h.class_id ? 2 : 0) + (h.tsi != tsi_none ? 1 : 0) +
         (h.tsf != tsf_none ? 2 : 0);
}
uint32_t trailer_words(const Header& h) noexcept { return is_data(h.type) && h.trailer_bit ? 1 : 0; }

// Reads stream id and timestamps; the prologue lies in `at`'s bytes.
void read_prologue(const std::byte* at, const Header& h, Decoded& out) noexcept {
  uint32_t off = kWordBytes;
  if (has_stream_id(h.type)) {
    out.has_stream = true;
    out.stream = read_be32(at + off);
    off += kWordBytes;
  }
  if (h.class_id) off += 2 * kWordBytes;  // OUI and class codes: nothing the placement needs
  if (h.tsi != tsi_none) {
    out.timestamp = read_be32(at + off);
    off += kWordBytes;
  }
  if (h.tsf != tsf_none) out.timestamp_frac = read_be64(at + off);
  out.has_timestamp = h.tsi != tsi_none || h.tsf != tsf_none;
}

// The index of the packet's first sample, false when it does not fit 64 bits. A sample count
// (TSF 1) restarts every integer second, so with TSI and a sample rate the seconds count too;
// a free-running count (TSF 3) never restarts and is the index alone.
bool first_sample_index(const Header& h, const Decoded& d, uint64_t sample_rate, uint64_t& index) noexcept {
  index = d.timestamp_frac;
  if (h.tsf != tsf_sample_count || h.tsi == tsi_none || sample_rate == 0) return true;
  uint64_t second_start = 0;
  return !__builtin_mul_overflow(d.timestamp, sample_rate, &second_start) &&
         !__builtin_add_overflow(index, second_start, &index);
}

// Frames that samples [sample, sample + samples) touch (samples > 0, no overflow).
uint64_t frames_touched(uint64_t sample, uint64_t samples, uint64_t per_frame) noexcept {
  return (sample + samples - 1) / per_frame - sample / per_frame + 1;
}

}  // namespace

Vita49Decoder::Vita49Decoder(const Vita49Options& options) noexcept : options_(options) {}

void Vita49Decoder::decode(std::span<const std::byte> first, uint32_t packet_len, Decoded& out) const noexcept {
  out.reset();
  if (packet_len < kWordBytes) return out.malformed("shorter than a VRT header word");
  if (first.size() < kWordBytes) return out.malformed("headers beyond the first segment");
  const Header h = parse_header(read_be32(first.data()));
  if (is_reserved(h.type)) return out.malformed("reserved VRT packet type");

  // Bytes after the packet's size are ignored: the size word says where the VRT packet ends,
  // as Wireshark reads it too, and a datagram may be padded after it (minimum or fixed-size
  // datagrams); the trailer is found by the size, not by the datagram's end.
  const uint64_t packet_bytes = uint64_t{h.size_words} * kWordBytes;
  if (packet_bytes > packet_len) return out.malformed("packet size beyond the datagram");
  const uint32_t prologue = prologue_words(h);
  const uint32_t trailer = trailer_words(h);
  if (h.size_words < prologue + trailer) return out.malformed("packet size smaller than its headers");
  if (uint64_t{prologue} * kWordBytes > first.size()) return out.malformed("headers beyond the first segment");
  read_prologue(first.data(), h, out);

  if (!is_data(h.type)) {
    out.verdict = Verdict::control;  // context and command packets: counted, not placed
    return;
  }
  if (h.tsf != tsf_sample_count && h.tsf != tsf_free_running)
    return out.malformed("no sample-count timestamp");
  if (options_.samples_per_frame == 0 || options_.sample_bytes == 0)
    return out.malformed("vita49 options: samples_per_frame and sample_bytes must not be 0");

  const uint32_t payload_offset = prologue * kWordBytes;
  const uint32_t payload_bytes = (h.size_words - prologue - trailer) * kWordBytes;
  if (payload_bytes % options_.sample_bytes != 0)
    return out.malformed("payload is not a whole number of samples");
  uint64_t sample = 0;
  if (!first_sample_index(h, out, options_.sample_rate, sample)) return out.malformed("sample index overflows 64 bits");
  const uint64_t samples = payload_bytes / options_.sample_bytes;
  if (samples > 0 && sample > UINT64_MAX - (samples - 1)) return out.malformed("sample index overflows 64 bits");
  if (samples > 0 && frames_touched(sample, samples, options_.samples_per_frame) > kMaxSpans)
    return out.malformed("packet spans more than 4 frames");
  place_samples(sample, samples, payload_offset, out);
  out.verdict = Verdict::data;  // nspans 0 for a packet without samples
}

// One span per frame the samples [sample, sample + samples) touch (checked: at most kMaxSpans).
void Vita49Decoder::place_samples(uint64_t sample, uint64_t samples, uint32_t packet_offset, Decoded& out) const noexcept {
  const uint64_t per_frame = options_.samples_per_frame;
  for (uint64_t left = samples; left > 0;) {
    const uint64_t in_frame = sample % per_frame;
    const uint64_t take = left < per_frame - in_frame ? left : per_frame - in_frame;
    Span& span = out.spans[out.nspans++];
    span.frame = sample / per_frame;
    span.offset = in_frame * options_.sample_bytes;
    span.packet_offset = packet_offset;
    span.bytes = static_cast<uint32_t>(take * options_.sample_bytes);
    packet_offset += span.bytes;
    sample += take;
    left -= take;
  }
}

}  // namespace netdaq::protocols
