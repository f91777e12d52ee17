// libFuzzer target: the RoCEv2 wire format (src/protocols/roce.h), which reads every packet a
// software RoCE receiver gets and writes every packet the sensor emulator sends.
//
// Each input is used three ways:
//   1. as a UDP payload: parse() whole, with only its first `cut` bytes in the first segment,
//      and with a packet_len beyond the input (the payload continuing in later segments). On
//      success: a known opcode, tver 0, RETH/ImmDt as the opcode says, headers inside the first
//      segment, headers + payload + pad + ICRC == packet_len. On failure: a non-empty reason;
//      a split differs from whole only by "headers beyond the first segment", where the cut
//      falls inside the headers.
//   2. as an IP packet (any bytes, any version nibble): icrc() reads only the input (ASan), and
//      gives the same in two pieces cut anywhere.
//   3. as a FrameSpec (opcode from the 14 sent, flags, QP, PSN, pkey, RETH, immediate, TOS,
//      TTL) and a payload (the rest): build_frame fills exactly frame_bytes() (and refuses a
//      buffer one byte short), the IPv4 checksum sums to ones, parse() reads back what was
//      asked, the ICRC written is icrc()'s, and one byte changed outside the masked fields
//      changes it while a masked one does not. Then the receiver (check_icrc) decodes that
//      frame whole and in two pieces cut anywhere (a packet in two AF_XDP buffers): the same
//      verdict and reason, unless the first piece lacks the headers (then: unreadable).
// Inputs and first segments lie in exact-size heap buffers, so AddressSanitizer reports any read
// past them. Any violation prints what failed and aborts, which libFuzzer reports as a crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <span>
#include <vector>

#include "net/frame_headers.h"
#include "protocols/roce.h"
#include "protocols/roce_receiver.h"

#define NDQ_FUZZER "roce_sw_fuzz"
#include "decoder_fuzz.h"

namespace {

namespace roce = netdaq::protocols::roce;
using ndqfuzz::Buf;

constexpr uint8_t kOps[] = {0x04, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x24, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B};
constexpr size_t kEth = 14, kIp = 20, kUdp = 8;

uint32_t headers_of(uint8_t op) {
  const uint8_t low = op & 0x1F;
  const bool reth = low == 0x06 || low == 0x0A || low == 0x0B;
  const bool imm = low == 0x09 || low == 0x0B;
  return roce::kBthBytes + (reth ? roce::kRethBytes : 0) + (imm ? roce::kImmBytes : 0);
}

bool known(uint8_t op) {
  for (uint8_t k : kOps)
    if (k == op) return true;
  return false;
}

bool same(const roce::Packet& a, const roce::Packet& b) {
  return a.bth.opcode == b.bth.opcode && a.bth.solicited == b.bth.solicited && a.bth.migreq == b.bth.migreq &&
         a.bth.pad == b.bth.pad && a.bth.tver == b.bth.tver && a.bth.pkey == b.bth.pkey && a.bth.fecn == b.bth.fecn &&
         a.bth.becn == b.bth.becn && a.bth.dest_qp == b.bth.dest_qp && a.bth.ack_req == b.bth.ack_req &&
         a.bth.psn == b.bth.psn && a.op == b.op && a.position == b.position && a.write == b.write &&
         a.has_reth == b.has_reth && a.reth.va == b.reth.va && a.reth.rkey == b.reth.rkey &&
         a.reth.length == b.reth.length && a.has_imm == b.has_imm && a.imm == b.imm &&
         a.payload_offset == b.payload_offset && a.payload_bytes == b.payload_bytes;
}

void check_parsed(const char* why, const roce::Packet& p, size_t seg, uint64_t packet_len, size_t size, size_t cut) {
  if (why) {
    CHECK(why[0] != '\0');
    return;
  }
  CHECK(known(p.bth.opcode) && static_cast<uint8_t>(p.op) == p.bth.opcode);
  CHECK(p.bth.tver == 0 && p.bth.pad < 4 && p.bth.dest_qp <= 0xFFFFFF && p.bth.psn <= roce::kPsnMask);
  CHECK(p.payload_offset == headers_of(p.bth.opcode));
  CHECK(p.payload_offset <= seg);
  CHECK(uint64_t{p.payload_offset} + p.payload_bytes + p.bth.pad + roce::kIcrcBytes == packet_len);
  CHECK(p.has_reth == (p.write && (p.position == roce::Position::first || p.position == roce::Position::only)));
}

void check_parse(const Buf& in, size_t cut) {
  const size_t size = in.size;
  const auto len = static_cast<uint32_t>(size);
  roce::Packet whole, split, longer;
  const char* why = roce::parse(in.span(), len, whole);
  check_parsed(why, whole, size, len, size, cut);

  const Buf head(reinterpret_cast<const uint8_t*>(in.bytes.get()), cut);
  const char* why_split = roce::parse(head.span(), len, split);
  check_parsed(why_split, split, cut, len, size, cut);
  if (why == nullptr && why_split == nullptr) CHECK(same(whole, split));
  if ((why == nullptr) != (why_split == nullptr) || (why && std::strcmp(why, why_split) != 0)) {
    CHECK(why_split && std::strcmp(why_split, "headers beyond the first segment") == 0);
    CHECK(cut < size);
    if (!why) CHECK(cut < whole.payload_offset);
  }

  // The packet continues beyond the input: whatever parsed whole parses the same, longer.
  const uint64_t extra = 1 + size % 1500;
  const char* why_longer = roce::parse(in.span(), static_cast<uint32_t>(size + extra), longer);
  check_parsed(why_longer, longer, size, size + extra, size, cut);
  if (!why) {
    CHECK(!why_longer);
    CHECK(longer.payload_bytes == whole.payload_bytes + extra);
  }
}

void check_icrc(const Buf& in, size_t cut) {
  const size_t size = in.size;
  const uint32_t whole = roce::icrc(in.span());
  const Buf head(reinterpret_cast<const uint8_t*>(in.bytes.get()), cut);
  const Buf tail(reinterpret_cast<const uint8_t*>(in.bytes.get()) + cut, size - cut);
  CHECK(roce::icrc(head.span(), tail.span()) == whole);
}

struct Reader {
  const uint8_t* p;
  size_t n;
  uint64_t take(size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes && n; ++i, ++p, --n) v = v << 8 | *p;
    return v;
  }
};

// The frame through two receivers for its QP, one given it whole and one in two pieces.
void check_receiver(std::span<const std::byte> frame, const roce::FrameSpec& s, size_t cut) {
  const size_t size = frame.size();
  netdaq::RoceOptions o;
  netdaq::RoceQueuePair q;
  q.qpn = s.bth.dest_qp, q.rkey = s.reth.rkey, q.base_va = s.reth.va, q.slots = 2, q.stride = q.slot_size = 1 << 16;
  q.psn = s.bth.psn;
  o.queue_pairs.push_back(q);
  o.mtu = 4096;
  netdaq::protocols::RoceDecoder whole_rx(o, 1 << 16), split_rx(o, 1 << 16);
  const auto u = netdaq::detail::find_udp_payload(frame.data(), static_cast<uint32_t>(frame.size()));
  CHECK(u.ok);
  netdaq::protocols::Decoded whole, split;
  whole_rx.decode_packet({frame.first(u.offset + u.size), frame.subspan(u.offset, u.size), {}, u.size}, whole);
  // The first piece ends at the cut, but holds at least the UDP header (as an engine's does).
  const size_t at = std::clamp<size_t>(cut % (frame.size() + 1), u.offset, u.offset + u.size);
  const Buf head(reinterpret_cast<const uint8_t*>(frame.data()), at);
  const Buf rest(reinterpret_cast<const uint8_t*>(frame.data()) + at, u.offset + u.size - at);
  split_rx.decode_packet({head.span(), head.span().subspan(u.offset), rest.span(), u.size}, split);
  if (at < 14 + 4 + 60 + 8 && at < u.offset + u.size) {
    CHECK(split.verdict == netdaq::protocols::Verdict::malformed || whole.verdict == split.verdict);
    return;
  }
  CHECK(whole.verdict == split.verdict);
  CHECK(whole.reason == split.reason || (whole.reason && split.reason && std::strcmp(whole.reason, split.reason) == 0));
  CHECK(whole_rx.counters().bad_icrc == 0 && split_rx.counters().bad_icrc == 0);
}

void check_round_trip(const uint8_t* data, size_t size, size_t cut) {
  Reader r{data, size};
  roce::FrameSpec s;
  s.bth.opcode = kOps[r.take(1) % std::size(kOps)];
  const auto flags = r.take(1);
  s.bth.solicited = flags & 1;
  s.bth.migreq = flags & 2;
  s.bth.fecn = flags & 4;
  s.bth.becn = flags & 8;
  s.bth.ack_req = flags & 16;
  s.bth.dest_qp = static_cast<uint32_t>(r.take(3));
  s.bth.psn = static_cast<uint32_t>(r.take(3));
  s.bth.pkey = static_cast<uint16_t>(r.take(2));
  s.reth = {r.take(8), static_cast<uint32_t>(r.take(4)), static_cast<uint32_t>(r.take(4))};
  s.imm = static_cast<uint32_t>(r.take(4));
  s.tos = static_cast<uint8_t>(r.take(1));
  s.ttl = static_cast<uint8_t>(r.take(1));
  s.src_ip = static_cast<uint32_t>(r.take(4));
  const std::span<const std::byte> payload(reinterpret_cast<const std::byte*>(r.p), std::min<size_t>(r.n, 65000));

  const uint32_t want = roce::frame_bytes(static_cast<roce::Opcode>(s.bth.opcode), static_cast<uint32_t>(payload.size()));
  std::vector<std::byte> frame(want);
  CHECK(roce::build_frame(s, payload, std::span(frame).first(want - 1)) == 0);
  CHECK(roce::build_frame(s, payload, frame) == want);

  uint32_t sum = 0;
  for (size_t i = 0; i < kIp; i += 2)
    sum += static_cast<uint32_t>(frame[kEth + i]) << 8 | static_cast<uint32_t>(frame[kEth + i + 1]);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  CHECK(sum == 0xFFFF);

  const std::span<const std::byte> udp_payload = std::span(frame).subspan(kEth + kIp + kUdp);
  roce::Packet p;
  CHECK(roce::parse(udp_payload, static_cast<uint32_t>(udp_payload.size()), p) == nullptr);
  CHECK(p.bth.opcode == s.bth.opcode && p.bth.dest_qp == s.bth.dest_qp && p.bth.psn == s.bth.psn);
  CHECK(p.bth.pkey == (s.bth.pkey ? s.bth.pkey : roce::kDefaultPkey));
  CHECK(p.bth.solicited == s.bth.solicited && p.bth.migreq == s.bth.migreq && p.bth.fecn == s.bth.fecn &&
        p.bth.becn == s.bth.becn && p.bth.ack_req == s.bth.ack_req);
  CHECK(!p.has_reth || (p.reth.va == s.reth.va && p.reth.rkey == s.reth.rkey && p.reth.length == s.reth.length));
  CHECK(!p.has_imm || p.imm == s.imm);
  CHECK(p.payload_bytes == payload.size());
  CHECK(payload.empty() || std::memcmp(udp_payload.data() + p.payload_offset, payload.data(), payload.size()) == 0);

  check_receiver(frame, s, cut);

  std::span<std::byte> ip = std::span(frame).subspan(kEth, frame.size() - kEth - roce::kIcrcBytes);
  const uint32_t written = roce::load_icrc(frame.data() + frame.size() - roce::kIcrcBytes);
  CHECK(roce::icrc(ip) == written);
  // One byte changed: the ICRC changes unless the byte is masked (TOS, TTL, IP checksum, UDP
  // checksum, BTH byte 4). A CRC-32 catches every error within 32 bits.
  const size_t at = cut % ip.size();
  const bool masked = at == 1 || at == 8 || at == 10 || at == 11 || at == 26 || at == 27 || at == 32;
  ip[at] ^= std::byte{static_cast<uint8_t>(1 + size % 255)};
  CHECK((roce::icrc(ip) == written) == masked);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 20) return 0;
  const Buf in(data, size);
  // Where to cut: from the length and last bytes, so that mutations of a valid packet's
  // payload move the cut without touching its headers.
  uint32_t tail = 0;
  if (size >= 4) std::memcpy(&tail, data + size - 4, 4);
  const size_t cut = static_cast<size_t>((uint64_t{tail} * 0x9E3779B1u + size) % (size + 1));
  check_parse(in, cut);
  check_icrc(in, cut);
  check_round_trip(data, size, cut);
  return 0;
}
