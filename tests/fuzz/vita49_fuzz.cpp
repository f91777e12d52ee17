// libFuzzer target: Vita49Decoder (src/protocols/vita49.h), which reads every VRT datagram a
// vita49 queue receives.
//
// Each input is one UDP payload, decoded with a few option sets (frames of 16 x 4-byte
// samples; 1000 x 8 with a sample rate; 1-sample frames with a rate near 2^40; 7 x 12 with a
// rate of 3; zero options), once whole and once with only its first `cut` bytes in the first
// segment (`cut` picked from the input's size and last bytes). Inputs and first segments lie in
// exact-size heap buffers, so AddressSanitizer reports any read past them. Checks:
//   - the verdict is data, control or malformed; malformed has a non-empty reason and no
//     spans; control has no spans; nspans <= kMaxSpans; decoding twice gives the same;
//   - each span lies inside packet_len and inside its frame (offset + bytes <= samples_per_frame
//     x sample_bytes), on sample boundaries, not empty;
//   - consecutive spans continue the packet's bytes (next packet_offset = previous end) into
//     the next frame (frame + 1, offset 0, the previous span reaching its frame's end);
//   - split: the same result as whole, except "headers beyond the first segment", which
//     happens only when the cut falls before the payload.
// Any violation prints what failed and aborts, which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

#include "protocols/vita49.h"

#define NDQ_FUZZER "vita49_fuzz"
#include "decoder_fuzz.h"

namespace {

using netdaq::Vita49Options;
using netdaq::protocols::Decoded;
using netdaq::protocols::kMaxSpans;
using netdaq::protocols::Verdict;
using netdaq::protocols::Vita49Decoder;

using ndqfuzz::Buf;

const Vita49Options kOptionSets[] = {
    {16, 4, 0},
    {1000, 8, 1000},
    {1, 4, uint64_t{1} << 40},
    {7, 12, 3},
    {0, 0, 0},
};

bool same(const Decoded& a, const Decoded& b) {
  if (a.verdict != b.verdict || std::strcmp(a.reason, b.reason) != 0 || a.has_stream != b.has_stream ||
      a.stream != b.stream || a.has_timestamp != b.has_timestamp || a.timestamp != b.timestamp ||
      a.timestamp_frac != b.timestamp_frac || a.nspans != b.nspans || a.frame_bits != b.frame_bits ||
      a.marker != b.marker)
    return false;
  for (unsigned i = 0; i < a.nspans && i < kMaxSpans; ++i) {
    const auto &x = a.spans[i], &y = b.spans[i];
    if (x.frame != y.frame || x.offset != y.offset || x.packet_offset != y.packet_offset || x.bytes != y.bytes)
      return false;
  }
  return true;
}

// Junk where decode must write (reset() has to clear it).
void scribble(Decoded& d) {
  std::memset(static_cast<void*>(&d), 0xA5, sizeof d);
  d.reason = "scribbled";
}

void check_decoded(const Decoded& d, const Vita49Options& o, size_t size, size_t cut) {
  CHECK(d.verdict == Verdict::data || d.verdict == Verdict::control || d.verdict == Verdict::malformed);
  CHECK(d.reason != nullptr);
  CHECK(d.nspans <= kMaxSpans);
  CHECK(d.nitems == 0);
  if (d.verdict == Verdict::malformed) {
    CHECK(d.reason[0] != '\0');
    CHECK(d.nspans == 0);
    return;
  }
  if (d.verdict == Verdict::control) CHECK(d.nspans == 0);
  const uint64_t frame_bytes = uint64_t{o.samples_per_frame} * o.sample_bytes;
  for (unsigned i = 0; i < d.nspans; ++i) {
    const auto& s = d.spans[i];
    CHECK(s.bytes > 0);
    CHECK(uint64_t{s.packet_offset} + s.bytes <= size);
    CHECK(s.offset + s.bytes <= frame_bytes);
    CHECK(s.offset % o.sample_bytes == 0 && s.bytes % o.sample_bytes == 0);
    if (i == 0) continue;
    const auto& prev = d.spans[i - 1];
    CHECK(s.packet_offset == prev.packet_offset + prev.bytes);
    CHECK(s.frame == prev.frame + 1);
    CHECK(s.offset == 0);
    CHECK(prev.offset + prev.bytes == frame_bytes);
  }
}

void check_options(const Vita49Options& o, const Buf& in, size_t cut) {
  const size_t size = in.size;
  const Vita49Decoder decoder(o);
  const auto len = static_cast<uint32_t>(size);
  Decoded whole, again, split;
  scribble(whole);
  decoder.decode(in.span(), len, whole);
  check_decoded(whole, o, size, size);
  decoder.decode(in.span(), len, again);
  CHECK(same(whole, again));

  const Buf head(reinterpret_cast<const uint8_t*>(in.bytes.get()), cut);
  scribble(split);
  decoder.decode(head.span(), len, split);
  check_decoded(split, o, size, cut);
  if (same(split, whole)) return;
  CHECK(split.verdict == Verdict::malformed && std::strcmp(split.reason, "headers beyond the first segment") == 0);
  CHECK(cut < size);
  // Whole, it read headers that end before its first span's bytes: a cut there changes nothing.
  if (whole.verdict == Verdict::data && whole.nspans > 0) CHECK(cut < whole.spans[0].packet_offset);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > UINT32_MAX) return 0;
  const Buf in(data, size);
  // Where to cut: from the length and last bytes, so that mutations of a valid packet's
  // payload move the cut without touching its headers.
  uint32_t tail = 0;
  if (size >= 4) std::memcpy(&tail, data + size - 4, 4);
  const size_t cut = static_cast<size_t>((uint64_t{tail} * 0x9E3779B1u + size) % (size + 1));
  for (const Vita49Options& o : kOptionSets) check_options(o, in, cut);
  return 0;
}
