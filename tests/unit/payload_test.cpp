#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "netdaq/burst.h"
#include "netdaq/payload.h"

using namespace netdaq;

namespace {
std::vector<std::byte> make(size_t n, uint32_t stream, uint64_t seq, uint64_t t = 123) {
  std::vector<std::byte> b(n);
  EXPECT_TRUE(write_payload(b, stream, seq, t));
  return b;
}
}  // namespace

TEST(Payload, HeaderIsLittleEndianAtFixedOffsets) {
  auto b = make(64, 0x01020304u, 0x1122334455667788ull, 0xA0B0C0D0E0F00010ull);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(b.data());
  EXPECT_EQ(std::memcmp(p, "NDQ1", 4), 0);  // magic 0x3151444E little-endian
  EXPECT_EQ(p[4], 0x04);
  EXPECT_EQ(p[7], 0x01);
  EXPECT_EQ(p[8], 0x88);
  EXPECT_EQ(p[15], 0x11);
  EXPECT_EQ(p[16], 0x10);
  EXPECT_EQ(p[23], 0xA0);
  PayloadHeader h;
  ASSERT_EQ(parse_payload(b, &h), PayloadStatus::ok);
  EXPECT_EQ(h.magic, kPayloadMagic);
  EXPECT_EQ(h.stream, 0x01020304u);
  EXPECT_EQ(h.sequence, 0x1122334455667788ull);
  EXPECT_EQ(h.send_ns, 0xA0B0C0D0E0F00010ull);
}

TEST(Payload, RoundTripsEverySize) {
  for (size_t n : {24u, 25u, 31u, 32u, 33u, 63u, 64u, 100u, 1472u, 8972u}) {
    auto b = make(n, 7, n * 3);
    PayloadHeader h;
    EXPECT_EQ(verify_payload(b, &h), PayloadStatus::ok) << n;
    EXPECT_EQ(h.stream, 7u);
    EXPECT_EQ(h.sequence, n * 3);
  }
}

// --no-verify: the header alone, the rest of the buffer untouched; a header-only check
// passes, a full one finds the pattern missing.
TEST(Payload, HeaderOnlyLeavesTheRestAsItWas) {
  std::vector<std::byte> b(100, std::byte{0xEE});
  ASSERT_TRUE(write_payload_header(b, 5, 77, 9));
  PayloadHeader h;
  ASSERT_EQ(parse_payload(b, &h), PayloadStatus::ok);
  EXPECT_EQ(h.stream, 5u);
  EXPECT_EQ(h.sequence, 77u);
  EXPECT_EQ(h.send_ns, 9u);
  for (size_t i = kPayloadHeaderSize; i < b.size(); ++i) ASSERT_EQ(b[i], std::byte{0xEE}) << i;
  EXPECT_EQ(verify_payload(b, nullptr), PayloadStatus::corrupt);
  std::vector<std::byte> short_buf(23);
  EXPECT_FALSE(write_payload_header(short_buf, 0, 0, 0));
}

TEST(Payload, RejectsShortAndForeign) {
  std::vector<std::byte> b(23);
  EXPECT_FALSE(write_payload(b, 0, 0, 0));
  EXPECT_EQ(verify_payload(b, nullptr), PayloadStatus::too_short);
  std::vector<std::byte> z(64);
  EXPECT_EQ(verify_payload(z, nullptr), PayloadStatus::bad_magic);
  EXPECT_EQ(parse_payload(z, nullptr), PayloadStatus::bad_magic);
}

TEST(Payload, DetectsEveryFlippedByte) {
  auto b = make(101, 3, 42);
  for (size_t i = kPayloadHeaderSize; i < b.size(); ++i) {
    auto c = b;
    c[i] ^= std::byte{0x01};
    PayloadHeader h;
    EXPECT_EQ(verify_payload(c, &h), PayloadStatus::corrupt) << i;
    EXPECT_EQ(h.sequence, 42u);
  }
}

TEST(Payload, DetectsFlipsInLargePayloads) {
  auto b = make(8972, 1, 99);
  for (size_t i = kPayloadHeaderSize; i < b.size(); i += 37) {
    auto c = b;
    c[i] ^= std::byte{0x40};
    EXPECT_EQ(verify_payload(c, nullptr), PayloadStatus::corrupt) << i;
  }
  EXPECT_EQ(verify_payload(b, nullptr), PayloadStatus::ok);
}

TEST(Payload, DetectsWrongStreamOrSequenceAndTruncation) {
  auto b = make(256, 3, 42);
  auto other = make(256, 3, 43);
  // Header of 42 with the body of 43.
  std::memcpy(other.data(), b.data(), kPayloadHeaderSize);
  EXPECT_EQ(verify_payload(other, nullptr), PayloadStatus::corrupt);
  auto s4 = make(256, 4, 42);
  std::memcpy(s4.data(), b.data(), kPayloadHeaderSize);
  EXPECT_EQ(verify_payload(s4, nullptr), PayloadStatus::corrupt);
  // Shifted by one byte (a byte lost in the middle).
  auto sh = b;
  sh.erase(sh.begin() + 100);
  EXPECT_EQ(verify_payload(sh, nullptr), PayloadStatus::corrupt);
  // A truncated packet's pattern is still a valid prefix: size is checked by the caller.
  EXPECT_EQ(verify_payload(std::span(b).first(100), nullptr), PayloadStatus::ok);
}

TEST(Payload, PatternPiecesMatchTheWhole) {
  auto b = make(300, 9, 1000);
  for (size_t off = kPayloadHeaderSize; off < 300; off += 13) {
    for (size_t len : {0u, 1u, 7u, 8u, 9u, 40u}) {
      if (off + len > 300) continue;
      std::vector<std::byte> piece(len);
      fill_pattern(piece, 9, 1000, off);
      if (len) EXPECT_EQ(std::memcmp(piece.data(), b.data() + off, len), 0) << off << "+" << len;
      EXPECT_TRUE(check_pattern(std::span(b).subspan(off, len), 9, 1000, off));
    }
  }
  EXPECT_FALSE(check_pattern(std::span(b).subspan(30, 16), 9, 1001, 30));
}

TEST(Payload, VerifiesAPacketSplitOverSegments) {
  auto whole = make(500, 2, 77);
  for (uint32_t cut : {10u, 24u, 25u, 64u, 499u}) {
    std::vector<std::byte> s0(whole.begin(), whole.begin() + cut), s1(whole.begin() + cut, whole.end());
    Packet p;
    auto& f = detail::fields(p);
    f.nseg = 2;
    f.data[0] = s0.data();
    f.len[0] = f.cap[0] = cut;
    f.data[1] = s1.data();
    f.len[1] = f.cap[1] = static_cast<uint32_t>(s1.size());
    PayloadHeader h;
    EXPECT_EQ(verify_payload(p, &h), PayloadStatus::ok) << cut;
    EXPECT_EQ(h.sequence, 77u);
    s1.back() ^= std::byte{0x80};
    EXPECT_EQ(verify_payload(p, &h), PayloadStatus::corrupt) << cut;
    EXPECT_EQ(verify_payload(p, &h, false), PayloadStatus::ok) << cut;
  }
}

TEST(Payload, StampChangesOnlyTheSendTime) {
  auto b = make(100, 5, 6, 111);
  stamp_payload(b, 222);
  PayloadHeader h;
  ASSERT_EQ(verify_payload(b, &h), PayloadStatus::ok);
  EXPECT_EQ(h.send_ns, 222u);
  EXPECT_EQ(h.sequence, 6u);
  std::vector<std::byte> tiny(10);
  stamp_payload(tiny, 1);  // too short: untouched
  EXPECT_EQ(tiny, std::vector<std::byte>(10));
}

TEST(Payload, ClockIsMonotonic) {
  const uint64_t a = payload_clock_ns();
  const uint64_t b = payload_clock_ns();
  EXPECT_LE(a, b);
  EXPECT_GT(a, 0u);
}
