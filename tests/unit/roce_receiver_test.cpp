// The software RoCE receiver (src/protocols/roce_receiver.h) and host frames
// (src/frames/host_frames.h): a sensor built from roce::build_frame writes frames as HSB does
// (UC WRITE ONLY per packet, the last with immediate) and as multi-packet messages (FIRST /
// MIDDLE / LAST with immediate at mtu 1024); whole Ethernet frames go through real Packets,
// and every frame must come out byte-identical with exact counters, for losses, duplicates,
// reordering, bad ICRCs, wrong QPs and rkeys, VAs outside the window, PSN and slot wrap.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "frames/host_frames.h"
#include "net/frame_headers.h"
#include "netdaq/burst.h"
#include "protocols/roce.h"
#include "protocols/roce_receiver.h"

namespace netdaq {
namespace {

namespace roce = protocols::roce;
using frames::HostFrame;
using frames::HostFrames;
using protocols::Decoded;
using protocols::RoceCounters;
using protocols::RoceDecoder;
using protocols::Verdict;
using Wire = std::vector<std::byte>;

constexpr uint32_t kQpn = 0x12;
constexpr uint32_t kRkey = 0xC0FFEE;
constexpr uint64_t kBase = 0x7F0000000000;
constexpr uint32_t kMtu = 1024;

// A sensor's queue pair: each packet takes the next PSN.
struct Sensor {
  roce::FrameSpec spec;
  uint32_t psn;
  uint32_t rkey = kRkey;

  explicit Sensor(uint32_t first_psn, uint32_t qpn = kQpn) : psn(first_psn) {
    spec.src_ip = 0x0A000001, spec.dst_ip = 0x0A000002;
    spec.src_mac[5] = 1, spec.dst_mac[5] = 2;
    spec.bth.dest_qp = qpn;
    spec.bth.pkey = roce::kDefaultPkey;
  }
  Wire packet(roce::Opcode op, std::span<const std::byte> payload, uint64_t va = 0, uint32_t length = 0,
              uint32_t imm = 0) {
    spec.bth.opcode = static_cast<uint8_t>(op);
    spec.bth.psn = psn;
    psn = (psn + 1) & roce::kPsnMask;
    spec.reth = roce::Reth{va, rkey, length};
    spec.imm = imm;
    Wire w(roce::frame_bytes(op, static_cast<uint32_t>(payload.size())));
    EXPECT_EQ(roce::build_frame(spec, payload, w), w.size());
    return w;
  }
  // One WRITE message at va: ONLY when it fits the mtu, else FIRST, MIDDLE..., LAST; the last
  // packet with the immediate when imm is set.
  std::vector<Wire> write(uint64_t va, std::span<const std::byte> bytes, std::optional<uint32_t> imm = {}) {
    using O = roce::Opcode;
    const auto len = static_cast<uint32_t>(bytes.size());
    if (len <= kMtu) return {packet(imm ? O::uc_write_only_imm : O::uc_write_only, bytes, va, len, imm.value_or(0))};
    std::vector<Wire> out;
    for (uint32_t at = 0; at < len; at += kMtu) {
      const uint32_t n = std::min(kMtu, len - at);
      const auto part = bytes.subspan(at, n);
      if (at == 0) out.push_back(packet(O::uc_write_first, part, va, len));
      else if (at + n < len) out.push_back(packet(O::uc_write_middle, part));
      else out.push_back(packet(imm ? O::uc_write_last_imm : O::uc_write_last, part, 0, 0, imm.value_or(0)));
    }
    return out;
  }
};

Wire pattern(uint64_t frame, size_t n) {
  Wire b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>((frame * 131 + i * 7 + i / 251) & 0xFF);
  return b;
}

void append(std::vector<Wire>& to, std::vector<Wire> more) {
  for (auto& w : more) to.push_back(std::move(w));
}

// HSB's way: frame f in slot f % slots, one WRITE ONLY per `chunk` bytes, the last with
// immediate f.
std::vector<Wire> hsb_frame(Sensor& s, uint64_t f, uint32_t slots, uint64_t stride, const Wire& bytes, uint32_t chunk) {
  std::vector<Wire> out;
  const uint64_t slot_va = kBase + (f % slots) * stride;
  for (size_t at = 0; at < bytes.size(); at += chunk) {
    const size_t n = std::min<size_t>(chunk, bytes.size() - at);
    const bool last = at + n == bytes.size();
    append(out, s.write(slot_va + at, std::span(bytes).subspan(at, n),
                        last ? std::optional<uint32_t>(static_cast<uint32_t>(f)) : std::nullopt));
  }
  return out;
}

// Decodes a whole frame (its RoCE payload found after the Ethernet/IP/UDP headers) into d.
void decode(RoceDecoder& dec, const Wire& x, Decoded& d) {
  const auto u = detail::find_udp_payload(x.data(), static_cast<uint32_t>(x.size()));
  dec.decode_packet({x, std::span(x).subspan(u.offset), {}, u.size}, d);
}

ReorderConfig roce_config(uint32_t slots, uint64_t slot_size, uint64_t stride = 0, uint32_t psn = 100) {
  ReorderConfig c;
  c.mode = ReorderMode::roce;
  c.max_open_frames = 4;
  c.frame_buffers = 8;
  c.max_streams = 1;
  c.roce.queue_pairs = {RoceQueuePair{kQpn, kRkey, kBase, slots, stride, slot_size, psn}};
  c.roce.mtu = kMtu;
  return c;
}

// Real bursts of whole frames: segment 0 is the UDP payload, the headers kept in front of it
// (as afxdp and dpdk deliver them); split: segment 0 the RoCE headers, segment 1 the rest.
class Bursts final : public detail::BurstOwner {
 public:
  // split_at: packets in two segments from that UDP payload byte; with_headers: the headers
  // readable in front of segment 0 (afxdp multi-buffer), else not (a header-data split).
  RxBurst make(const std::vector<Wire>& wires, size_t from, size_t n, uint32_t split_at = 0, bool with_headers = false) {
    auto* d = new detail::BurstDesc;
    d->pkts = new Packet[n];
    d->count = d->capacity = static_cast<uint32_t>(n);
    d->owner = this;
    for (size_t k = 0; k < n; ++k) {
      const Wire& w = wires[from + k];
      const detail::UdpPayload u = detail::find_udp_payload(w.data(), static_cast<uint32_t>(w.size()));
      EXPECT_TRUE(u.ok);
      auto& f = detail::fields(d->pkts[k]);
      std::byte* payload = const_cast<std::byte*>(w.data()) + u.offset;
      if (split_at && split_at < u.size) {
        f.nseg = 2;
        f.data[0] = payload, f.len[0] = f.cap[0] = split_at;
        f.data[1] = payload + split_at, f.len[1] = f.cap[1] = u.size - split_at;
        if (with_headers) f.l2_len = static_cast<uint16_t>(u.offset);
      } else {
        f.nseg = 1;
        f.data[0] = payload, f.len[0] = f.cap[0] = u.size;
        f.l2_len = static_cast<uint16_t>(u.offset);
      }
    }
    return RxBurst(d);
  }
  void release(detail::BurstDesc* d) noexcept override {
    delete[] d->pkts;
    delete d;
  }
};

struct Got {
  gpu::FrameMeta meta;
  bool complete = false;
  Wire bytes;
  std::vector<bool> present;  // per granule
};

// Feeds the wires in bursts of 7 (bursts end mid-frame), flushes, and collects every frame.
std::vector<Got> run(HostFrames& hf, const std::vector<Wire>& wires, uint32_t split_at = 0, bool with_headers = false,
                     size_t burst = 7) {
  Bursts bursts;
  std::vector<Got> got;
  const auto drain = [&] {
    HostFrame f;
    while (hf.pop(f)) {
      Got g{f.meta, f.complete, Wire(f.data, f.data + f.size), {}};
      for (uint64_t u = 0; u < (f.size + f.granule - 1) / f.granule; ++u) g.present.push_back(f.presence[u / 64] >> (u % 64) & 1);
      got.push_back(std::move(g));
      hf.release(f);
    }
  };
  for (size_t at = 0; at < wires.size(); at += burst) {
    RxBurst b = bursts.make(wires, at, std::min(burst, wires.size() - at), split_at, with_headers);
    hf.receive(b, 0);
    drain();
  }
  hf.flush();
  drain();
  return got;
}

const RoceDecoder& roce_of(const HostFrames& hf) { return dynamic_cast<const RoceDecoder&>(hf.decoder()); }

uint64_t item(const gpu::FrameMeta& m, uint64_t id) {
  for (uint32_t i = 0; i < m.nitems; ++i)
    if (m.items[i].id == id) return m.items[i].value;
  ADD_FAILURE() << "no item " << id;
  return 0;
}

// Every packet under exactly one outcome, in the decoder and in the host frames.
::testing::AssertionResult accounted(const HostFrames& hf, uint64_t sent) {
  const RoceCounters& c = roce_of(hf).counters();
  const auto& t = hf.tracker_stats();
  const auto& h = hf.counters();
  if (c.packets != sent || c.packets != c.placed + c.metadata + c.send + c.dropped())
    return ::testing::AssertionFailure() << "sent " << sent << ", decoder packets " << c.packets << " != placed "
                                         << c.placed << " + metadata " << c.metadata << " + send " << c.send
                                         << " + dropped " << c.dropped();
  if (h.packets != h.control + h.malformed + t.placed + t.duplicate + t.late + t.no_buffer + t.malformed + t.no_stream)
    return ::testing::AssertionFailure() << "host frames: packets " << h.packets << " not accounted";
  return ::testing::AssertionSuccess();
}

// The counters not listed are zero.
struct Expect {
  uint64_t placed = 0, metadata = 0, send = 0, bad_icrc = 0, no_headers = 0, unknown_qp = 0, bad_rkey = 0,
           out_of_window = 0, no_first = 0, psn_duplicate = 0, psn_stale = 0, malformed = 0, psn_lost = 0,
           psn_out_of_order = 0, frames_ended = 0, psn_resyncs = 0;
};
void expect_counters(const RoceCounters& c, const Expect& e) {
  EXPECT_EQ(c.placed, e.placed);
  EXPECT_EQ(c.metadata, e.metadata);
  EXPECT_EQ(c.send, e.send);
  EXPECT_EQ(c.bad_icrc, e.bad_icrc);
  EXPECT_EQ(c.no_headers, e.no_headers);
  EXPECT_EQ(c.unknown_qp, e.unknown_qp);
  EXPECT_EQ(c.bad_rkey, e.bad_rkey);
  EXPECT_EQ(c.out_of_window, e.out_of_window);
  EXPECT_EQ(c.no_first, e.no_first);
  EXPECT_EQ(c.psn_duplicate, e.psn_duplicate);
  EXPECT_EQ(c.psn_stale, e.psn_stale);
  EXPECT_EQ(c.malformed, e.malformed);
  EXPECT_EQ(c.psn_lost, e.psn_lost);
  EXPECT_EQ(c.psn_out_of_order, e.psn_out_of_order);
  EXPECT_EQ(c.frames_ended, e.frames_ended);
  EXPECT_EQ(c.psn_resyncs, e.psn_resyncs);
}

// Frames of 8 KiB as HSB writes them (8 WRITE ONLY of 1 KiB, the last with immediate).
struct HsbStream {
  static constexpr uint32_t kSlots = 3;
  static constexpr uint64_t kFrame = 8192;
  Sensor sensor{100};
  std::vector<Wire> wires;
  std::map<uint64_t, Wire> truth;
  explicit HsbStream(uint64_t frames) {
    for (uint64_t f = 0; f < frames; ++f) {
      truth[f] = pattern(f, kFrame);
      append(wires, hsb_frame(sensor, f, kSlots, kFrame, truth[f], 1024));
    }
  }
};

TEST(roce_sw_receiver, HsbWriteOnlyFramesAreByteIdenticalThroughManySlotWraps) {
  HsbStream s(20);  // 20 frames through 3 slots
  HostFrames hf(roce_config(HsbStream::kSlots, HsbStream::kFrame));
  const auto got = run(hf, s.wires);
  ASSERT_EQ(got.size(), 20u);
  for (uint64_t f = 0; f < 20; ++f) {
    SCOPED_TRACE(f);
    EXPECT_EQ(got[f].meta.frame, f);
    EXPECT_EQ(got[f].meta.stream, kQpn);
    EXPECT_TRUE(got[f].complete);
    EXPECT_EQ(got[f].bytes, s.truth[f]);
    EXPECT_EQ(item(got[f].meta, roce::kImmediateItem), f);
  }
  expect_counters(roce_of(hf).counters(), {.placed = 160, .frames_ended = 20});
  EXPECT_EQ(roce_of(hf).counters(kQpn)->placed, 160u);
  EXPECT_TRUE(accounted(hf, s.wires.size()));
}

TEST(roce_sw_receiver, MultiPacketMessagesAtMtu1024EndTheFrameWithTheImmediate) {
  // Frames of three messages of 2560 bytes (FIRST, MIDDLE, LAST): 7680 of an 8192-byte slot.
  Sensor s(7);
  std::vector<Wire> wires;
  std::map<uint64_t, Wire> truth;
  for (uint64_t f = 0; f < 5; ++f) {
    truth[f] = pattern(f, 7680);
    for (int m = 0; m < 3; ++m)
      append(wires, s.write(kBase + (f % 2) * 8192 + m * 2560, std::span(truth[f]).subspan(m * 2560, 2560),
                            m == 2 ? std::optional<uint32_t>(0xF000 + f) : std::nullopt));
  }
  ASSERT_EQ(wires.size(), 45u);
  HostFrames hf(roce_config(2, 8192, 0, 7));
  const auto got = run(hf, wires);
  ASSERT_EQ(got.size(), 5u);
  for (uint64_t f = 0; f < 5; ++f) {
    SCOPED_TRACE(f);
    EXPECT_EQ(got[f].meta.frame, f);
    EXPECT_EQ(got[f].meta.size, 7680u);  // where the furthest write ended
    EXPECT_TRUE(got[f].complete);
    EXPECT_EQ(got[f].bytes, truth[f]);
    EXPECT_EQ(item(got[f].meta, roce::kImmediateItem), 0xF000 + f);
  }
  expect_counters(roce_of(hf).counters(), {.placed = 45, .frames_ended = 5});
  EXPECT_TRUE(accounted(hf, wires.size()));
}

TEST(roce_sw_receiver, LostPacketIsAPsnGapAndMissingZeroedGranules) {
  HsbStream s(3);
  s.wires.erase(s.wires.begin() + 8 + 3);  // frame 1, bytes [3072, 4096)
  HostFrames hf(roce_config(HsbStream::kSlots, HsbStream::kFrame));
  const auto got = run(hf, s.wires);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(got[0].complete);
  EXPECT_TRUE(got[2].complete);
  EXPECT_FALSE(got[1].complete);
  Wire want = s.truth[1];
  std::fill(want.begin() + 3072, want.begin() + 4096, std::byte{0});
  EXPECT_EQ(got[1].bytes, want);
  for (size_t g = 0; g < got[1].present.size(); ++g) EXPECT_EQ(got[1].present[g], g < 3072 / 8 || g >= 4096 / 8) << g;
  EXPECT_EQ(got[1].meta.bytes_present, 8192u - 1024);
  expect_counters(roce_of(hf).counters(), {.placed = 23, .psn_lost = 1, .frames_ended = 3});
  EXPECT_EQ(hf.tracker_stats().bytes_missing, 1024u);
  EXPECT_TRUE(accounted(hf, s.wires.size()));
}

TEST(roce_sw_receiver, DuplicateIsCountedOnceAndChangesNothing) {
  HsbStream s(2);
  s.wires.insert(s.wires.begin() + 6, s.wires[4]);
  HostFrames hf(roce_config(HsbStream::kSlots, HsbStream::kFrame));
  const auto got = run(hf, s.wires);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].bytes, s.truth[0]);
  EXPECT_TRUE(got[0].complete);
  expect_counters(roce_of(hf).counters(), {.placed = 16, .psn_duplicate = 1, .frames_ended = 2});
  EXPECT_TRUE(accounted(hf, 17));
}

TEST(roce_sw_receiver, ReorderedPacketIsOutOfOrderOnceAndNotLost) {
  HsbStream s(3);
  std::swap(s.wires[9], s.wires[12]);  // frame 1: packet 4 before 1
  // And across a frame boundary: frame 2's first packet before frame 1's immediate.
  std::swap(s.wires[15], s.wires[16]);
  HostFrames hf(roce_config(HsbStream::kSlots, HsbStream::kFrame));
  const auto got = run(hf, s.wires);
  ASSERT_EQ(got.size(), 3u);
  for (uint64_t f = 0; f < 3; ++f) {
    EXPECT_TRUE(got[f].complete) << f;
    EXPECT_EQ(got[f].bytes, s.truth[f]) << f;
  }
  expect_counters(roce_of(hf).counters(), {.placed = 24, .psn_out_of_order = 4, .frames_ended = 3});
  EXPECT_TRUE(accounted(hf, 24));
}

// HostFrames copies a burst's bytes after decoding it, except where the decoder reads the
// whole packet (the ICRC): then each packet's copy goes at once. Frames, presence and
// counters must not depend on it: a loss, a duplicate and a reordering, in bursts of 7 and in
// one burst of more copies than HostFrames holds pending, whole packets and split ones.
TEST(roce_sw_receiver, FramesAreTheSameWhetherCopiesWaitForTheBurstOrNot) {
  HsbStream s(40);                                    // 320 packets
  s.wires.erase(s.wires.begin() + 8 + 3);             // frame 1 loses bytes [3072, 4096)
  s.wires.insert(s.wires.begin() + 30, s.wires[28]);  // a duplicate in frame 3
  std::swap(s.wires[50], s.wires[53]);                // frame 6 reordered: 3 packets behind a newer PSN
  for (const size_t burst : {size_t{7}, s.wires.size()})
    for (const uint32_t split : {0u, 100u}) {
      SCOPED_TRACE(testing::Message() << "burst " << burst << ", split at " << split);
      ReorderConfig c = roce_config(HsbStream::kSlots, HsbStream::kFrame);
      c.frame_buffers = 48;  // one burst of every frame: none is popped before its end
      HostFrames at_once(c);
      c.roce.check_icrc = false;
      HostFrames batched(c);
      const auto want = run(at_once, s.wires, split, true, burst);
      const auto got = run(batched, s.wires, split, true, burst);
      ASSERT_EQ(want.size(), 40u);
      ASSERT_EQ(got.size(), want.size());
      for (size_t f = 0; f < got.size(); ++f) {
        SCOPED_TRACE(f);
        EXPECT_EQ(got[f].meta.frame, f);
        EXPECT_EQ(got[f].complete, f != 1);
        EXPECT_EQ(got[f].complete, want[f].complete);
        EXPECT_EQ(got[f].bytes, want[f].bytes);
        EXPECT_EQ(got[f].present, want[f].present);
        if (f != 1) EXPECT_EQ(got[f].bytes, s.truth[f]);
      }
      const Expect e{.placed = 319, .psn_duplicate = 1, .psn_lost = 1, .psn_out_of_order = 3, .frames_ended = 40};
      expect_counters(roce_of(at_once).counters(), e);
      expect_counters(roce_of(batched).counters(), e);
      EXPECT_TRUE(accounted(batched, s.wires.size()));
    }
}

TEST(roce_sw_receiver, BadIcrcIsItsOwnReasonAndItsPsnIsLost) {
  HsbStream s(2);
  Wire& w = s.wires[2];
  w[w.size() - 100] ^= std::byte{0x10};  // one payload bit
  HostFrames hf(roce_config(HsbStream::kSlots, HsbStream::kFrame));
  const auto got = run(hf, s.wires);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_FALSE(got[0].complete);
  EXPECT_EQ(got[0].meta.bytes_present, 8192u - 1024);
  EXPECT_STREQ(hf.last_reason(), "RoCE: ICRC mismatch");
  expect_counters(roce_of(hf).counters(), {.placed = 15, .bad_icrc = 1, .psn_lost = 1, .frames_ended = 2});
  EXPECT_TRUE(accounted(hf, 16));
}

TEST(roce_sw_receiver, WrongQpAndWrongRkeyAreNeverPlaced) {
  HsbStream s(2);
  Sensor other(5, 0x99);
  const Wire bytes = pattern(9, 1024);
  s.wires.insert(s.wires.begin() + 3, other.write(kBase, bytes)[0]);  // to a QP nobody owns
  // A packet with another rkey takes its PSN in the sensor's sequence: no loss.
  Sensor& sn = s.sensor;
  sn.rkey = kRkey + 1;
  const Wire extra = sn.write(kBase + 8192 * 2, bytes)[0];
  sn.rkey = kRkey;
  s.wires.push_back(extra);
  HostFrames hf(roce_config(HsbStream::kSlots, HsbStream::kFrame));
  const auto got = run(hf, s.wires);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].bytes, s.truth[0]);
  EXPECT_EQ(got[1].bytes, s.truth[1]);
  expect_counters(roce_of(hf).counters(), {.placed = 16, .unknown_qp = 1, .bad_rkey = 1, .frames_ended = 2});
  EXPECT_EQ(roce_of(hf).counters(kQpn)->bad_rkey, 1u);
  EXPECT_EQ(roce_of(hf).counters(kQpn)->unknown_qp, 0u);  // no QP of its own
  EXPECT_EQ(roce_of(hf).counters(0x99), nullptr);
  EXPECT_TRUE(accounted(hf, 18));
}

TEST(roce_sw_receiver, VaOutsideTheWindowOrPastItsSlotIsRefused) {
  Sensor s(0);
  RoceDecoder dec(roce_config(2, 4096, 8192, 0).roce, 4096);
  const Wire bytes = pattern(1, 1024);
  const Wire w[] = {
      s.write(kBase + 2 * 8192, bytes)[0],         // past the last slot
      s.write(kBase - 1024, bytes)[0],             // below base_va
      s.write(kBase + 3584, bytes)[0],             // [3584, 4608) crosses slot_size 4096
      s.write(kBase + 8192 + 4096, bytes)[0],      // between slot_size and stride
      s.write(kBase + 8192 + 3072, bytes)[0],      // the last KiB of slot 1: fine
  };
  Decoded d;
  for (const Wire& x : w) decode(dec, x, d);
  EXPECT_EQ(d.verdict, Verdict::data);
  ASSERT_EQ(d.nspans, 1);
  EXPECT_EQ(d.spans[0].frame, 1u);
  EXPECT_EQ(d.spans[0].offset, 3072u);
  EXPECT_EQ(d.spans[0].bytes, 1024u);
  expect_counters(dec.counters(), {.placed = 1, .out_of_window = 4});
}

TEST(roce_sw_receiver, MiddleAndLastAfterALostFirstAreNoFirst) {
  Sensor s(50);
  const Wire bytes = pattern(3, 3072);
  std::vector<Wire> wires = s.write(kBase, bytes);  // FIRST, MIDDLE, LAST
  append(wires, s.write(kBase + 4096, pattern(4, 2048), 77u));  // FIRST, LAST with immediate
  ASSERT_EQ(wires.size(), 5u);
  wires.erase(wires.begin());  // the FIRST is lost
  HostFrames hf(roce_config(1, 8192, 0, 50));
  const auto got = run(hf, wires);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FALSE(got[0].complete);
  EXPECT_EQ(got[0].meta.size, 6144u);
  Wire want(6144, std::byte{0});
  const Wire second = pattern(4, 2048);
  std::copy(second.begin(), second.end(), want.begin() + 4096);
  EXPECT_EQ(got[0].bytes, want);
  expect_counters(roce_of(hf).counters(), {.placed = 2, .no_first = 2, .psn_lost = 1, .frames_ended = 1});
  EXPECT_TRUE(accounted(hf, 4));
}

TEST(roce_sw_receiver, PsnWrapsAt2To24) {
  // 2 frames from PSN 2^24 - 5: the second frame's PSNs wrap through 0; one of them is lost,
  // one duplicated, and one reordered across the wrap.
  HostFrames hf(roce_config(HsbStream::kSlots, HsbStream::kFrame, 0, 0xFFFFFB));
  Sensor s(0xFFFFFB);
  std::map<uint64_t, Wire> truth;
  std::vector<Wire> wires;
  for (uint64_t f = 0; f < 2; ++f) {
    truth[f] = pattern(f, 8192);
    append(wires, hsb_frame(s, f, HsbStream::kSlots, 8192, truth[f], 1024));
  }
  EXPECT_EQ(s.psn, 11u);  // 16 packets from 0xFFFFFB
  std::swap(wires[4], wires[5]);    // PSNs 0xFFFFFF and 0: 0 arrives first
  wires.push_back(wires[6]);        // PSN 1 again, at the end (still within psn_window)
  wires.erase(wires.begin() + 9);   // PSN 4 lost: frame 1's second KiB
  const auto got = run(hf, wires);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[0].complete);
  EXPECT_EQ(got[0].bytes, truth[0]);
  EXPECT_FALSE(got[1].complete);
  EXPECT_EQ(got[1].meta.bytes_present, 8192u - 1024);
  expect_counters(roce_of(hf).counters(),
                  {.placed = 15, .psn_duplicate = 1, .psn_lost = 1, .psn_out_of_order = 1, .frames_ended = 2});
  EXPECT_TRUE(accounted(hf, 16));
}

TEST(roce_sw_receiver, StaleBehindThePsnWindowAndBeforeTheFirstPsn) {
  ReorderConfig c = roce_config(1, 65536, 0, 1000);
  c.roce.psn_window = 64;
  RoceDecoder dec(c.roce, 65536);
  Sensor early(990);  // before the QP's first PSN
  Sensor s(1000);
  const Wire bytes = pattern(0, 256);
  Decoded d;
  const auto feed = [&](const Wire& x) { decode(dec, x, d); };
  feed(early.write(kBase, bytes)[0]);
  EXPECT_EQ(d.verdict, Verdict::malformed);
  std::vector<Wire> w;
  for (int i = 0; i < 100; ++i) w.push_back(s.write(kBase + 256 * i, bytes)[0]);
  feed(w[0]);
  feed(w[99]);  // 98 lost
  feed(w[1]);   // 98 behind: outside a window of 64
  feed(w[40]);  // 60 behind: late but within the window
  expect_counters(dec.counters(), {.placed = 3, .psn_stale = 2, .psn_lost = 97, .psn_out_of_order = 1});
}

TEST(roce_sw_receiver, RestartedSensorIsFollowedAfterSixteenRefusedPsns) {
  HsbStream s(3);  // PSNs 100..123
  Sensor again(100);  // restarts its PSNs and frames
  std::map<uint64_t, Wire> truth;
  for (uint64_t f = 0; f < 3; ++f) {
    truth[f] = pattern(50 + f, 8192);
    append(s.wires, hsb_frame(again, f, HsbStream::kSlots, 8192, truth[f], 1024));
  }
  HostFrames hf(roce_config(HsbStream::kSlots, HsbStream::kFrame));
  const auto got = run(hf, s.wires);
  // PSNs 100..114 again are duplicates; the 16th (115, its frame 1's immediate) resyncs. Frame
  // numbers go on forward: its frame 1 (slot 1) is frame 4, its frame 2 frame 5.
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[3].meta.frame, 4u);
  EXPECT_FALSE(got[3].complete);
  EXPECT_EQ(got[3].meta.bytes_present, 1024u);
  EXPECT_EQ(got[4].meta.frame, 5u);
  EXPECT_TRUE(got[4].complete);
  EXPECT_EQ(got[4].bytes, truth[2]);
  const RoceCounters& c = roce_of(hf).counters();
  expect_counters(c, {.placed = 33, .psn_duplicate = 15, .frames_ended = 5, .psn_resyncs = 1});
  EXPECT_TRUE(accounted(hf, 48));
}

TEST(roce_sw_receiver, MetadataRecordIsKeptAsItemsNotPlaced) {
  // HSB: each frame's bytes, then a 128-byte record written with immediate after them in the
  // slot (stride 12288 holds frame and record).
  ReorderConfig c = roce_config(2, 8192, 12288);
  c.roce.metadata_bytes = 128;
  HostFrames hf(c);
  Sensor s(100);
  std::vector<Wire> wires;
  std::map<uint64_t, Wire> truth;
  Wire record(128);
  for (uint64_t f = 0; f < 4; ++f) {
    truth[f] = pattern(f, 8192);
    for (uint32_t at = 0; at < 8192; at += 1024)
      append(wires, s.write(kBase + (f % 2) * 12288 + at, std::span(truth[f]).subspan(at, 1024)));
    for (int i = 0; i < 128; ++i) record[i] = static_cast<std::byte>(f * 16 + i);
    append(wires, s.write(kBase + (f % 2) * 12288 + 8192, record, static_cast<uint32_t>(0x100 + f)));
  }
  // The decoder's view of the last record: a span of no bytes where the frame ends, its words as items.
  RoceDecoder dec(c.roce, 8192);
  Decoded d;
  for (const Wire& x : wires) decode(dec, x, d);
  EXPECT_EQ(d.verdict, Verdict::data);
  ASSERT_EQ(d.nspans, 1);
  EXPECT_EQ(d.spans[0].bytes, 0u);
  EXPECT_EQ(d.spans[0].offset, 8192u);
  EXPECT_TRUE(d.marker);
  EXPECT_EQ(d.frame_bytes, 8192u);
  ASSERT_EQ(d.nitems, 1 + roce::kMetadataWords);
  EXPECT_EQ(d.items[0].id, roce::kImmediateItem);
  EXPECT_EQ(d.items[0].value, 0x103u);
  for (unsigned i = 0; i < roce::kMetadataWords; ++i) {
    uint64_t want = 0;
    for (int b = 0; b < 8; ++b) want = want << 8 | ((3 * 16 + 8 * i + b) & 0xFF);
    EXPECT_EQ(d.items[1 + i].id, roce::kMetadataItem + i);
    EXPECT_EQ(d.items[1 + i].value, want) << i;
  }
  expect_counters(dec.counters(), {.placed = 32, .metadata = 4, .frames_ended = 4});
  // Through host frames: the frames are the bytes before the record, which ends each and
  // whose immediate and words come with it.
  const auto got = run(hf, wires);
  ASSERT_EQ(got.size(), 4u);
  for (uint64_t f = 0; f < 4; ++f) {
    EXPECT_TRUE(got[f].complete) << f;
    EXPECT_EQ(got[f].bytes, truth[f]) << f;
    ASSERT_EQ(got[f].meta.nitems, 1 + roce::kMetadataWords) << f;
    EXPECT_EQ(got[f].meta.items[0].id, roce::kImmediateItem);
    EXPECT_EQ(got[f].meta.items[0].value, 0x100 + f);
    EXPECT_EQ(got[f].meta.items[1].id, roce::kMetadataItem);
    EXPECT_EQ(got[f].meta.items[1].value >> 56, f * 16) << f;  // the record's first byte
  }
  EXPECT_EQ(hf.counters().control, 0u);
  EXPECT_TRUE(accounted(hf, 36));
}

TEST(roce_sw_receiver, IcrcNeedsTheFrameUnlessTurnedOff) {
  Sensor s(0);
  const Wire x = s.write(kBase, pattern(0, 512))[0];
  const auto u = detail::find_udp_payload(x.data(), static_cast<uint32_t>(x.size()));
  const auto payload = std::span(x).subspan(u.offset);
  Decoded d;
  ReorderConfig c = roce_config(1, 4096, 0, 0);
  RoceDecoder checked(c.roce, 4096);
  checked.decode_packet({{}, payload, {}, u.size}, d);
  EXPECT_EQ(d.verdict, Verdict::malformed);
  EXPECT_STREQ(d.reason, "RoCE: ICRC check needs the IP header (engine without whole frames)");
  expect_counters(checked.counters(), {.no_headers = 1});
  c.roce.check_icrc = false;
  RoceDecoder unchecked(c.roce, 4096);
  unchecked.decode_packet({{}, payload, {}, u.size}, d);
  EXPECT_EQ(d.verdict, Verdict::data);
  expect_counters(unchecked.counters(), {.placed = 1});
  // decode() alone keeps no PSNs: refused.
  unchecked.decode(payload, u.size, d);
  EXPECT_EQ(d.verdict, Verdict::malformed);
}

// The IP header is found behind a VLAN tag and in IPv6 (the ICRC covers it, not Ethernet).
TEST(roce_sw_receiver, IcrcOverVlanAndIpv6Headers) {
  Sensor s(0);
  const Wire v4 = s.write(kBase, pattern(0, 1024))[0];
  Wire vlan(v4.begin(), v4.begin() + 12);
  const uint8_t tag[] = {0x81, 0x00, 0x00, 0x2A};
  for (uint8_t b : tag) vlan.push_back(std::byte{b});
  vlan.insert(vlan.end(), v4.begin() + 12, v4.end());
  // IPv6: the same UDP datagram behind a 40-byte header, its ICRC computed anew.
  const Wire udp(v4.begin() + 34, v4.end());
  Wire v6(v4.begin(), v4.begin() + 12);
  const uint8_t ip6[] = {0x86, 0xDD, 0x60, 0, 0, 0, static_cast<uint8_t>(udp.size() >> 8),
                         static_cast<uint8_t>(udp.size()), 17, 64};
  for (uint8_t b : ip6) v6.push_back(std::byte{b});
  for (int i = 0; i < 32; ++i) v6.push_back(std::byte{static_cast<uint8_t>(i == 15 ? 1 : i == 31 ? 2 : 0)});
  v6.insert(v6.end(), udp.begin(), udp.end());
  roce::store_icrc(&v6[v6.size() - 4], roce::icrc(std::span(v6).subspan(14, v6.size() - 14 - 4)));

  ReorderConfig c = roce_config(1, 4096, 0, 0);
  Decoded d;
  for (const Wire* x : {&vlan, &v6}) {
    RoceDecoder dec(c.roce, 4096);
    const auto u = detail::find_udp_payload(x->data(), static_cast<uint32_t>(x->size()));
    ASSERT_TRUE(u.ok);
    dec.decode_packet({*x, std::span(*x).subspan(u.offset), {}, u.size}, d);
    EXPECT_EQ(d.verdict, Verdict::data) << d.reason;
    Wire bad = *x;
    bad[bad.size() - 10] ^= std::byte{1};
    dec.decode_packet({bad, std::span(bad).subspan(u.offset), {}, u.size}, d);
    EXPECT_STREQ(d.reason, "RoCE: ICRC mismatch");
    expect_counters(dec.counters(), {.placed = 1, .bad_icrc = 1});
  }
}

TEST(roce_sw_receiver, ZeroLengthWriteWithImmediateEndsTheNewestFrameWithoutRkeyOrVa) {
  // One slot: frames are told apart by their immediates alone.
  RoceDecoder dec(roce_config(1, 4096, 0, 0).roce, 4096);
  Sensor s(0);
  Decoded d;
  const auto feed = [&](const Wire& x) { decode(dec, x, d); };
  feed(s.write(kBase, pattern(0, 3072))[0]);  // its FIRST only
  feed(s.write(kBase + 3072, pattern(0, 512))[0]);
  EXPECT_EQ(d.spans[0].frame, 0u);
  s.rkey = 0;
  feed(s.packet(roce::Opcode::uc_write_only_imm, {}, 0, 0, 0xABCD));  // VA 0, rkey 0, no bytes
  EXPECT_EQ(d.verdict, Verdict::data);
  ASSERT_EQ(d.nspans, 1);  // no bytes: where the frame ends
  EXPECT_EQ(d.spans[0].bytes, 0u);
  EXPECT_EQ(d.spans[0].offset, 3584u);
  EXPECT_TRUE(d.marker);
  EXPECT_EQ(d.frame_bytes, 3584u);
  ASSERT_EQ(d.nitems, 1);
  EXPECT_EQ(d.items[0].value, 0xABCDu);
  s.rkey = kRkey;
  feed(s.write(kBase, pattern(1, 512))[0]);
  EXPECT_EQ(d.spans[0].frame, 1u);  // the next frame in the one slot
  // The FIRST's MIDDLE and LAST never came: lost, and the FIRST alone was placed.
  expect_counters(dec.counters(), {.placed = 4, .psn_lost = 2, .frames_ended = 1});
}

TEST(roce_sw_receiver, SendOnlyIsCountedNotPlaced) {
  Sensor s(0);
  const Wire send = s.packet(roce::Opcode::uc_send_only, pattern(0, 64));
  const Wire write = s.write(kBase, pattern(0, 1024))[0];
  RoceDecoder dec(roce_config(1, 4096, 0, 0).roce, 4096);
  Decoded d;
  for (const Wire* x : {&send, &write}) decode(dec, *x, d);
  expect_counters(dec.counters(), {.placed = 1, .send = 1});  // the SEND's PSN counted: no loss
}

TEST(roce_sw_receiver, HeaderSplitPacketsArePlacedInTwoPieces) {
  // Header-data split at 32 bytes: no headers, so the ICRC is off. A WRITE ONLY's payload
  // (from byte 28) straddles the split: its bytes are copied from both segments.
  HsbStream s(3);
  ReorderConfig c = roce_config(HsbStream::kSlots, HsbStream::kFrame);
  c.roce.check_icrc = false;
  HostFrames hf(c);
  const auto got = run(hf, s.wires, roce::kBthBytes + roce::kRethBytes + roce::kImmBytes);
  ASSERT_EQ(got.size(), 3u);
  for (uint64_t f = 0; f < 3; ++f) {
    EXPECT_EQ(got[f].bytes, s.truth[f]) << f;
    EXPECT_TRUE(got[f].complete);
  }
  EXPECT_EQ(hf.counters().malformed, 0u);
  EXPECT_EQ(hf.tracker_stats().placed, 24u);
  EXPECT_TRUE(accounted(hf, 24));
}

// A frame in two AF_XDP buffers (multi-buffer receive): headers and the payload's start in the
// first, the rest in the second. The ICRC covers both, whichever byte the cut falls on (inside
// the payload, at its end, inside the ICRC itself).
TEST(roce_sw_receiver, TwoBufferPacketsAreCheckedAcrossTheCut) {
  for (uint32_t cut : {100u, 700u, 1024u + 28u, 1024u + 28u + 2u, 1024u + 28u + 3u}) {
    SCOPED_TRACE(cut);
    HsbStream s(3);
    HostFrames hf(roce_config(HsbStream::kSlots, HsbStream::kFrame));
    const auto got = run(hf, s.wires, cut, /*with_headers=*/true);
    ASSERT_EQ(got.size(), 3u);
    for (uint64_t f = 0; f < 3; ++f) {
      EXPECT_EQ(got[f].bytes, s.truth[f]) << f;
      EXPECT_TRUE(got[f].complete);
    }
    expect_counters(roce_of(hf).counters(), {.placed = 24, .frames_ended = 3});
    EXPECT_TRUE(accounted(hf, 24));
  }
}

TEST(roce_sw_receiver, TwoBufferPacketWithABadByteInItsSecondBufferIsBadIcrc) {
  HsbStream s(2);
  s.wires[3][s.wires[3].size() - 100] ^= std::byte{0x40};  // payload byte in the second buffer
  HostFrames hf(roce_config(HsbStream::kSlots, HsbStream::kFrame));
  const auto got = run(hf, s.wires, 600, /*with_headers=*/true);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_FALSE(got[0].complete);
  EXPECT_EQ(got[1].bytes, s.truth[1]);
  expect_counters(roce_of(hf).counters(), {.placed = 15, .bad_icrc = 1, .psn_lost = 1, .frames_ended = 2});
  EXPECT_TRUE(accounted(hf, 16));
}

TEST(roce_sw_receiver, TwoBufferPacketWhoseFirstPieceLacksTheHeadersIsNoHeaders) {
  // 42 header bytes + 40 payload bytes (BTH, RETH, ImmDt inside): an IPv4 header with
  // options could reach past them.
  HsbStream s(1);
  HostFrames hf(roce_config(HsbStream::kSlots, HsbStream::kFrame));
  run(hf, s.wires, 40, /*with_headers=*/true);
  expect_counters(roce_of(hf).counters(), {.no_headers = 8});
  EXPECT_TRUE(accounted(hf, 8));
}

// What FramePipeline holds: make_decoder's roce decoder, called through the Decoder interface.
TEST(roce_sw_receiver, MakeDecoderGivesTheReceiver) {
  ReorderConfig c = roce_config(4, 16384);
  EXPECT_EQ(protocols::frame_bytes_of(c), 16384u);
  EXPECT_EQ(protocols::granule_of(c), 8u);
  const std::unique_ptr<protocols::Decoder> dec = protocols::make_decoder(c);
  Sensor s(100);
  const Wire x = s.write(kBase + 2 * 16384 + 4096, pattern(0, 1024), 5u)[0];
  const auto u = detail::find_udp_payload(x.data(), static_cast<uint32_t>(x.size()));
  Decoded d;
  dec->decode_packet({x, std::span(x).subspan(u.offset), {}, u.size}, d);
  EXPECT_EQ(d.verdict, Verdict::data);
  EXPECT_TRUE(d.has_stream);
  EXPECT_EQ(d.stream, kQpn);
  ASSERT_EQ(d.nspans, 1);
  EXPECT_EQ(d.spans[0].frame, 2u);
  EXPECT_EQ(d.spans[0].offset, 4096u);
  EXPECT_EQ(d.spans[0].packet_offset, roce::kBthBytes + roce::kRethBytes + roce::kImmBytes);
  EXPECT_TRUE(d.marker);
  EXPECT_EQ(d.frame_bytes, 5120u);
}

}  // namespace
}  // namespace netdaq
