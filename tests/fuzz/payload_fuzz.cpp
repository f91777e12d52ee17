// libFuzzer target: the netdaq payload format (include/netdaq/payload.h), which every receiver
// (netdaq run, netdaq bench) applies to whatever arrives: parse_payload, verify_payload on a
// span and on a packet's segments, check_pattern / fill_pattern, write_payload(_header) and
// stamp_payload.
//
// Each input is one received payload. It is copied into a heap buffer of exactly its size (and,
// split in two, into two exact-size segments), so AddressSanitizer sees any read past the end.
//   - parse_payload: a status of the enum; too_short exactly when the input is shorter than the
//     24-byte header; ok exactly when the magic matches, and then the header it returns is the
//     input's bytes 0..23 read little-endian (the same with a null header pointer).
//   - verify_payload (span): too_short / bad_magic as parse says; otherwise ok or corrupt with
//     parse's header, ok exactly when the input is byte for byte what write_payload writes for
//     that header and size, and exactly when check_pattern accepts the bytes after the header,
//     whole or cut in two at any offset (the unaligned head / tail paths).
//   - verify_payload (packet): the same status and header as on the span, for the input split
//     into two segments at several points (inside the header, at its end, at a pattern word,
//     anywhere), and with check_pattern = false the same as parse_payload.
// Then a round trip with stream, sequence and send time taken from the input (bytes 4..23,
// zero-filled) and the input's size: write_payload writes nothing into a buffer shorter than
// the header and returns false; otherwise parse and verify give ok and the same fields,
// fill_pattern gives the same bytes from any offset, stamp_payload changes only the send time,
// and flipping one pattern byte, or one bit of the stream or sequence while there are at
// least 8 pattern bytes (the first pattern word is a bijection of each), makes verify corrupt,
// and flipping a magic byte bad_magic.
// Any violation prints what failed and aborts, which libFuzzer reports as a crash.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

#include "netdaq/burst.h"
#include "netdaq/payload.h"

namespace {

using netdaq::kPayloadHeaderSize;
using netdaq::PayloadHeader;
using netdaq::PayloadStatus;

[[noreturn]] void fail(const char* what, size_t size, int line) {
  std::fprintf(stderr, "payload_fuzz: %s (input %zu bytes, payload_fuzz.cpp:%d)\n", what, size, line);
  std::abort();
}
[[noreturn]] void fail_cut(const char* what, size_t size, size_t cut) {
  std::fprintf(stderr, "payload_fuzz: %s (input %zu bytes, segments of %zu and %zu bytes)\n", what, size, cut,
               size - cut);
  std::abort();
}
#define CHECK(cond, size)                      \
  do {                                         \
    if (!(cond)) fail(#cond, size, __LINE__);  \
  } while (0)

// An exact-size heap copy (ASan: any access past its end is an error).
struct Buf {
  explicit Buf(size_t n) : bytes(new std::byte[n]), size(n) {}
  Buf(const void* src, size_t n) : Buf(n) {
    if (n) std::memcpy(bytes.get(), src, n);
  }
  std::span<std::byte> span() { return {bytes.get(), size}; }
  std::span<const std::byte> cspan() const { return {bytes.get(), size}; }
  std::unique_ptr<std::byte[]> bytes;
  size_t size;
};

// Little-endian integer at `off` in the input, zero past its end.
template <class T>
T le(const uint8_t* data, size_t size, size_t off) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    if (off + i < size) v |= static_cast<T>(static_cast<T>(data[off + i]) << (8 * i));
  return v;
}

bool known(PayloadStatus s) {
  return s == PayloadStatus::ok || s == PayloadStatus::too_short || s == PayloadStatus::bad_magic ||
         s == PayloadStatus::corrupt;
}

bool same(const PayloadHeader& a, const PayloadHeader& b) {
  return a.magic == b.magic && a.stream == b.stream && a.sequence == b.sequence && a.send_ns == b.send_ns;
}

// A packet of two segments: [0, cut) and [cut, size) of src, each in its own exact-size buffer.
struct SplitPacket {
  SplitPacket(std::span<const std::byte> src, size_t cut) : a(src.data(), cut), b(src.data() + cut, src.size() - cut) {
    auto& f = netdaq::detail::fields(pkt);
    f.nseg = 2;
    f.data[0] = a.bytes.get();
    f.len[0] = f.cap[0] = static_cast<uint32_t>(a.size);
    f.data[1] = b.bytes.get();
    f.len[1] = f.cap[1] = static_cast<uint32_t>(b.size);
  }
  Buf a, b;
  netdaq::Packet pkt;
};

// Checks an arbitrary received payload; returns parse's status.
void check_received(const Buf& in, uint64_t pick) {
  const size_t size = in.size;
  const auto buf = in.cspan();

  PayloadHeader h{0, 0, 0, 0};
  const PayloadStatus p = netdaq::parse_payload(buf, &h);
  CHECK(known(p) && p != PayloadStatus::corrupt, size);
  CHECK(std::strcmp(netdaq::to_string(p), "?") != 0, size);
  CHECK(netdaq::parse_payload(buf, nullptr) == p, size);
  CHECK((p == PayloadStatus::too_short) == (size < kPayloadHeaderSize), size);
  if (size >= kPayloadHeaderSize) {
    const uint8_t* raw = reinterpret_cast<const uint8_t*>(buf.data());
    CHECK((p == PayloadStatus::ok) == (le<uint32_t>(raw, size, 0) == netdaq::kPayloadMagic), size);
    if (p == PayloadStatus::ok) {
      CHECK(h.magic == netdaq::kPayloadMagic, size);
      CHECK(h.stream == le<uint32_t>(raw, size, 4), size);
      CHECK(h.sequence == le<uint64_t>(raw, size, 8), size);
      CHECK(h.send_ns == le<uint64_t>(raw, size, 16), size);
    }
  }

  PayloadHeader v{0, 0, 0, 0};
  const PayloadStatus s = netdaq::verify_payload(buf, &v);
  CHECK(known(s), size);
  CHECK(netdaq::verify_payload(buf, nullptr) == s, size);
  if (p != PayloadStatus::ok) {
    CHECK(s == p, size);
  } else {
    CHECK(s == PayloadStatus::ok || s == PayloadStatus::corrupt, size);
    CHECK(same(v, h), size);
    // ok exactly when the bytes are what the writer writes for this header and size.
    Buf expect(size);
    CHECK(netdaq::write_payload(expect.span(), h.stream, h.sequence, h.send_ns), size);
    CHECK((s == PayloadStatus::ok) == (std::memcmp(expect.bytes.get(), buf.data(), size) == 0), size);
    // ... and exactly when check_pattern accepts the pattern bytes, whole or cut at any offset.
    const auto pattern = buf.subspan(kPayloadHeaderSize);
    CHECK((s == PayloadStatus::ok) == netdaq::check_pattern(pattern, h.stream, h.sequence, kPayloadHeaderSize), size);
    const size_t k = pick % (pattern.size() + 1);
    const Buf head(pattern.data(), k), tail(pattern.data() + k, pattern.size() - k);
    const bool parts = netdaq::check_pattern(head.cspan(), h.stream, h.sequence, kPayloadHeaderSize) &&
                       netdaq::check_pattern(tail.cspan(), h.stream, h.sequence, kPayloadHeaderSize + k);
    CHECK((s == PayloadStatus::ok) == parts, size);
  }

  // The same payload as a packet: one segment, no segment, two segments cut at several points.
  {
    netdaq::Packet one;
    auto& f = netdaq::detail::fields(one);
    f.nseg = 1;
    f.data[0] = const_cast<std::byte*>(buf.data());
    f.len[0] = f.cap[0] = static_cast<uint32_t>(size);
    CHECK(netdaq::verify_payload(one, nullptr) == s, size);
    CHECK(netdaq::verify_payload(one, nullptr, false) == p, size);
    const netdaq::Packet none;
    CHECK(netdaq::verify_payload(none, nullptr) == PayloadStatus::too_short, size);
  }
  const size_t cuts[] = {0, 1, 4, 12, 23, 24, 25, 31, 32, size / 2, size - (size > 0), size,
                         static_cast<size_t>(pick % (size + 1))};
  for (size_t cut : cuts) {
    if (cut > size) continue;
    SplitPacket sp(buf, cut);
    PayloadHeader g{0, 0, 0, 0};
    const PayloadStatus t = netdaq::verify_payload(sp.pkt, &g);
    if (t != s) fail_cut("split packet: verify differs from the span's", size, cut);
    if ((s == PayloadStatus::ok || s == PayloadStatus::corrupt) && !same(g, v))
      fail_cut("split packet: header differs from the span's", size, cut);
    if (netdaq::verify_payload(sp.pkt, nullptr, false) != p)
      fail_cut("split packet, header only: status differs from parse", size, cut);
  }
}

// Writes a payload of `size` bytes for (stream, seq, send_ns) and checks that it reads back.
void round_trip(size_t size, uint32_t stream, uint64_t seq, uint64_t send_ns, uint64_t pick) {
  Buf out(size);
  if (size) std::memset(out.bytes.get(), 0xA5, size);
  const bool wrote = netdaq::write_payload(out.span(), stream, seq, send_ns);
  CHECK(wrote == (size >= kPayloadHeaderSize), size);
  if (!wrote) {
    CHECK(!netdaq::write_payload_header(out.span(), stream, seq, send_ns), size);
    for (size_t i = 0; i < size; ++i) CHECK(out.bytes[i] == std::byte{0xA5}, size);  // nothing written
    return;
  }
  const auto buf = out.cspan();
  PayloadHeader h{}, v{};
  CHECK(netdaq::parse_payload(buf, &h) == PayloadStatus::ok, size);
  CHECK(netdaq::verify_payload(buf, &v) == PayloadStatus::ok, size);
  CHECK(h.magic == netdaq::kPayloadMagic && h.stream == stream && h.sequence == seq && h.send_ns == send_ns, size);
  CHECK(same(v, h), size);

  // The pattern from any offset is the same bytes.
  const size_t pattern = size - kPayloadHeaderSize;
  const size_t k = kPayloadHeaderSize + pick % (pattern + 1);
  Buf part(size - k);
  netdaq::fill_pattern(part.span(), stream, seq, k);
  CHECK(part.size == 0 || std::memcmp(part.bytes.get(), buf.data() + k, part.size) == 0, size);
  CHECK(netdaq::check_pattern(part.cspan(), stream, seq, k), size);

  // The header alone over other bytes: parse sees the same fields.
  {
    Buf hdr(size);
    std::memset(hdr.bytes.get(), 0, size);
    CHECK(netdaq::write_payload_header(hdr.span(), stream, seq, send_ns), size);
    CHECK(std::memcmp(hdr.bytes.get(), buf.data(), kPayloadHeaderSize) == 0, size);
    PayloadHeader g{};
    CHECK(netdaq::parse_payload(hdr.cspan(), &g) == PayloadStatus::ok && same(g, h), size);
  }

  // A new send time: still ok, only the send-time field changed.
  {
    Buf st(buf.data(), size);
    netdaq::stamp_payload(st.span(), ~send_ns);
    PayloadHeader g{};
    CHECK(netdaq::verify_payload(st.cspan(), &g) == PayloadStatus::ok, size);
    CHECK(g.send_ns == ~send_ns && g.stream == stream && g.sequence == seq, size);
    CHECK(std::memcmp(st.bytes.get(), buf.data(), 16) == 0, size);
    CHECK(std::memcmp(st.bytes.get() + 24, buf.data() + 24, pattern) == 0, size);
  }

  // One flipped pattern byte: corrupt, with the header still reported; parse still ok.
  if (pattern > 0) {
    Buf bad(buf.data(), size);
    const size_t at = kPayloadHeaderSize + (pick >> 8) % pattern;
    bad.bytes[at] ^= std::byte{static_cast<uint8_t>(1u << (pick % 8))};
    PayloadHeader g{};
    CHECK(netdaq::verify_payload(bad.cspan(), &g) == PayloadStatus::corrupt, size);
    CHECK(same(g, h), size);
    CHECK(netdaq::parse_payload(bad.cspan(), nullptr) == PayloadStatus::ok, size);
    CHECK(!netdaq::check_pattern(bad.cspan().subspan(kPayloadHeaderSize), stream, seq, kPayloadHeaderSize), size);
  }
  // Another stream or sequence (one bit of either): corrupt once a whole pattern word is there.
  if (pattern >= 8) {
    const size_t at = 4 + (pick >> 16) % 12;  // a byte of stream (4..7) or sequence (8..15)
    Buf other(buf.data(), size);
    other.bytes[at] ^= std::byte{static_cast<uint8_t>(1u << ((pick >> 3) % 8))};
    CHECK(netdaq::verify_payload(other.cspan(), nullptr) == PayloadStatus::corrupt, size);
  }
  // A flipped magic byte: not a netdaq payload.
  {
    Buf other(buf.data(), size);
    other.bytes[pick % 4] ^= std::byte{0x01};
    CHECK(netdaq::parse_payload(other.cspan(), nullptr) == PayloadStatus::bad_magic, size);
    CHECK(netdaq::verify_payload(other.cspan(), nullptr) == PayloadStatus::bad_magic, size);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > UINT32_MAX) return 0;
  const Buf in(data, size);
  // Where to cut, which byte to flip: the input's length and last bytes pick them, so that a
  // valid payload's mutations reach them without changing its header.
  const uint64_t pick = le<uint64_t>(data, size, size >= 8 ? size - 8 : 0) * 0x9E3779B97F4A7C15ull + size;
  check_received(in, pick);
  round_trip(size, le<uint32_t>(data, size, 4), le<uint64_t>(data, size, 8), le<uint64_t>(data, size, 16),
             std::rotl(pick, 17));
  return 0;
}
