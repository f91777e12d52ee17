#include "protocols/fields_generator.h"

#include <random>

namespace netdaq::testgen {
namespace {
void put_be(std::vector<std::byte>& b, size_t at, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i) b[at + i] = std::byte(v >> (8 * (n - 1 - i)));
}
}  // namespace

GeneratedTraffic make_fields(const FieldsGenOptions& o) {
  GeneratedTraffic t;
  std::mt19937_64 rng(o.seed);
  for (uint32_t f = 0; f < o.frames; ++f) {
    for (uint32_t s = 0; s < o.streams; ++s) {
      FrameTruth ft;
      ft.stream = s;
      ft.frame = o.first_frame + f;
      ft.bytes.resize(o.frame_bytes);
      for (auto& b : ft.bytes) b = std::byte(rng());
      t.frames.push_back(ft);
    }
    // The streams' packets interleave, packet by packet.
    const uint32_t npk = (o.frame_bytes + o.payload - 1) / o.payload;
    for (uint32_t k = 0; k < npk; ++k) {
      for (uint32_t s = 0; s < o.streams; ++s) {
        const FrameTruth& ft = t.frames[t.frames.size() - o.streams + s];
        const uint32_t at = k * o.payload, n = std::min(o.payload, o.frame_bytes - at);
        GeneratedPacket p;
        p.payload.assign(kFieldsHeader + n, std::byte{0});
        const uint64_t wire_frame = o.frame_bits >= 64 ? ft.frame : ft.frame & ((uint64_t{1} << o.frame_bits) - 1);
        put_be(p.payload, o.frame_bits == 16 ? 2 : 0, wire_frame, o.frame_bits == 16 ? 2 : 4);
        put_be(p.payload, 4, o.byte_offset ? at : k, 4);
        p.payload[8] = std::byte(s);
        p.marker = k + 1 == npk;
        p.payload[9] = std::byte(p.marker ? 0x80 : 0);
        std::copy(ft.bytes.begin() + at, ft.bytes.begin() + at + n, p.payload.begin() + kFieldsHeader);
        p.spans.push_back(TruthSpan{s, ft.frame, at, kFieldsHeader, n});
        t.packets.push_back(std::move(p));
      }
    }
  }
  return t;
}

}  // namespace netdaq::testgen
