// The fleet's wire format and addresses: what decodes, and what is refused as malformed.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fleet/wire.h"
#include "netdaq/fleet.h"

namespace {

using namespace netdaq::fleet;
using namespace netdaq::fleet::detail;

TEST(fleet_wire, FragmentHeaderRoundTrips) {
  FrameMeta m{.stream = 1, .frame = 2, .offset = 3, .frame_offset = 4, .built_bytes = 5, .bytes = 6,
              .bytes_present = 5, .first_ns = 8, .last_ns = 9, .sent_ns = 10, .node = 11, .granule = 12,
              .complete = false};
  std::vector<std::byte> buf(kMaxFragmentHeaderBytes);
  const uint64_t words[2] = {0xdeadbeefull, 0x1234ull};
  std::memcpy(buf.data() + kFragmentHeaderBytes, words, sizeof words);
  const size_t n = encode_fragment(m, 0x500000007ull, 2, buf.data());
  ASSERT_EQ(n, kFragmentHeaderBytes + 16);
  FragmentHeader h;
  ASSERT_TRUE(decode_fragment(buf.data(), n, h));
  EXPECT_EQ(h.meta.stream, 1u);
  EXPECT_EQ(h.meta.frame, 2u);
  EXPECT_EQ(h.meta.offset, 3u);
  EXPECT_EQ(h.meta.frame_offset, 4u);
  EXPECT_EQ(h.meta.built_bytes, 5u);
  EXPECT_EQ(h.meta.bytes, 6u);
  EXPECT_EQ(h.meta.bytes_present, 5u);
  EXPECT_EQ(h.meta.first_ns, 8u);
  EXPECT_EQ(h.meta.last_ns, 9u);
  EXPECT_EQ(h.meta.sent_ns, 10u);
  EXPECT_EQ(h.meta.node, 11u);
  EXPECT_EQ(h.meta.granule, 12u);
  EXPECT_FALSE(h.meta.complete);
  EXPECT_EQ(h.seq, 0x500000007ull);
  ASSERT_EQ(h.presence.size(), 2u);
  uint64_t got[2];
  std::memcpy(got, h.presence.data(), sizeof got);
  EXPECT_EQ(got[1], 0x1234u);
}

TEST(fleet_wire, MalformedHeadersAreRefused) {
  FrameMeta m{.bytes = 10, .bytes_present = 10, .granule = 64, .complete = true};
  std::vector<std::byte> buf(kMaxFragmentHeaderBytes);
  const size_t n = encode_fragment(m, 9, 1, buf.data());
  FragmentHeader h;
  ASSERT_TRUE(decode_fragment(buf.data(), n, h));
  EXPECT_FALSE(decode_fragment(buf.data(), n - 1, h));      // length disagrees with the words
  EXPECT_FALSE(decode_fragment(buf.data(), n + 8, h));
  EXPECT_FALSE(decode_fragment(buf.data(), 50, h));         // shorter than a header
  EXPECT_FALSE(decode_fragment(nullptr, 0, h));
  auto bad = buf;
  bad[0] = std::byte{0};  // magic
  EXPECT_FALSE(decode_fragment(bad.data(), n, h));
  uint64_t seq = 0;
  EXPECT_FALSE(decode_seq(bad.data(), n, seq));
  bad = buf;
  bad[4] = std::byte{2};  // version
  EXPECT_FALSE(decode_fragment(bad.data(), n, h));
  bad = buf;
  const uint32_t too_many = kMaxPresenceWords + 1;
  std::memcpy(bad.data() + 16, &too_many, 4);
  EXPECT_FALSE(decode_fragment(bad.data(), n, h));
  EXPECT_TRUE(decode_seq(bad.data(), n, seq));  // still a fleet header: its credit can go back
  EXPECT_EQ(seq, 9u);
  FrameMeta more{.bytes = 10, .bytes_present = 11};  // more present than sent
  const size_t k = encode_fragment(more, 1, 0, buf.data());
  EXPECT_FALSE(decode_fragment(buf.data(), k, h));
}

TEST(fleet_wire, CreditAndHelloRoundTrip) {
  std::byte buf[kCreditBytes];
  encode_credit({CreditStatus::refused, RefusalReason::too_big, 77, 5, 1000}, buf);
  Credit c;
  ASSERT_TRUE(decode_credit(buf, sizeof buf, c));
  EXPECT_EQ(c.status, CreditStatus::refused);
  EXPECT_EQ(c.reason, RefusalReason::too_big);
  EXPECT_EQ(c.seq, 77u);
  EXPECT_EQ(c.frame, 5u);
  EXPECT_EQ(c.bytes, 1000u);
  EXPECT_FALSE(decode_credit(buf, sizeof buf - 1, c));
  buf[6] = std::byte{9};  // no such status
  EXPECT_FALSE(decode_credit(buf, sizeof buf, c));
  std::byte hello[kHelloBytes];
  encode_hello(0x30002, hello);
  uint32_t v = 0;
  ASSERT_TRUE(decode_hello(hello, sizeof hello, v));
  EXPECT_EQ(v, 0x30002u);
  EXPECT_FALSE(decode_hello(hello, 8, v));
}

TEST(fleet_wire, AddressesParseAndSayWhatIsWrong) {
  Address a = parse_address("10.0.0.1:7000");
  EXPECT_EQ(a.host, "10.0.0.1");
  EXPECT_EQ(a.port, 7000);
  EXPECT_EQ(a.text(), "10.0.0.1:7000");
  Address v6 = parse_address("[fd00::1]:80");
  EXPECT_EQ(v6.host, "fd00::1");
  EXPECT_EQ(v6.text(), "[fd00::1]:80");
  auto list = parse_address_list("a:1, b:2,c:3");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[1].host, "b");
  EXPECT_EQ(list[2].port, 3);
  for (const char* bad : {"", "host", "host:", ":80", "host:70000", "host:8x", "fd00::1:80", "[fd00::1]80"})
    EXPECT_THROW(parse_address(bad), std::invalid_argument) << bad;
  try {
    parse_address("host:70000");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("0..65535"), std::string::npos) << e.what();
  }
  EXPECT_STREQ(to_string(Transport::shm), "shm");
  EXPECT_STREQ(to_string(Route::bytes), "bytes");
  EXPECT_STREQ(to_string(WhenFull::wait), "wait");
}

}  // namespace
