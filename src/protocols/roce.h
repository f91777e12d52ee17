// RoCEv2 (InfiniBand transport over UDP, port 4791; IBTA Vol. 1 ch. 9 and Annex A17) as an
// RDMA NIC sees it on the wire: the Base Transport Header (BTH), the RDMA Extended Transport
// Header (RETH) and the immediate (ImmDt) of RC/UC WRITE and SEND packets, and the invariant
// CRC (ICRC) that ends each packet. Parsing reads only the bytes it is given; building writes
// whole Ethernet + IPv4 + UDP frames with a correct ICRC (the sensor emulator's packets).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace netdaq::protocols::roce {

inline constexpr uint16_t kUdpPort = 4791;  // IANA's RoCEv2 port
inline constexpr uint32_t kBthBytes = 12;
inline constexpr uint32_t kRethBytes = 16;
inline constexpr uint32_t kImmBytes = 4;
inline constexpr uint32_t kIcrcBytes = 4;
inline constexpr uint32_t kPsnMask = 0xFFFFFF;  // PSNs are 24 bits and wrap
inline constexpr uint16_t kDefaultPkey = 0xFFFF;

// BTH opcodes netdaq receives and sends (bits 7-5 transport: 000 RC, 001 UC; bits 4-0 operation).
enum class Opcode : uint8_t {
  rc_send_only = 0x04,
  rc_write_first = 0x06,
  rc_write_middle = 0x07,
  rc_write_last = 0x08,
  rc_write_last_imm = 0x09,
  rc_write_only = 0x0A,
  rc_write_only_imm = 0x0B,
  uc_send_only = 0x24,
  uc_write_first = 0x26,
  uc_write_middle = 0x27,
  uc_write_last = 0x28,
  uc_write_last_imm = 0x29,
  uc_write_only = 0x2A,
  uc_write_only_imm = 0x2B,
};
const char* to_string(Opcode op) noexcept;  // "UC RDMA WRITE ONLY with immediate"; "unknown" otherwise

// Where a packet stands in its message.
enum class Position : uint8_t { first, middle, last, only };

struct Bth {
  uint8_t opcode = 0;
  bool solicited = false;
  bool migreq = false;
  uint8_t pad = 0;       // bytes of padding before the ICRC (payload to a multiple of 4)
  uint8_t tver = 0;
  uint16_t pkey = 0;
  bool fecn = false, becn = false;
  uint32_t dest_qp = 0;  // 24 bits
  bool ack_req = false;
  uint32_t psn = 0;      // 24 bits
};

struct Reth {
  uint64_t va = 0;
  uint32_t rkey = 0;
  uint32_t length = 0;  // the whole message's bytes (DMA length)
};

// One RoCEv2 packet from its UDP payload.
struct Packet {
  Bth bth;
  Opcode op{};
  Position position = Position::only;
  bool write = false;         // an RDMA WRITE (else a SEND)
  bool has_reth = false;      // WRITE FIRST and WRITE ONLY (with or without immediate)
  Reth reth;
  bool has_imm = false;
  uint32_t imm = 0;           // host order (big-endian on the wire)
  uint32_t payload_offset = 0;  // from the UDP payload's first byte
  uint32_t payload_bytes = 0;   // without pad and ICRC
};

// Parses the UDP payload `udp_payload` of `packet_len` bytes (headers must lie in
// udp_payload; the payload may continue in later segments). nullptr on success, else why
// not (a static string: "unknown BTH opcode", "unsupported BTH transport version", "packet
// shorter than its headers", "pad longer than the payload", "headers beyond the first segment").
// Checks what a receiver checks before the ICRC: opcode known, transport version 0, headers
// and pad within the packet. Never reads outside udp_payload.
const char* parse(std::span<const std::byte> udp_payload, uint32_t packet_len, Packet& out) noexcept;

// The ICRC of a RoCEv2 packet (IBTA Annex A17.3.3): CRC-32 (as zlib's crc32) over 8 bytes of
// ones, then the IP header with its variant fields masked to ones (IPv4: TOS, TTL, header
// checksum; IPv6: traffic class, flow label, hop limit), the UDP header with its checksum
// masked, the BTH with its reserved8 byte (byte 4) masked, then the rest of the packet up to
// the ICRC. `ip_packet`: from the IP header's first byte to the ICRC's first byte (IPv4 or
// IPv6, told by the version nibble). Returns the value as sent: the 4 wire bytes read as a
// little-endian uint32 (Linux rxe, Wireshark and scapy agree on these 4 bytes; Wireshark shows
// them read big-endian).
uint32_t icrc(std::span<const std::byte> ip_packet) noexcept;
// icrc() over bytes held in up to two pieces (headers, then payload in a later segment).
uint32_t icrc(std::span<const std::byte> ip_headers_and_first, std::span<const std::byte> rest) noexcept;

// Reads the 4 ICRC bytes at p as icrc() returns them.
uint32_t load_icrc(const std::byte* p) noexcept;
void store_icrc(std::byte* p, uint32_t icrc) noexcept;

// What the emulator sends: one RoCEv2 packet as a whole Ethernet frame.
struct FrameSpec {
  uint8_t src_mac[6]{}, dst_mac[6]{};
  uint32_t src_ip = 0, dst_ip = 0;  // IPv4, host order
  uint16_t src_port = 49152;        // RoCEv2 senders vary it per QP for ECMP entropy
  uint16_t dst_port = kUdpPort;
  uint16_t ip_id = 0;
  uint8_t ttl = 64;
  uint8_t tos = 0;
  Bth bth;                          // opcode, dest_qp, psn, ...; pad is computed
  Reth reth;                        // written when the opcode has one
  uint32_t imm = 0;                 // written when the opcode has one (host order)
};

// Bytes of the whole frame (Ethernet 14 + IPv4 20 + UDP 8 + BTH + RETH? + ImmDt? + payload +
// pad + ICRC) for a payload of `payload_bytes` with `op`; 0 for an opcode outside Opcode.
uint32_t frame_bytes(Opcode op, uint32_t payload_bytes) noexcept;
// Writes the frame into out (at least frame_bytes() long): headers, payload, pad (zeros), IPv4
// checksum, UDP checksum 0 (RoCEv2 allows it) and ICRC. Every Bth field is written as given but
// pad (computed), pkey (0: kDefaultPkey) and tver (its 4 bits; receivers want 0). Returns the
// bytes written, 0 for an opcode outside Opcode, an IP packet over 65535 bytes, or when out
// is too small.
uint32_t build_frame(const FrameSpec& spec, std::span<const std::byte> payload, std::span<std::byte> out) noexcept;

}  // namespace netdaq::protocols::roce
