// libFuzzer target: SpeadDecoder (src/protocols/spead.h), which reads the headers of every
// packet a spead reorder queue receives, from any sender.
//
// Each input is one UDP payload. It is decoded twice over, by a decoder without a stream item
// and by one whose stream item is 0x4200 (the seeds' stream item):
//   - whole: the input as one segment, copied into a heap buffer of exactly its size, so
//     AddressSanitizer sees any read past its end;
//   - split: the first `cut` bytes alone as the first segment (its own exact-size buffer), the
//     packet still input-size long; the input's last bytes pick the cut, so that mutations of
//     a valid packet's payload move it without touching its headers.
// Every result must be one the placement model can use:
//   - a known verdict, never control (SPEAD has no such packets); malformed with a non-empty
//     reason and no spans;
//   - nspans <= kMaxSpans, nitems <= kMaxItems, frame_bits 64; every span non-empty and within
//     the packet (packet_offset + bytes <= packet_len), after the 8-byte header;
//   - a data packet with frame_bytes != 0 lies inside its frame (offset + bytes <= frame_bytes);
//   - a stream only from the decoder that has a stream item;
//   - split: a data answer is the whole input's answer (the decoder read nothing past the
//     cut), and when the whole input is data with its headers before the cut, the split one is
//     the same data.
// Any violation prints what failed and aborts, which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

#include "protocols/spead.h"

#define NDQ_FUZZER "spead_fuzz"
#include "decoder_fuzz.h"

namespace {

using netdaq::protocols::Decoded;
using netdaq::protocols::SpeadDecoder;
using netdaq::protocols::Verdict;

constexpr uint64_t kStreamItem = 0x4200;

using ndqfuzz::Buf;

// Item pointers end here, when the header says how many there are.
uint64_t headers_end(const uint8_t* data, size_t size) {
  return size < 8 ? 0 : 8 + 8 * (uint64_t{data[6]} << 8 | data[7]);
}

bool same_data(const Decoded& a, const Decoded& b) {
  if (a.verdict != b.verdict || a.has_stream != b.has_stream || a.stream != b.stream || a.frame_bytes != b.frame_bytes ||
      a.nspans != b.nspans || a.nitems != b.nitems)
    return false;
  for (unsigned i = 0; i < a.nspans; ++i)
    if (a.spans[i].frame != b.spans[i].frame || a.spans[i].offset != b.spans[i].offset ||
        a.spans[i].packet_offset != b.spans[i].packet_offset || a.spans[i].bytes != b.spans[i].bytes)
      return false;
  for (unsigned i = 0; i < a.nitems; ++i)
    if (a.items[i].id != b.items[i].id || a.items[i].value != b.items[i].value) return false;
  return true;
}

void check_decoded(const Decoded& d, bool may_have_stream, size_t size, size_t cut) {
  const uint32_t packet_len = static_cast<uint32_t>(size);
  CHECK(d.verdict == Verdict::data || d.verdict == Verdict::malformed);
  CHECK(d.nspans <= netdaq::protocols::kMaxSpans);
  CHECK(d.nitems <= netdaq::protocols::kMaxItems);
  if (d.verdict == Verdict::malformed) {
    CHECK(d.reason != nullptr && d.reason[0] != '\0');
    CHECK(d.nspans == 0);
    return;
  }
  CHECK(d.frame_bits == 64);
  CHECK(may_have_stream || !d.has_stream);
  for (unsigned i = 0; i < d.nspans; ++i) {
    const auto& s = d.spans[i];
    CHECK(s.bytes > 0);
    CHECK(s.packet_offset >= 8);
    CHECK(uint64_t{s.packet_offset} + s.bytes <= packet_len);
    if (d.frame_bytes != 0) CHECK(s.offset + s.bytes <= d.frame_bytes);
  }
}

void check_decoder(const SpeadDecoder& decoder, bool has_stream_item, const uint8_t* data, size_t size, size_t cut) {
  const uint32_t packet_len = static_cast<uint32_t>(size);
  const Buf whole_buf(data, size);
  Decoded whole;
  decoder.decode(whole_buf.span(), packet_len, whole);
  check_decoded(whole, has_stream_item, size, size);

  const Buf first(data, cut);
  Decoded split;
  decoder.decode(first.span(), packet_len, split);
  check_decoded(split, has_stream_item, size, cut);
  if (split.verdict == Verdict::data) CHECK(same_data(split, whole));
  if (whole.verdict == Verdict::data && headers_end(data, size) <= cut) CHECK(same_data(split, whole));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > UINT32_MAX) return 0;
  uint64_t pick = 0;
  for (size_t i = size >= 8 ? size - 8 : 0; i < size; ++i) pick = pick << 8 | data[i];
  const size_t cut = (pick * 0x9E3779B97F4A7C15ull + size) % (size + 1);

  static const SpeadDecoder plain(netdaq::SpeadOptions{0});
  static const SpeadDecoder with_stream(netdaq::SpeadOptions{kStreamItem});
  check_decoder(plain, false, data, size, cut);
  check_decoder(with_stream, true, data, size, cut);
  return 0;
}
