// src/protocols/roce: the BTH/RETH/ImmDt parser on hand-written bytes and on every opcode, its
// rejections; the ICRC against known answers from independent implementations (scapy for
// IPv4, the kernel rxe's masking in Python's zlib for IPv6), against a bit-by-bit CRC here,
// and field by field (masked fields change nothing, any other byte changes it); build_frame's
// frames parsed back, their IPv4 checksum and ICRC checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "protocols/roce.h"

namespace {

namespace roce = netdaq::protocols::roce;
using roce::Opcode;
using roce::Packet;
using roce::Position;

using Bytes = std::vector<std::byte>;

constexpr uint32_t kEth = 14, kIp4 = 20, kIp6 = 40, kUdp = 8;

Bytes from_hex(const std::string& hex) {
  Bytes out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<std::byte>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

const Opcode kAllOps[] = {
    Opcode::rc_send_only,  Opcode::rc_write_first,    Opcode::rc_write_middle,   Opcode::rc_write_last,
    Opcode::rc_write_last_imm, Opcode::rc_write_only, Opcode::rc_write_only_imm, Opcode::uc_send_only,
    Opcode::uc_write_first, Opcode::uc_write_middle,  Opcode::uc_write_last,     Opcode::uc_write_last_imm,
    Opcode::uc_write_only, Opcode::uc_write_only_imm};

bool is_known(uint8_t op) {
  for (Opcode o : kAllOps)
    if (static_cast<uint8_t>(o) == op) return true;
  return false;
}
bool has_reth(Opcode op) {
  const uint8_t low = static_cast<uint8_t>(op) & 0x1F;
  return low == 0x06 || low == 0x0A || low == 0x0B;
}
bool has_imm(Opcode op) {
  const uint8_t low = static_cast<uint8_t>(op) & 0x1F;
  return low == 0x09 || low == 0x0B;
}

// A bit-at-a-time CRC-32 (reflected 0xEDB88320, inverted in and out: zlib's), to check how
// ISA-L is seeded and chained.
uint32_t slow_crc32(const Bytes& bytes) {
  uint32_t crc = 0xFFFFFFFF;
  for (std::byte b : bytes) {
    crc ^= static_cast<uint8_t>(b);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
  }
  return ~crc;
}

roce::FrameSpec spec_for(Opcode op) {
  roce::FrameSpec s;
  const uint8_t src[6] = {0x02, 0, 0, 0, 0, 1}, dst[6] = {0x02, 0, 0, 0, 0, 2};
  std::memcpy(s.src_mac, src, 6);
  std::memcpy(s.dst_mac, dst, 6);
  s.src_ip = 0x0A000001;
  s.dst_ip = 0x0A000002;
  s.src_port = 49999;
  s.ip_id = 0x1234;
  s.bth.opcode = static_cast<uint8_t>(op);
  s.bth.dest_qp = 0xABCDEF;
  s.bth.psn = 0x123456;
  s.bth.ack_req = true;
  s.bth.solicited = true;
  s.reth = {0x0011223344556677ull, 0xCAFEBABE, 4096};
  s.imm = 0xDEADBEEF;
  return s;
}

Bytes payload_of(uint32_t n, uint8_t seed = 1) {
  Bytes p(n);
  for (uint32_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>(seed * 31 + i * 7);
  return p;
}

Bytes build(const roce::FrameSpec& s, const Bytes& payload) {
  Bytes f(roce::frame_bytes(static_cast<Opcode>(s.bth.opcode), static_cast<uint32_t>(payload.size())));
  const uint32_t n = roce::build_frame(s, payload, f);
  EXPECT_EQ(n, f.size());
  return f;
}

// The IP packet of an Ethernet frame, up to (not including) the ICRC.
std::span<const std::byte> ip_of(const Bytes& frame) { return std::span(frame).subspan(kEth, frame.size() - kEth - roce::kIcrcBytes); }

// The same RoCE packet over IPv6 (traffic class 0xB8, flow label 0x12345, hop limit 64), with
// its ICRC recomputed: IP packet from the IP header through the ICRC.
Bytes to_ipv6(const Bytes& v4_frame) {
  const Bytes udp(v4_frame.begin() + kEth + kIp4, v4_frame.end());
  Bytes ip6 = from_hex("6b812345");  // version 6, traffic class 0xB8, flow label 0x12345
  ip6.push_back(static_cast<std::byte>(udp.size() >> 8));
  ip6.push_back(static_cast<std::byte>(udp.size()));
  ip6.push_back(std::byte{17});
  ip6.push_back(std::byte{64});
  const Bytes addrs = from_hex("fd000000000000000000000000000001fd000000000000000000000000000002");
  ip6.insert(ip6.end(), addrs.begin(), addrs.end());
  ip6.insert(ip6.end(), udp.begin(), udp.end());
  roce::store_icrc(ip6.data() + ip6.size() - 4, roce::icrc(std::span(ip6).first(ip6.size() - 4)));
  return ip6;
}

// ---------------------------------------------------------------- parse

TEST(roce_sw_wire, ParsesHandWrittenWriteOnlyWithImmediate) {
  // BTH: UC WRITE ONLY imm, SE M pad 3 tver 0, pkey 0x8001, FECN BECN, QP 0x000102, A, PSN
  // 0xFFFFFE; RETH: VA, rkey, length; ImmDt; 5 payload bytes, 3 pad, ICRC.
  const Bytes p = from_hex("2bf08001c0000102" "80fffffe"
                           "0102030405060708" "a1b2c3d4" "00001000"
                           "11223344"
                           "aabbccddee000000" "01020304");
  Packet out;
  ASSERT_EQ(roce::parse(p, static_cast<uint32_t>(p.size()), out), nullptr);
  EXPECT_EQ(out.op, Opcode::uc_write_only_imm);
  EXPECT_EQ(out.bth.opcode, 0x2B);
  EXPECT_TRUE(out.bth.solicited);
  EXPECT_TRUE(out.bth.migreq);
  EXPECT_EQ(out.bth.pad, 3);
  EXPECT_EQ(out.bth.tver, 0);
  EXPECT_EQ(out.bth.pkey, 0x8001);
  EXPECT_TRUE(out.bth.fecn);
  EXPECT_TRUE(out.bth.becn);
  EXPECT_EQ(out.bth.dest_qp, 0x000102u);
  EXPECT_TRUE(out.bth.ack_req);
  EXPECT_EQ(out.bth.psn, 0xFFFFFEu);
  EXPECT_TRUE(out.write);
  EXPECT_EQ(out.position, Position::only);
  ASSERT_TRUE(out.has_reth);
  EXPECT_EQ(out.reth.va, 0x0102030405060708ull);
  EXPECT_EQ(out.reth.rkey, 0xA1B2C3D4u);
  EXPECT_EQ(out.reth.length, 4096u);
  ASSERT_TRUE(out.has_imm);
  EXPECT_EQ(out.imm, 0x11223344u);
  EXPECT_EQ(out.payload_offset, 12u + 16 + 4);
  EXPECT_EQ(out.payload_bytes, 5u);
}

TEST(roce_sw_wire, ParsesHandWrittenWriteLastImmAndFlagsClear) {
  // RC WRITE LAST imm: ImmDt right after the BTH, no RETH; every flag clear.
  const Bytes p = from_hex("0900ffff00abcdef" "00000007" "cafef00d" "0102030405060708" "00000000");
  Packet out;
  ASSERT_EQ(roce::parse(p, static_cast<uint32_t>(p.size()), out), nullptr);
  EXPECT_EQ(out.op, Opcode::rc_write_last_imm);
  EXPECT_FALSE(out.bth.solicited || out.bth.migreq || out.bth.fecn || out.bth.becn || out.bth.ack_req);
  EXPECT_EQ(out.bth.pad, 0);
  EXPECT_EQ(out.bth.pkey, 0xFFFF);
  EXPECT_EQ(out.bth.dest_qp, 0xABCDEFu);
  EXPECT_EQ(out.bth.psn, 7u);
  EXPECT_EQ(out.position, Position::last);
  EXPECT_FALSE(out.has_reth);
  ASSERT_TRUE(out.has_imm);
  EXPECT_EQ(out.imm, 0xCAFEF00Du);
  EXPECT_EQ(out.payload_offset, 16u);
  EXPECT_EQ(out.payload_bytes, 8u);
}

TEST(roce_sw_wire, ParsesEveryOpcodeWithEveryPad) {
  for (Opcode op : kAllOps) {
    for (uint32_t n : {0u, 1u, 2u, 3u, 4u, 5u, 1024u, 4093u}) {
      SCOPED_TRACE(std::string(roce::to_string(op)) + ", " + std::to_string(n) + " bytes");
      const Bytes payload = payload_of(n);
      const Bytes f = build(spec_for(op), payload);
      const std::span<const std::byte> udp_payload = std::span(f).subspan(kEth + kIp4 + kUdp);
      Packet out;
      ASSERT_EQ(roce::parse(udp_payload, static_cast<uint32_t>(udp_payload.size()), out), nullptr);
      EXPECT_EQ(out.op, op);
      const uint8_t low = static_cast<uint8_t>(op) & 0x1F;
      EXPECT_EQ(out.write, low != 0x04);
      EXPECT_EQ(out.has_reth, has_reth(op));
      EXPECT_EQ(out.has_imm, has_imm(op));
      const Position want = low == 0x06 ? Position::first : low == 0x07 ? Position::middle
                            : low == 0x08 || low == 0x09 ? Position::last : Position::only;
      EXPECT_EQ(out.position, want);
      EXPECT_EQ(out.bth.pad, (4 - n % 4) % 4);
      EXPECT_EQ(out.payload_offset, 12u + (has_reth(op) ? 16 : 0) + (has_imm(op) ? 4 : 0));
      EXPECT_EQ(out.payload_bytes, n);
      EXPECT_EQ((out.payload_bytes + out.bth.pad) % 4, 0u);
      ASSERT_LE(out.payload_offset + out.payload_bytes + out.bth.pad + 4, udp_payload.size());
      EXPECT_TRUE(std::equal(payload.begin(), payload.end(), udp_payload.begin() + out.payload_offset));
      for (uint32_t i = 0; i < out.bth.pad; ++i) EXPECT_EQ(udp_payload[out.payload_offset + n + i], std::byte{0});
      if (out.has_reth) {
        EXPECT_EQ(out.reth.va, 0x0011223344556677ull);
        EXPECT_EQ(out.reth.rkey, 0xCAFEBABEu);
        EXPECT_EQ(out.reth.length, 4096u);
      }
      if (out.has_imm) {
        EXPECT_EQ(out.imm, 0xDEADBEEFu);
      }
    }
  }
}

TEST(roce_sw_wire, RejectsEveryOpcodeOutsideTheEnum) {
  for (int op = 0; op < 256; ++op) {
    if (is_known(static_cast<uint8_t>(op))) continue;
    Bytes p = from_hex("00000000000000010000000100000000" "00000000");
    p[0] = static_cast<std::byte>(op);
    Packet out;
    const char* why = roce::parse(p, static_cast<uint32_t>(p.size()), out);
    ASSERT_NE(why, nullptr) << "opcode " << op;
    EXPECT_STREQ(why, "unknown BTH opcode") << "opcode " << op;
  }
}

TEST(roce_sw_wire, RejectsTransportVersionsOtherThanZero) {
  for (int tver = 1; tver < 16; ++tver) {
    Bytes p = from_hex("2a00ffff00000001000000010000000000000000000000000000000000000000" "00000000");
    p[1] = static_cast<std::byte>(tver);
    Packet out;
    EXPECT_STREQ(roce::parse(p, static_cast<uint32_t>(p.size()), out), "unsupported BTH transport version") << tver;
  }
}

TEST(roce_sw_wire, RejectsTruncatedPackets) {
  for (Opcode op : kAllOps) {
    SCOPED_TRACE(roce::to_string(op));
    const Bytes f = build(spec_for(op), {});  // headers and ICRC only
    const Bytes udp_payload(f.begin() + kEth + kIp4 + kUdp, f.end());
    Packet out;
    ASSERT_EQ(roce::parse(udp_payload, static_cast<uint32_t>(udp_payload.size()), out), nullptr);
    for (size_t len = 0; len < udp_payload.size(); ++len) {
      const Bytes cut(udp_payload.begin(), udp_payload.begin() + static_cast<ptrdiff_t>(len));
      const char* why = roce::parse(cut, static_cast<uint32_t>(len), out);
      ASSERT_NE(why, nullptr) << len;
      EXPECT_STREQ(why, "packet shorter than its headers") << len;
    }
  }
}

TEST(roce_sw_wire, RejectsPadLongerThanThePayload) {
  // UC WRITE MIDDLE, 2 payload bytes, pad 3 says the payload is shorter than that.
  const Bytes p = from_hex("2730ffff00000001" "00000001" "abcd" "01020304");
  Packet out;
  EXPECT_STREQ(roce::parse(p, static_cast<uint32_t>(p.size()), out), "pad longer than the payload");
  const Bytes ok = from_hex("2720ffff00000001" "00000001" "abcd" "01020304");  // pad 2: an empty payload
  ASSERT_EQ(roce::parse(ok, static_cast<uint32_t>(ok.size()), out), nullptr);
  EXPECT_EQ(out.payload_bytes, 0u);
}

TEST(roce_sw_wire, ReadsOnlyTheFirstSegment) {
  // A 9000-byte packet of which only the headers are in the first segment: parsed, the
  // payload continuing in later segments.
  const Bytes f = build(spec_for(Opcode::uc_write_only_imm), payload_of(16));
  const Bytes headers(f.begin() + kEth + kIp4 + kUdp, f.begin() + kEth + kIp4 + kUdp + 32);
  Packet out;
  ASSERT_EQ(roce::parse(headers, 9000, out), nullptr);
  EXPECT_EQ(out.payload_offset, 32u);
  EXPECT_EQ(out.payload_bytes, 9000u - 32 - 4);
  // One header byte short: refused, not read.
  const Bytes short_headers(headers.begin(), headers.end() - 1);
  EXPECT_STREQ(roce::parse(short_headers, 9000, out), "headers beyond the first segment");
  EXPECT_STREQ(roce::parse(std::span(headers).first(11), 9000, out), "headers beyond the first segment");
  // A packet_len shorter than the segment: the packet ends there.
  EXPECT_STREQ(roce::parse(headers, 35, out), "packet shorter than its headers");
  ASSERT_EQ(roce::parse(headers, 36, out), nullptr);
  EXPECT_EQ(out.payload_bytes, 0u);
}

TEST(roce_sw_wire, OversizedLengthsCountWithoutOverflow) {
  // packet_len is what the receiver says (the UDP length); any value parses to exact counts.
  const Bytes p = from_hex("2700ffff0000000100000001");  // WRITE MIDDLE: BTH only
  Packet out;
  ASSERT_EQ(roce::parse(p, 0xFFFFFFFF, out), nullptr);
  EXPECT_EQ(out.payload_bytes, 0xFFFFFFFFu - 12 - 4);
  ASSERT_EQ(roce::parse(p, 16, out), nullptr);
  EXPECT_EQ(out.payload_bytes, 0u);
  EXPECT_STREQ(roce::parse(p, 15, out), "packet shorter than its headers");
}

TEST(roce_sw_wire, ParseClearsItsOutputOnFailure) {
  Packet out;
  out.has_reth = out.has_imm = true;
  out.payload_bytes = 77;
  const Bytes p = from_hex("ff00ffff000000010000000100000000");
  EXPECT_STREQ(roce::parse(p, static_cast<uint32_t>(p.size()), out), "unknown BTH opcode");
  EXPECT_FALSE(out.has_reth || out.has_imm);
  EXPECT_EQ(out.payload_bytes, 0u);
}

TEST(roce_sw_wire, NamesEveryOpcode) {
  EXPECT_STREQ(roce::to_string(Opcode::uc_write_only_imm), "UC RDMA WRITE ONLY with immediate");
  EXPECT_STREQ(roce::to_string(Opcode::rc_send_only), "RC SEND ONLY");
  EXPECT_STREQ(roce::to_string(Opcode::uc_write_middle), "UC RDMA WRITE MIDDLE");
  EXPECT_STREQ(roce::to_string(static_cast<Opcode>(0x11)), "unknown");
  for (Opcode op : kAllOps) {
    const std::string name = roce::to_string(op);
    EXPECT_EQ(name.substr(0, 3), static_cast<uint8_t>(op) & 0x20 ? "UC " : "RC ");
    EXPECT_EQ(name.find("with immediate") != std::string::npos, has_imm(op)) << name;
  }
}

// ---------------------------------------------------------------- ICRC

TEST(roce_sw_icrc, StoresTheLowByteFirst) {
  std::array<std::byte, 4> b{};
  roce::store_icrc(b.data(), 0x11223344);
  EXPECT_EQ(b[0], std::byte{0x44});
  EXPECT_EQ(b[3], std::byte{0x11});
  EXPECT_EQ(roce::load_icrc(b.data()), 0x11223344u);
}

// scapy 2.5 (scapy.contrib.roce) built this packet and its ICRC: Ether()/IP(src="10.0.0.1",
// dst="10.0.0.2", id=7, flags="DF", ttl=64)/UDP(sport=49152, dport=4791, chksum=0)/
// BTH(opcode=0x2a, padcount=2, pkey=0xffff, dqpn=0x11, psn=5)/RETH(va=0x1000, rkey=0x1234,
// dlen=6)/payload "abcdef"/pad 00 00 (tests/protocols/roce_scapy_check.py checks many more).
TEST(roce_sw_icrc, MatchesScapyOnAnIpv4Packet) {
  const Bytes ip = from_hex(
      "4500004400074000401126a00a0000010a000002"
      "c00012b70030" "0000"
      "2a20ffff00000011" "00000005"
      "0000000000001000" "00001234" "00000006"
      "6162636465660000");
  EXPECT_EQ(roce::icrc(ip), 0x77155384u);  // wire bytes 84 53 15 77
}

// The kernel rxe's masking (rxe_icrc.c) written in Python with zlib.crc32 gave this IPv6
// packet's ICRC (scapy has none for IPv6): traffic class 0xB8, flow label 0x12345, hop limit 64.
TEST(roce_sw_icrc, MatchesTheKernelsMaskingOnAnIpv6Packet) {
  const Bytes ip = from_hex(
      "6b81234500301140"
      "fd000000000000000000000000000001" "fd000000000000000000000000000002"
      "c00012b70030" "abcd"
      "2b10ffff00000011" "80000005"
      "0000000000001000" "00001234" "00000003" "0a0b0c0d"
      "61626300");
  EXPECT_EQ(roce::icrc(ip), 0x8135BF9Bu);
}

TEST(roce_sw_icrc, IsZlibsCrcOverOnesAndTheMaskedPacket) {
  const Bytes f = build(spec_for(Opcode::uc_write_first), payload_of(37));
  Bytes pseudo(8, std::byte{0xFF});
  pseudo.insert(pseudo.end(), f.begin() + kEth, f.end() - 4);
  for (size_t at : {size_t{8 + 1}, size_t{8 + 8}, size_t{8 + 10}, size_t{8 + 11}, size_t{8 + 26}, size_t{8 + 27},
                    size_t{8 + 32}})
    pseudo[at] = std::byte{0xFF};  // TOS, TTL, IP checksum, UDP checksum, BTH byte 4
  EXPECT_EQ(roce::icrc(ip_of(f)), slow_crc32(pseudo));
  EXPECT_EQ(roce::load_icrc(f.data() + f.size() - 4), slow_crc32(pseudo));
}

TEST(roce_sw_icrc, SameInTwoPiecesSplitAnywhere) {
  const Bytes f = build(spec_for(Opcode::rc_write_only_imm), payload_of(61));
  const auto ip = ip_of(f);
  const uint32_t whole = roce::icrc(ip);
  for (size_t cut = 0; cut <= ip.size(); ++cut)
    ASSERT_EQ(roce::icrc(ip.first(cut), ip.subspan(cut)), whole) << cut;
  const Bytes v6 = to_ipv6(f);
  const auto ip6 = std::span(v6).first(v6.size() - 4);
  for (size_t cut = 0; cut <= ip6.size(); ++cut)
    ASSERT_EQ(roce::icrc(ip6.first(cut), ip6.subspan(cut)), roce::icrc(ip6)) << cut;
}

// Every byte the ICRC covers changes it; the variant fields do not.
void expect_covers_all_but(Bytes ip, const std::vector<size_t>& masked, const char* what) {
  SCOPED_TRACE(what);
  const uint32_t base = roce::icrc(ip);
  for (size_t i = 0; i < ip.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xFF}) {
      ip[i] ^= static_cast<std::byte>(flip);
      const bool is_masked = std::find(masked.begin(), masked.end(), i) != masked.end();
      if (is_masked)
        EXPECT_EQ(roce::icrc(ip), base) << "byte " << i << " is masked";
      else
        EXPECT_NE(roce::icrc(ip), base) << "byte " << i << " is covered";
      ip[i] ^= static_cast<std::byte>(flip);
    }
  }
}

TEST(roce_sw_icrc, Ipv4CoversEveryByteButTosTtlAndChecksums) {
  for (Opcode op : {Opcode::uc_write_only_imm, Opcode::rc_write_middle}) {
    const Bytes f = build(spec_for(op), payload_of(9));
    const auto ip = ip_of(f);
    // TOS 1, TTL 8, IP checksum 10-11, UDP checksum 26-27, BTH byte 4 (FECN, BECN, resv6) 32.
    expect_covers_all_but(Bytes(ip.begin(), ip.end()), {1, 8, 10, 11, 26, 27, 32}, roce::to_string(op));
  }
}

TEST(roce_sw_icrc, Ipv6CoversEveryByteButTrafficClassFlowLabelHopLimitAndUdpChecksum) {
  const Bytes v6 = to_ipv6(build(spec_for(Opcode::uc_write_last_imm), payload_of(10)));
  Bytes ip(v6.begin(), v6.end() - 4);
  EXPECT_EQ(roce::icrc(ip), roce::load_icrc(v6.data() + v6.size() - 4));
  // Byte 0's high nibble is the version (covered), its low one the traffic class (masked).
  const uint32_t base = roce::icrc(ip);
  ip[0] ^= std::byte{0x0F};
  EXPECT_EQ(roce::icrc(ip), base);
  ip[0] ^= std::byte{0x0F};
  ip[0] ^= std::byte{0x10};
  EXPECT_NE(roce::icrc(ip), base);
  ip[0] ^= std::byte{0x10};
  // Byte 0 as a whole carries the version: flips of 0x80 and 0xFF change it.
  const std::vector<size_t> masked = {1, 2, 3, 7, 46, 47, 52};
  for (size_t i = 1; i < ip.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xFF}) {
      ip[i] ^= static_cast<std::byte>(flip);
      const bool is_masked = std::find(masked.begin(), masked.end(), i) != masked.end();
      EXPECT_EQ(roce::icrc(ip) == base, is_masked) << "byte " << i;
      ip[i] ^= static_cast<std::byte>(flip);
    }
  }
}

// ---------------------------------------------------------------- build_frame

TEST(roce_sw_frame, BuildsWhatParseAndIcrcReadBack) {
  for (Opcode op : kAllOps) {
    for (uint32_t n : {0u, 1u, 3u, 4u, 7u, 1400u, 4096u}) {
      SCOPED_TRACE(std::string(roce::to_string(op)) + ", " + std::to_string(n) + " bytes");
      roce::FrameSpec s = spec_for(op);
      s.tos = 0x68;
      s.ttl = 17;
      const Bytes f = build(s, payload_of(n, 3));
      ASSERT_EQ(f.size(), 14u + 20 + 8 + 12 + (has_reth(op) ? 16 : 0) + (has_imm(op) ? 4 : 0) + n + (4 - n % 4) % 4 + 4);
      // Ethernet
      EXPECT_EQ(0, std::memcmp(f.data(), s.dst_mac, 6));
      EXPECT_EQ(0, std::memcmp(f.data() + 6, s.src_mac, 6));
      EXPECT_EQ(f[12], std::byte{0x08});
      EXPECT_EQ(f[13], std::byte{0x00});
      // IPv4: version/IHL, TOS, total length, id, DF, TTL, UDP, checksum sums to ones
      const std::byte* ip = f.data() + kEth;
      auto be16 = [](const std::byte* p) { return static_cast<uint32_t>(static_cast<uint8_t>(p[0]) << 8 | static_cast<uint8_t>(p[1])); };
      EXPECT_EQ(ip[0], std::byte{0x45});
      EXPECT_EQ(ip[1], std::byte{0x68});
      EXPECT_EQ(be16(ip + 2), f.size() - kEth);
      EXPECT_EQ(be16(ip + 4), 0x1234u);
      EXPECT_EQ(be16(ip + 6), 0x4000u);
      EXPECT_EQ(ip[8], std::byte{17});
      EXPECT_EQ(ip[9], std::byte{17});
      uint32_t sum = 0;
      for (int i = 0; i < 20; i += 2) sum += be16(ip + i);
      while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
      EXPECT_EQ(sum, 0xFFFFu);
      EXPECT_EQ(be16(ip + 12), 0x0A00u);
      EXPECT_EQ(be16(ip + 18), 0x0002u);
      // UDP
      const std::byte* udp = ip + kIp4;
      EXPECT_EQ(be16(udp), 49999u);
      EXPECT_EQ(be16(udp + 2), roce::kUdpPort);
      EXPECT_EQ(be16(udp + 4), f.size() - kEth - kIp4);
      EXPECT_EQ(be16(udp + 6), 0u);
      // BTH and the rest, through parse
      Packet out;
      const std::span<const std::byte> up = std::span(f).subspan(kEth + kIp4 + kUdp);
      ASSERT_EQ(roce::parse(up, static_cast<uint32_t>(up.size()), out), nullptr);
      EXPECT_EQ(out.bth.opcode, s.bth.opcode);
      EXPECT_EQ(out.bth.pkey, roce::kDefaultPkey);
      EXPECT_EQ(out.bth.dest_qp, s.bth.dest_qp);
      EXPECT_EQ(out.bth.psn, s.bth.psn);
      EXPECT_TRUE(out.bth.ack_req);
      EXPECT_TRUE(out.bth.solicited);
      EXPECT_FALSE(out.bth.migreq || out.bth.fecn || out.bth.becn);
      EXPECT_EQ(out.payload_bytes, n);
      const Bytes want = payload_of(n, 3);
      EXPECT_TRUE(std::equal(want.begin(), want.end(), up.begin() + out.payload_offset));
      // ICRC
      EXPECT_EQ(roce::load_icrc(f.data() + f.size() - 4), roce::icrc(ip_of(f)));
    }
  }
}

TEST(roce_sw_frame, WritesTheGivenPkeyPsnAndQpWithinTheirBits) {
  roce::FrameSpec s = spec_for(Opcode::uc_write_middle);
  s.bth.pkey = 0x8002;
  s.bth.psn = 0x1FFFFFF;    // 25 bits: the 24 low ones go out
  s.bth.dest_qp = 0xFF000001;
  s.bth.migreq = s.bth.fecn = s.bth.becn = true;
  const Bytes f = build(s, payload_of(8));
  Packet out;
  const std::span<const std::byte> up = std::span(f).subspan(kEth + kIp4 + kUdp);
  ASSERT_EQ(roce::parse(up, static_cast<uint32_t>(up.size()), out), nullptr);
  EXPECT_EQ(out.bth.pkey, 0x8002);
  EXPECT_EQ(out.bth.psn, 0xFFFFFFu);
  EXPECT_EQ(out.bth.dest_qp, 1u);
  EXPECT_TRUE(out.bth.migreq && out.bth.fecn && out.bth.becn);
}

TEST(roce_sw_frame, WritesTheTransportVersionItIsGivenWhichParseRefuses) {
  roce::FrameSpec s = spec_for(Opcode::uc_write_only);
  s.bth.tver = 1;
  const Bytes f = build(s, payload_of(4));
  Packet out;
  const std::span<const std::byte> up = std::span(f).subspan(kEth + kIp4 + kUdp);
  EXPECT_STREQ(roce::parse(up, static_cast<uint32_t>(up.size()), out), "unsupported BTH transport version");
  EXPECT_EQ(roce::load_icrc(f.data() + f.size() - 4), roce::icrc(ip_of(f)));
}

TEST(roce_sw_frame, RefusesWhatItCannotBuild) {
  const Bytes payload = payload_of(100);
  roce::FrameSpec s = spec_for(Opcode::uc_write_only);
  const uint32_t need = roce::frame_bytes(Opcode::uc_write_only, 100);
  EXPECT_EQ(need, 14u + 20 + 8 + 12 + 16 + 100 + 4);
  Bytes out(need + 10);
  EXPECT_EQ(roce::build_frame(s, payload, std::span(out).first(need - 1)), 0u);
  EXPECT_EQ(roce::build_frame(s, payload, std::span(out).first(need)), need);
  s.bth.opcode = 0x0C;  // RDMA READ REQUEST: not sent
  EXPECT_EQ(roce::build_frame(s, payload, out), 0u);
  EXPECT_EQ(roce::frame_bytes(static_cast<Opcode>(0x0C), 100), 0u);
  // An IP packet beyond 65535 bytes: headers 44, payload and pad at most 65488.
  s.bth.opcode = static_cast<uint8_t>(Opcode::uc_write_middle);
  const Bytes big(65489);
  Bytes big_out(roce::frame_bytes(Opcode::uc_write_middle, static_cast<uint32_t>(big.size())) + 8);
  EXPECT_EQ(roce::build_frame(s, big, big_out), 0u);
  const Bytes fits(65488);
  EXPECT_EQ(roce::build_frame(s, fits, big_out), 14u + 65532);
}

}  // namespace
