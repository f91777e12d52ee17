// The software RoCEv2 receiver: an RDMA NIC's receive checks, then the WRITE's bytes as a span
// (roce_receiver.h says the order). Frame numbers: frame f lives in slot f % slots; a slot is
// unwrapped to a 64-bit frame per QP by PSN order, which tells new from old: a packet with a
// new PSN belongs to the newest frame or a later one (the next frame in its slot after the
// newest, or the newest itself unless its immediate already ended it); a packet that arrived
// out of order to the newest frame or an earlier one (the nearest in its slot at or before it).
// So frames keep their numbers however packets are reordered, as long as fewer than `slots`
// whole frames are lost in one gap (an RDMA NIC would have overwritten those slots anyway).
#include "protocols/roce_receiver.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "net/frame_headers.h"
#include "netdaq/status.h"

namespace netdaq::protocols {
namespace {

constexpr uint32_t kPsnHalf = 1u << 23;  // PSN distances below this are ahead, else behind
constexpr uint32_t kMaxPsnWindow = 1u << 23;

constexpr size_t kHeadersInFirstPiece = 14 + 4 + 60 + 8;  // Ethernet, VLAN tag, IPv4 with options, UDP
constexpr const char* kNoHeaders = "RoCE: ICRC check needs the IP header (engine without whole frames)";
constexpr const char* kHeadersUnreadable = "RoCE: ICRC check found no Ethernet / IP / UDP headers in the frame";
constexpr const char* kBadIcrc = "RoCE: ICRC mismatch";
constexpr const char* kUnknownQp = "RoCE: destination QP is not one of roce.queue_pairs";
constexpr const char* kDuplicate = "RoCE: duplicate PSN";
constexpr const char* kStale = "RoCE: PSN further behind than roce.psn_window, or before the queue pair's first";
constexpr const char* kBadRkey = "RoCE: RETH rkey is not the queue pair's";
constexpr const char* kOutOfWindow = "RoCE: RETH VA and length outside the queue pair's slots";
constexpr const char* kBeforeFirstFrame = "RoCE: a reordered WRITE to a frame before the queue pair's first";
constexpr const char* kNoFirst = "RoCE: WRITE MIDDLE or LAST whose FIRST was not received";
constexpr const char* kOnlySize = "RoCE: WRITE ONLY payload differs from its RETH length";
constexpr const char* kFirstSize = "RoCE: WRITE FIRST must carry roce.mtu bytes of a longer message";
constexpr const char* kMiddleSize = "RoCE: WRITE MIDDLE must carry roce.mtu bytes before its message's last";
constexpr const char* kLastSize = "RoCE: WRITE LAST does not end its message (PSN or payload size)";
constexpr const char* kStateless = "RoCE: decoded without decode_packet() (the receiver keeps PSNs per queue pair)";

uint64_t load_be64(const std::byte* p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return std::endian::native == std::endian::little ? __builtin_bswap64(v) : v;
}

// Clears bits [from, from + n) of a ring of `bits` bits (n <= bits), wrapping at its end.
void clear_ring(uint64_t* words, uint32_t bits, uint32_t from, uint32_t n) noexcept {
  while (n) {
    const uint32_t run = std::min(n, bits - from);
    for (uint32_t b = from, e = from + run; b < e;) {
      const uint32_t w = b / 64, lo = b % 64, hi = std::min<uint32_t>(64, lo + (e - b));
      const uint64_t m = (hi == 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1) & ~((uint64_t{1} << lo) - 1);
      words[w] &= ~m;
      b += hi - lo;
    }
    n -= run;
    from = 0;
  }
}

}  // namespace

RoceDecoder::RoceDecoder(const RoceOptions& options, uint64_t frame_bytes) : options_(options) {
  const auto bad = [](const std::string& what) { throw Error(Errc::invalid_config, "roce receiver: " + what); };
  if (options_.mtu == 0) bad("roce.mtu must be at least 1");
  options_.psn_window = std::clamp<uint32_t>(options_.psn_window, 1, kMaxPsnWindow);
  psn_bits_ = std::bit_ceil(std::max<uint32_t>(options_.psn_window, 64));
  const size_t words = psn_bits_ / 64;
  qps_.resize(options_.queue_pairs.size());
  psn_words_.assign(qps_.size() * words, 0);
  for (size_t i = 0; i < qps_.size(); ++i) {
    Qp& q = qps_[i];
    q.cfg = options_.queue_pairs[i];
    if (!q.cfg.slot_size) q.cfg.slot_size = frame_bytes;
    if (!q.cfg.stride) q.cfg.stride = q.cfg.slot_size;
    if (!q.cfg.slot_size || !q.cfg.slots) bad("queue pair " + std::to_string(q.cfg.qpn) + " has no slot");
    // The window ends within 2^64 (validated): slots x stride fits.
    q.window = uint64_t{q.cfg.slots} * q.cfg.stride;
    q.expected = q.cfg.psn & roce::kPsnMask;
    q.seen = &psn_words_[i * words];
  }
}

void RoceDecoder::decode(std::span<const std::byte>, uint32_t, Decoded& out) const noexcept {
  out.reset();
  out.malformed(kStateless);
}

const RoceCounters* RoceDecoder::counters(uint32_t qpn) const noexcept {
  for (const Qp& q : qps_)
    if (q.cfg.qpn == qpn) return &q.counters;
  return nullptr;
}

std::vector<uint32_t> RoceDecoder::qpns() const {
  std::vector<uint32_t> out;
  for (const Qp& q : qps_) out.push_back(q.cfg.qpn);
  return out;
}

uint32_t RoceDecoder::next_psn(uint32_t qpn) const noexcept {
  for (const Qp& q : qps_)
    if (q.cfg.qpn == qpn) return q.expected;
  return 0;
}

RoceDecoder::Qp* RoceDecoder::find(uint32_t qpn) noexcept {
  if (last_ && last_->cfg.qpn == qpn) return last_;
  for (Qp& q : qps_)
    if (q.cfg.qpn == qpn) return last_ = &q;
  return nullptr;
}

void RoceDecoder::refuse(Qp* q, uint64_t RoceCounters::*counter, const char* why, Decoded& out) noexcept {
  out.malformed(why);
  ++(total_.*counter);
  if (q) ++(q->counters.*counter);
}

void RoceDecoder::accept(Qp& q, uint64_t RoceCounters::*counter) noexcept {
  ++(total_.*counter);
  ++(q.counters.*counter);
}

// nullptr: the ICRC is right; else kHeadersUnreadable or kBadIcrc. A packet in two buffers
// (p.rest not empty) is covered across both; its headers must lie in the first.
const char* RoceDecoder::check_icrc(const PacketBytes& p) const noexcept {
  const std::span<const std::byte> head = p.frame, rest = p.rest;
  // find_udp_payload reads only headers (at most kHeadersInFirstPiece bytes): with a
  // second piece, the first must hold all of them so that it never reads across the gap.
  if (!rest.empty() && head.size() < kHeadersInFirstPiece) return kHeadersUnreadable;
  const detail::UdpPayload u = detail::find_udp_payload(head.data(), static_cast<uint32_t>(head.size() + rest.size()));
  if (!u.ok || u.size < roce::kBthBytes + roce::kIcrcBytes || u.offset > head.size()) return kHeadersUnreadable;
  // The source address lies 12 bytes into an IPv4 header, 8 into an IPv6 one.
  const size_t ip = static_cast<size_t>(u.src_ip - (u.ipv6 ? 8 : 12) - head.data());
  const size_t icrc_at = size_t{u.offset} + u.size - roce::kIcrcBytes;  // in head, then rest
  const std::byte* stored = head.data() + icrc_at;
  std::byte gathered[roce::kIcrcBytes];
  if (icrc_at + roce::kIcrcBytes > head.size()) {  // the ICRC lies in the second piece, or across
    for (size_t i = 0; i < roce::kIcrcBytes; ++i) {
      const size_t at = icrc_at + i;
      gathered[i] = at < head.size() ? head[at] : rest[at - head.size()];
    }
    stored = gathered;
  }
  const size_t in_head = std::min(icrc_at, head.size());
  const uint32_t crc = roce::icrc(head.subspan(ip, in_head - ip), rest.first(icrc_at - in_head));
  return crc == roce::load_icrc(stored) ? nullptr : kBadIcrc;
}

// The PSN against the QP's expected one; records it as received unless a duplicate or stale.
RoceDecoder::Psn RoceDecoder::check_psn(Qp& q, uint32_t psn) noexcept {
  uint32_t ahead = (psn - q.expected) & roce::kPsnMask;
  if (ahead >= kPsnHalf && q.refused_run + 1 >= kResyncAfter) {
    // A restarted sensor: its PSNs start over from here (what it lost before is unknown).
    std::fill_n(q.seen, psn_bits_ / 64, 0);
    q.expected = psn, q.behind_valid = 0, ahead = 0;
    for (Message& m : q.messages) m.valid = false;
    ++q.counters.psn_resyncs, ++total_.psn_resyncs;
  }
  const Psn r = classify_psn(q, psn, ahead);
  q.refused_run = r == Psn::duplicate || r == Psn::stale ? q.refused_run + 1 : 0;
  return r;
}

RoceDecoder::Psn RoceDecoder::classify_psn(Qp& q, uint32_t psn, uint32_t ahead) noexcept {
  if (ahead < kPsnHalf) {
    // New: the `ahead` PSNs skipped are lost until they come; their bits are cleared.
    q.counters.psn_lost += ahead;
    total_.psn_lost += ahead;
    clear_ring(q.seen, psn_bits_, q.expected & (psn_bits_ - 1), std::min(ahead, psn_bits_));
    const uint32_t bit = psn & (psn_bits_ - 1);
    q.seen[bit / 64] |= uint64_t{1} << (bit % 64);
    q.expected = (psn + 1) & roce::kPsnMask;
    q.behind_valid = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{q.behind_valid} + ahead + 1, options_.psn_window));
    return Psn::in_order;
  }
  const uint32_t behind = roce::kPsnMask + 1 - ahead;  // 1 .. 2^23
  if (behind > q.behind_valid) return Psn::stale;
  const uint32_t bit = psn & (psn_bits_ - 1);
  uint64_t& word = q.seen[bit / 64];
  const uint64_t m = uint64_t{1} << (bit % 64);
  if (word & m) return Psn::duplicate;
  word |= m;
  // Counted lost when it was skipped: it is here after all.
  --q.counters.psn_lost, --total_.psn_lost;
  ++q.counters.psn_out_of_order, ++total_.psn_out_of_order;
  return Psn::out_of_order;
}

// The frame of a WRITE to `slot` (the file's comment says how); false: before the first frame.
bool RoceDecoder::frame_of(Qp& q, uint64_t slot, bool in_order, uint64_t* frame) noexcept {
  const uint64_t slots = q.cfg.slots;
  if (!q.any_frame) {
    q.any_frame = true;
    q.newest_ended = false;
    *frame = q.newest = slot;
    return true;
  }
  const uint64_t at = q.newest % slots;
  if (in_order) {
    uint64_t d = (slot + slots - at) % slots;
    if (d == 0 && q.newest_ended) d = slots;
    *frame = q.newest + d;
    if (d) q.newest = *frame, q.newest_ended = false;
    return true;
  }
  const uint64_t back = (at + slots - slot) % slots;
  if (back > q.newest) return false;
  *frame = q.newest - back;
  return true;
}

// The WRITE with immediate ends its frame: the marker, the immediate as an item, and the
// frame's size (the furthest byte written to it, so a marker that is not the last byte holds).
void RoceDecoder::end_frame(Qp& q, uint64_t frame, bool in_order, uint32_t imm, Decoded& out) noexcept {
  out.marker = true;
  if (out.nitems < kMaxItems) out.items[out.nitems++] = Item{roce::kImmediateItem, imm};
  const FrameEnd& e = q.ends[frame % kFrames];
  out.frame_bytes = e.frame == frame ? e.furthest : 0;
  // No bytes with the end (HSB's record, a WRITE with immediate of none): a span of none
  // tells the tracker where the frame ends (SpanTracker::place).
  if (out.nspans == 0) out.nspans = 1, out.spans[0] = Span{frame, out.frame_bytes, 0, 0};
  if (in_order && frame == q.newest) q.newest_ended = true;
  accept(q, &RoceCounters::frames_ended);
}

void RoceDecoder::place_write(Qp& q, const roce::Packet& pk, std::span<const std::byte> first, bool in_order,
                              Decoded& out) noexcept {
  const uint32_t mtu = options_.mtu, psn = pk.bth.psn;
  const Message* m = nullptr;
  Message fresh;
  uint64_t in_message = 0;  // the packet's first byte in its message
  if (pk.has_reth) {
    // WRITE FIRST / ONLY: a message starts; a FIRST is remembered for its MIDDLE and LAST
    // packets, with why it was refused (they count the same).
    fresh.valid = true;
    fresh.first_psn = psn;
    fresh.length = pk.reth.length;
    fresh.packets = static_cast<uint32_t>(std::max<uint64_t>(1, (uint64_t{pk.reth.length} + mtu - 1) / mtu));
    fresh.metadata = options_.metadata_bytes && pk.reth.length == options_.metadata_bytes;
    const uint64_t off = pk.reth.va - q.cfg.base_va;  // wraps for a VA below base_va: then off >= window
    const uint64_t in = off % q.cfg.stride;
    // The record lies anywhere in its slot's stride (HSB: after the frame); frame bytes within slot_size.
    const uint64_t limit = fresh.metadata ? q.cfg.stride : q.cfg.slot_size;
    if (pk.reth.length == 0 && pk.position == roce::Position::only && pk.payload_bytes == 0) {
      // No bytes: neither rkey nor VA is checked (IBTA C9-88, as rxe does; senders may leave
      // them 0). Typically a frame's end (with immediate): the newest frame's.
      fresh.frame = q.newest, fresh.offset = 0;
      if (!q.any_frame) fresh.refused = &RoceCounters::out_of_window, fresh.why = kBeforeFirstFrame;
      m = &fresh;
    } else if (pk.reth.rkey != q.cfg.rkey) fresh.refused = &RoceCounters::bad_rkey, fresh.why = kBadRkey;
    else if (pk.reth.va < q.cfg.base_va || off >= q.window || in > limit || pk.reth.length > limit - in)
      fresh.refused = &RoceCounters::out_of_window, fresh.why = kOutOfWindow;
    else if (pk.position == roce::Position::only && pk.payload_bytes != pk.reth.length)
      fresh.refused = &RoceCounters::malformed, fresh.why = kOnlySize;
    else if (pk.position == roce::Position::first && (pk.payload_bytes != mtu || pk.reth.length <= mtu))
      fresh.refused = &RoceCounters::malformed, fresh.why = kFirstSize;
    else if (!frame_of(q, off / q.cfg.stride, in_order, &fresh.frame))
      fresh.refused = &RoceCounters::out_of_window, fresh.why = kBeforeFirstFrame;
    if (!m) fresh.offset = in;
    if (pk.position == roce::Position::first) {
      q.messages[q.next_message] = fresh;
      q.next_message = (q.next_message + 1) % kMessages;
    }
    m = &fresh;
  } else {
    // WRITE MIDDLE / LAST: the recent message whose PSNs hold it.
    for (const Message& c : q.messages) {
      const uint32_t k = (psn - c.first_psn) & roce::kPsnMask;
      if (c.valid && k >= 1 && k < c.packets) {
        m = &c;
        in_message = uint64_t{k} * mtu;
        break;
      }
    }
    if (!m) return refuse(&q, &RoceCounters::no_first, kNoFirst, out);
    if (!m->refused) {
      const bool last_packet = in_message + mtu >= m->length;
      if (pk.position == roce::Position::middle && (pk.payload_bytes != mtu || last_packet))
        return refuse(&q, &RoceCounters::malformed, kMiddleSize, out);
      if (pk.position == roce::Position::last && (!last_packet || in_message + pk.payload_bytes != m->length))
        return refuse(&q, &RoceCounters::malformed, kLastSize, out);
    }
  }
  if (m->refused) return refuse(&q, m->refused, m->why, out);

  out.verdict = Verdict::data;
  if (m->metadata) {
    // The end-of-window record: the immediate, then its words kept with the frame (a
    // one-packet record only), no byte placed.
    if (pk.has_imm) end_frame(q, m->frame, in_order, pk.imm, out);
    if (pk.has_imm && pk.position == roce::Position::only) {
      const uint32_t in_first =
          first.size() > pk.payload_offset ? static_cast<uint32_t>(first.size() - pk.payload_offset) : 0;
      const uint32_t words = std::min({pk.payload_bytes, in_first}) / 8;
      for (uint32_t i = 0; i < words && i < roce::kMetadataWords; ++i)
        out.items[out.nitems++] = Item{roce::kMetadataItem + i, load_be64(first.data() + pk.payload_offset + 8 * i)};
    }
    return accept(q, &RoceCounters::metadata);
  }
  const uint64_t offset = m->offset + in_message;
  if (pk.payload_bytes) {
    out.nspans = 1;
    out.spans[0] = Span{m->frame, offset, pk.payload_offset, pk.payload_bytes};
    FrameEnd& e = q.ends[m->frame % kFrames];
    if (e.frame != m->frame) e = FrameEnd{m->frame, 0};
    e.furthest = std::max(e.furthest, offset + pk.payload_bytes);
  }
  if (pk.has_imm) end_frame(q, m->frame, in_order, pk.imm, out);
  accept(q, &RoceCounters::placed);
}

void RoceDecoder::decode_packet(const PacketBytes& p, Decoded& out) noexcept {
  out.reset();
  ++total_.packets;
  roce::Packet pk;
  if (const char* why = roce::parse(p.first, p.packet_len, pk)) return refuse(nullptr, &RoceCounters::malformed, why, out);
  if (options_.check_icrc) {
    if (p.frame.empty()) return refuse(nullptr, &RoceCounters::no_headers, kNoHeaders, out);
    if (const char* why = check_icrc(p))
      return refuse(nullptr, why == kBadIcrc ? &RoceCounters::bad_icrc : &RoceCounters::no_headers, why, out);
  }
  Qp* q = find(pk.bth.dest_qp);
  if (!q) return refuse(nullptr, &RoceCounters::unknown_qp, kUnknownQp, out);
  ++q->counters.packets;
  out.has_stream = true;
  out.stream = q->cfg.qpn;
  const Psn psn = check_psn(*q, pk.bth.psn);
  if (psn == Psn::duplicate) return refuse(q, &RoceCounters::psn_duplicate, kDuplicate, out);
  if (psn == Psn::stale) return refuse(q, &RoceCounters::psn_stale, kStale, out);
  if (!pk.write) {
    // SEND ONLY: netdaq posts no receive buffers; the PSN counts, the bytes go nowhere.
    out.verdict = Verdict::control;
    return accept(*q, &RoceCounters::send);
  }
  place_write(*q, pk, p.first, psn == Psn::in_order, out);
}

}  // namespace netdaq::protocols
