// RoCEv2 wire format: BTH / RETH / ImmDt parsing, the ICRC (IBTA Annex A17.3.3) and whole
// frames for the sensor emulator. Layouts (big-endian on the wire):
//   BTH  12  opcode | SE M pad(2) tver(4) | pkey(16) | FECN BECN resv6 | destQP(24)
//            | A resv7 | PSN(24)
//   RETH 16  VA(64) | rkey(32) | DMA length(32)
//   ImmDt 4
// then the payload, 0-3 pad bytes and the 4-byte ICRC.
#include "protocols/roce.h"

#include <algorithm>
#include <cstring>

#include "protocols/crc32.h"

namespace netdaq::protocols::roce {
namespace {

constexpr uint32_t kEthBytes = 14;
constexpr uint32_t kIpv4Bytes = 20;
constexpr uint32_t kIpv6Bytes = 40;
constexpr uint32_t kUdpBytes = 8;
constexpr uint32_t kMaxIpHeader = 60;  // IPv4 with options
constexpr uint32_t kMaxIpPacket = 0xFFFF;

uint8_t u8(const std::byte* p) noexcept { return static_cast<uint8_t>(*p); }
uint16_t be16(const std::byte* p) noexcept { return static_cast<uint16_t>(u8(p) << 8 | u8(p + 1)); }
uint32_t be24(const std::byte* p) noexcept { return uint32_t{u8(p)} << 16 | uint32_t{u8(p + 1)} << 8 | u8(p + 2); }
uint32_t be32(const std::byte* p) noexcept { return uint32_t{be16(p)} << 16 | be16(p + 2); }
uint64_t be64(const std::byte* p) noexcept { return uint64_t{be32(p)} << 32 | be32(p + 4); }

void put8(std::byte* p, uint32_t v) noexcept { *p = static_cast<std::byte>(v); }
void put_be16(std::byte* p, uint32_t v) noexcept {
  put8(p, v >> 8);
  put8(p + 1, v);
}
void put_be24(std::byte* p, uint32_t v) noexcept {
  put8(p, v >> 16);
  put_be16(p + 1, v);
}
void put_be32(std::byte* p, uint32_t v) noexcept {
  put_be16(p, v >> 16);
  put_be16(p + 2, v);
}
void put_be64(std::byte* p, uint64_t v) noexcept {
  put_be32(p, static_cast<uint32_t>(v >> 32));
  put_be32(p + 4, static_cast<uint32_t>(v));
}

// What an opcode carries; known == false for opcodes outside the enum.
struct OpInfo {
  bool known = false;
  bool write = false;
  bool reth = false;
  bool imm = false;
  Position position = Position::only;
};

constexpr OpInfo op_info(uint8_t opcode) noexcept {
  const uint8_t transport = opcode & 0xE0;
  if (transport != 0x00 && transport != 0x20) return {};  // RC and UC only
  switch (opcode & 0x1F) {
    case 0x04: return {true, false, false, false, Position::only};   // SEND ONLY
    case 0x06: return {true, true, true, false, Position::first};    // WRITE FIRST
    case 0x07: return {true, true, false, false, Position::middle};  // WRITE MIDDLE
    case 0x08: return {true, true, false, false, Position::last};    // WRITE LAST
    case 0x09: return {true, true, false, true, Position::last};     // WRITE LAST with immediate
    case 0x0A: return {true, true, true, false, Position::only};     // WRITE ONLY
    case 0x0B: return {true, true, true, true, Position::only};      // WRITE ONLY with immediate
    default: return {};
  }
}

constexpr uint32_t header_bytes(const OpInfo& o) noexcept {
  return kBthBytes + (o.reth ? kRethBytes : 0) + (o.imm ? kImmBytes : 0);
}

constexpr uint32_t pad_for(uint32_t payload_bytes) noexcept { return (4 - payload_bytes % 4) % 4; }

// The CRC after the 8 bytes of ones that stand in for IB's masked LRH (RoCEv2 has none):
// zlib.crc32(b"\xff" * 8). Linux rxe seeds crc32_le with 0xdebb20e3: the same state, uninverted.
constexpr uint32_t kCrcOfMaskedLrh = 0x2144DF1C;

// Two pieces read as one: the ICRC's input may be split after any byte.
struct Pieces {
  std::span<const std::byte> a, b;
  size_t size() const noexcept { return a.size() + b.size(); }
  // Copies [0, n) into out (n <= size()).
  void copy_prefix(std::byte* out, size_t n) const noexcept {
    const size_t from_a = std::min(n, a.size());
    if (from_a) std::memcpy(out, a.data(), from_a);
    if (n > from_a) std::memcpy(out + from_a, b.data(), n - from_a);
  }
  // The CRC continued over [from, size()).
  uint32_t crc_from(uint32_t crc, size_t from) const noexcept {
    if (from < a.size()) crc = crc32_gzip(crc, a.data() + from, a.size() - from);
    const size_t in_b = from > a.size() ? from - a.size() : 0;
    if (in_b < b.size()) crc = crc32_gzip(crc, b.data() + in_b, b.size() - in_b);
    return crc;
  }
};

// Sets bytes [at, at + n) of buf (of `len` valid bytes) to ones, where they exist.
void mask(std::byte* buf, size_t len, size_t at, size_t n) noexcept {
  for (size_t i = at; i < at + n && i < len; ++i) buf[i] = std::byte{0xFF};
}

uint32_t icrc_of(const Pieces& in) noexcept {
  // The variant header fields masked (Annex A17.3.3; Linux rxe_icrc.c does the same): a copy
  // of the IP, UDP and BTH headers on the stack, the rest of the packet read in place. IPv4
  // options (rxe assumes none; no RoCE sender uses them) are covered, the UDP header after them.
  std::byte head[kMaxIpHeader + kUdpBytes + kBthBytes];
  const uint8_t first = in.size() ? static_cast<uint8_t>(in.a.empty() ? in.b[0] : in.a[0]) : 0;
  const bool v6 = first >> 4 == 6;
  const size_t ip_bytes = v6 ? kIpv6Bytes : std::clamp<size_t>((first & 0x0F) * 4u, kIpv4Bytes, kMaxIpHeader);
  const size_t n = std::min(in.size(), ip_bytes + kUdpBytes + kBthBytes);
  in.copy_prefix(head, n);
  if (v6) {
    if (n) head[0] |= std::byte{0x0F};  // traffic class, high nibble (the version stays)
    mask(head, n, 1, 3);               // traffic class, low nibble; flow label
    mask(head, n, 7, 1);               // hop limit
  } else {
    mask(head, n, 1, 1);   // TOS (DSCP, ECN)
    mask(head, n, 8, 1);   // TTL
    mask(head, n, 10, 2);  // header checksum
  }
  mask(head, n, ip_bytes + 6, 2);              // UDP checksum
  mask(head, n, ip_bytes + kUdpBytes + 4, 1);  // BTH FECN, BECN, resv6 (IB's reserved8)
  const uint32_t crc = crc32_gzip(kCrcOfMaskedLrh, head, n);
  return in.crc_from(crc, n);
}

}  // namespace

const char* to_string(Opcode op) noexcept {
  switch (op) {
    case Opcode::rc_send_only: return "RC SEND ONLY";
    case Opcode::rc_write_first: return "RC RDMA WRITE FIRST";
    case Opcode::rc_write_middle: return "RC RDMA WRITE MIDDLE";
    case Opcode::rc_write_last: return "RC RDMA WRITE LAST";
    case Opcode::rc_write_last_imm: return "RC RDMA WRITE LAST with immediate";
    case Opcode::rc_write_only: return "RC RDMA WRITE ONLY";
    case Opcode::rc_write_only_imm: return "RC RDMA WRITE ONLY with immediate";
    case Opcode::uc_send_only: return "UC SEND ONLY";
    case Opcode::uc_write_first: return "UC RDMA WRITE FIRST";
    case Opcode::uc_write_middle: return "UC RDMA WRITE MIDDLE";
    case Opcode::uc_write_last: return "UC RDMA WRITE LAST";
    case Opcode::uc_write_last_imm: return "UC RDMA WRITE LAST with immediate";
    case Opcode::uc_write_only: return "UC RDMA WRITE ONLY";
    case Opcode::uc_write_only_imm: return "UC RDMA WRITE ONLY with immediate";
  }
  return "unknown";
}

const char* parse(std::span<const std::byte> udp_payload, uint32_t packet_len, Packet& out) noexcept {
  out = Packet{};
  if (packet_len < kBthBytes + kIcrcBytes) return "packet shorter than its headers";
  if (udp_payload.size() < kBthBytes) return "headers beyond the first segment";
  const std::byte* p = udp_payload.data();
  Bth& b = out.bth;
  b.opcode = u8(p);
  b.solicited = u8(p + 1) & 0x80;
  b.migreq = u8(p + 1) & 0x40;
  b.pad = (u8(p + 1) >> 4) & 3;
  b.tver = u8(p + 1) & 0x0F;
  b.pkey = be16(p + 2);
  b.fecn = u8(p + 4) & 0x80;
  b.becn = u8(p + 4) & 0x40;
  b.dest_qp = be24(p + 5);
  b.ack_req = u8(p + 8) & 0x80;
  b.psn = be24(p + 9);
  if (b.tver != 0) return "unsupported BTH transport version";
  const OpInfo o = op_info(b.opcode);
  if (!o.known) return "unknown BTH opcode";
  out.op = static_cast<Opcode>(b.opcode);
  out.position = o.position;
  out.write = o.write;
  out.has_reth = o.reth;
  out.has_imm = o.imm;
  const uint32_t headers = header_bytes(o);
  if (packet_len < headers + kIcrcBytes) return "packet shorter than its headers";
  if (packet_len - headers - kIcrcBytes < b.pad) return "pad longer than the payload";
  if (udp_payload.size() < headers) return "headers beyond the first segment";
  uint32_t at = kBthBytes;
  if (o.reth) {
    out.reth.va = be64(p + at);
    out.reth.rkey = be32(p + at + 8);
    out.reth.length = be32(p + at + 12);
    at += kRethBytes;
  }
  if (o.imm) out.imm = be32(p + at);
  out.payload_offset = headers;
  out.payload_bytes = packet_len - headers - b.pad - kIcrcBytes;
  return nullptr;
}

uint32_t icrc(std::span<const std::byte> ip_packet) noexcept { return icrc_of({ip_packet, {}}); }

uint32_t icrc(std::span<const std::byte> ip_headers_and_first, std::span<const std::byte> rest) noexcept {
  return icrc_of({ip_headers_and_first, rest});
}

// The CRC's low byte goes first on the wire (Linux rxe stores its u32 in CPU order on x86).
uint32_t load_icrc(const std::byte* p) noexcept {
  return uint32_t{u8(p)} | uint32_t{u8(p + 1)} << 8 | uint32_t{u8(p + 2)} << 16 | uint32_t{u8(p + 3)} << 24;
}

void store_icrc(std::byte* p, uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) put8(p + i, v >> (8 * i));
}

uint32_t frame_bytes(Opcode op, uint32_t payload_bytes) noexcept {
  const OpInfo o = op_info(static_cast<uint8_t>(op));
  if (!o.known) return 0;
  return kEthBytes + kIpv4Bytes + kUdpBytes + header_bytes(o) + payload_bytes + pad_for(payload_bytes) + kIcrcBytes;
}

uint32_t build_frame(const FrameSpec& spec, std::span<const std::byte> payload, std::span<std::byte> out) noexcept {
  const OpInfo o = op_info(spec.bth.opcode);
  if (!o.known || payload.size() > kMaxIpPacket) return 0;
  const auto payload_bytes = static_cast<uint32_t>(payload.size());
  const uint32_t total = frame_bytes(static_cast<Opcode>(spec.bth.opcode), payload_bytes);
  if (total - kEthBytes > kMaxIpPacket || out.size() < total) return 0;
  std::byte* f = out.data();

  std::memcpy(f, spec.dst_mac, 6);
  std::memcpy(f + 6, spec.src_mac, 6);
  put_be16(f + 12, 0x0800);

  std::byte* ip = f + kEthBytes;
  const uint32_t ip_len = total - kEthBytes;
  put8(ip, 0x45);
  put8(ip + 1, spec.tos);
  put_be16(ip + 2, ip_len);
  put_be16(ip + 4, spec.ip_id);
  put_be16(ip + 6, 0x4000);  // DF: RoCE packets are never fragmented
  put8(ip + 8, spec.ttl);
  put8(ip + 9, 17);
  put_be16(ip + 10, 0);
  put_be32(ip + 12, spec.src_ip);
  put_be32(ip + 16, spec.dst_ip);
  uint32_t sum = 0;
  for (uint32_t i = 0; i < kIpv4Bytes; i += 2) sum += be16(ip + i);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  put_be16(ip + 10, ~sum & 0xFFFF);

  std::byte* udp = ip + kIpv4Bytes;
  put_be16(udp, spec.src_port);
  put_be16(udp + 2, spec.dst_port);
  put_be16(udp + 4, ip_len - kIpv4Bytes);
  put_be16(udp + 6, 0);  // no checksum: the ICRC covers the packet

  std::byte* bth = udp + kUdpBytes;
  const Bth& b = spec.bth;
  const uint32_t pad = pad_for(payload_bytes);
  put8(bth, b.opcode);
  put8(bth + 1, (b.solicited ? 0x80 : 0) | (b.migreq ? 0x40 : 0) | pad << 4 | (b.tver & 0x0F));
  put_be16(bth + 2, b.pkey ? b.pkey : kDefaultPkey);
  put8(bth + 4, (b.fecn ? 0x80 : 0) | (b.becn ? 0x40 : 0));
  put_be24(bth + 5, b.dest_qp & 0xFFFFFF);
  put8(bth + 8, b.ack_req ? 0x80 : 0);
  put_be24(bth + 9, b.psn & kPsnMask);
  std::byte* at = bth + kBthBytes;
  if (o.reth) {
    put_be64(at, spec.reth.va);
    put_be32(at + 8, spec.reth.rkey);
    put_be32(at + 12, spec.reth.length);
    at += kRethBytes;
  }
  if (o.imm) {
    put_be32(at, spec.imm);
    at += kImmBytes;
  }
  if (payload_bytes) std::memcpy(at, payload.data(), payload_bytes);
  at += payload_bytes;
  std::memset(at, 0, pad);
  at += pad;
  store_icrc(at, icrc({ip, static_cast<size_t>(at - ip)}));
  return total;
}

}  // namespace netdaq::protocols::roce
