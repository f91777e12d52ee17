// Frame bookkeeping of the GPU data plane (CPU only): every packet placed, duplicated, late
// or dropped for want of a buffer, frames closed in order, missing packets in the bitmap.
#include "gpu/host/frame_tracker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "netdaq/status.h"

namespace netdaq::gpu {
namespace {

TrackerConfig cfg(uint32_t ppf, uint32_t open = 2, uint32_t buffers = 4) {
  TrackerConfig c;
  c.packets_per_frame = ppf;
  c.max_open_frames = open;
  c.frame_buffers = buffers;
  c.timeout_ns = 1000;
  return c;
}

std::vector<ClosedFrame> drain(FrameTracker& t, bool release = true) {
  std::vector<ClosedFrame> out;
  ClosedFrame f;
  while (t.pop_closed(&f)) {
    out.push_back(f);
    if (release) t.release_buffer(f.buffer);
  }
  return out;
}

uint64_t accounted(const TrackerStats& s) { return s.placed + s.duplicate + s.late + s.no_buffer; }

TEST(FrameTracker, InOrderPacketsFillFramesSlotBySlot) {
  FrameTracker t(cfg(4));
  std::vector<uint32_t> slots;
  for (uint64_t seq = 0; seq < 12; ++seq) {
    uint32_t s = 0;
    ASSERT_EQ(t.place(seq, 0, &s), Placement::placed);
    slots.push_back(s);
  }
  const auto frames = drain(t);
  ASSERT_EQ(frames.size(), 3u);
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(frames[i].index, i);
    EXPECT_TRUE(frames[i].complete);
    for (uint32_t k = 0; k < 4; ++k) EXPECT_EQ(slots[i * 4 + k], frames[i].buffer * 4 + k);
  }
  EXPECT_EQ(t.stats().frames_complete, 3u);
  EXPECT_EQ(t.open_frames(), 0u);
}

TEST(FrameTracker, ReversedOrderInsideTheWindowStillCompletesInFrameOrder) {
  FrameTracker t(cfg(4));
  std::map<uint64_t, uint32_t> slot_of;
  for (uint64_t seq = 8; seq-- > 0;) ASSERT_EQ(t.place(seq, 0, &slot_of[seq]), Placement::placed);
  const auto frames = drain(t);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].index, 0u);
  EXPECT_EQ(frames[1].index, 1u);
  for (uint64_t seq = 0; seq < 8; ++seq) EXPECT_EQ(slot_of[seq], frames[seq / 4].buffer * 4 + seq % 4);
}

TEST(FrameTracker, CompleteFrameWaitsForTheOlderOneToClose) {
  FrameTracker t(cfg(2, 3));
  uint32_t s;
  t.place(0, 0, &s);           // frame 0 half full
  t.place(2, 0, &s);
  t.place(3, 0, &s);           // frame 1 complete
  EXPECT_TRUE(drain(t).empty());
  t.place(1, 0, &s);           // frame 0 completes: both leave, in order
  const auto frames = drain(t);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].index, 0u);
  EXPECT_EQ(frames[1].index, 1u);
}

TEST(FrameTracker, DuplicatesAndLatePacketsAreCountedNotPlaced) {
  FrameTracker t(cfg(4));
  uint32_t s;
  EXPECT_EQ(t.place(1, 0, &s), Placement::placed);
  EXPECT_EQ(t.place(1, 0, &s), Placement::duplicate);
  for (uint64_t seq : {0, 2, 3}) t.place(seq, 0, &s);   // frame 0 complete and closed
  EXPECT_EQ(t.place(2, 0, &s), Placement::late);
  EXPECT_EQ(t.stats().duplicate, 1u);
  EXPECT_EQ(t.stats().late, 1u);
  EXPECT_EQ(accounted(t.stats()), 6u);
}

TEST(FrameTracker, NewerFramesPushAnIncompleteFrameOutWithItsBitmap) {
  FrameTracker t(cfg(4, 2));
  uint32_t s;
  for (uint64_t seq : {0, 1, 3}) t.place(seq, 0, &s);  // frame 0 misses packet 2
  t.place(4, 0, &s);                                    // frame 1 opens
  EXPECT_TRUE(drain(t, false).empty());
  t.place(8, 0, &s);                                    // frame 2: window holds 1..2, frame 0 closes
  const auto frames = drain(t, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].index, 0u);
  EXPECT_FALSE(frames[0].complete);
  EXPECT_EQ(frames[0].received, 3u);
  EXPECT_EQ(t.presence(frames[0].buffer)[0], 0b1011u);
  EXPECT_EQ(t.stats().packets_missing, 1u);
  EXPECT_EQ(t.stats().frames_incomplete, 1u);
}

TEST(FrameTracker, TimeoutFlushesTheOldestFrame) {
  FrameTracker t(cfg(4));
  uint32_t s;
  t.place(0, 100, &s);
  t.place(5, 600, &s);
  t.expire(1099);
  EXPECT_TRUE(drain(t).empty());
  t.expire(1100);  // frame 0 opened at 100, timeout 1000
  auto frames = drain(t);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].index, 0u);
  t.expire(1600);
  frames = drain(t);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].index, 1u);
  EXPECT_EQ(t.stats().packets_missing, 6u);
  EXPECT_EQ(t.place(1, 1700, &s), Placement::late);
}

TEST(FrameTracker, GapsInTheSequenceCountSkippedFrames) {
  FrameTracker t(cfg(4, 2));
  uint32_t s;
  t.place(0, 0, &s);
  t.place(40, 0, &s);  // frame 10: frames 1..8 got nothing, frame 0 closes incomplete
  EXPECT_EQ(t.stats().frames_skipped, 8u);
  EXPECT_EQ(t.stats().frames_incomplete, 1u);
  t.close_all();
  const auto frames = drain(t);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[1].index, 10u);
}

TEST(FrameTracker, FramesHeldByTheApplicationLeaveNoBufferForNewOnes) {
  FrameTracker t(cfg(2, 1, 1));
  uint32_t s;
  t.place(0, 0, &s);
  t.place(1, 0, &s);                 // frame 0 complete, its buffer now belongs to the app
  ClosedFrame held;
  ASSERT_TRUE(t.pop_closed(&held));
  EXPECT_EQ(t.place(2, 0, &s), Placement::no_buffer);
  EXPECT_EQ(t.place(3, 0, &s), Placement::no_buffer);
  t.release_buffer(held.buffer);
  EXPECT_EQ(t.place(4, 0, &s), Placement::placed);  // frame 2 gets the buffer; frame 1 is dropped
  EXPECT_EQ(t.stats().frames_dropped, 1u);
  EXPECT_EQ(t.stats().no_buffer, 2u);
}

TEST(FrameTracker, NarrowCountersWrapAround) {
  TrackerConfig c = cfg(4, 2);
  c.seq_bits = 16;
  FrameTracker t(c);
  uint32_t s;
  for (uint64_t i = 0; i < 16; ++i) ASSERT_EQ(t.place((65528 + i) & 0xFFFF, 0, &s), Placement::placed) << i;
  const auto frames = drain(t);
  ASSERT_EQ(frames.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(frames[i].complete);
    EXPECT_EQ(frames[i].index, 65528 / 4 + i);
  }
  EXPECT_EQ(t.place(65535, 0, &s), Placement::late);  // from the frame before the wrap
}

TEST(FrameTracker, ArrivalOrderIgnoresTheSequence) {
  TrackerConfig c = cfg(3);
  c.arrival_order = true;
  FrameTracker t(c);
  uint32_t s;
  std::vector<uint32_t> slots;
  for (uint64_t seq : {9, 9, 1, 100, 7, 3}) {
    ASSERT_EQ(t.place(seq, 0, &s), Placement::placed);
    slots.push_back(s);
  }
  const auto frames = drain(t);
  ASSERT_EQ(frames.size(), 2u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(slots[i], frames[i / 3].buffer * 3 + i % 3);
}

TEST(FrameTracker, ArrivalOrderStartsANewFrameAfterATimeout) {
  TrackerConfig c = cfg(3);
  c.arrival_order = true;
  FrameTracker t(c);
  uint32_t s;
  t.place(0, 0, &s);
  t.expire(5000);
  ASSERT_EQ(drain(t).size(), 1u);
  t.place(0, 5000, &s);
  t.place(0, 5000, &s);
  t.place(0, 5000, &s);
  const auto frames = drain(t);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].index, 1u);
  EXPECT_TRUE(frames[0].complete);
}

// The tracker's rules written plainly, for the random test below: frames [base, base + open)
// are open; a packet of an older frame is late, one of a newer frame first closes the frames
// it pushes out of the window (in order; frames never opened after the first one that got a
// packet count as skipped), then frames complete at the base close. Enough buffers that no
// packet lacks one (the test releases each closed frame at once).
struct ReferenceTracker {
  uint32_t ppf, open;
  bool started = false;
  uint64_t base = 0, first = 0;
  std::map<uint64_t, std::set<uint32_t>> frames;  // open frame -> slots that arrived
  std::vector<ClosedFrame> closed;                // in closing order (buffer not modelled)
  TrackerStats st;

  void close_front(uint64_t f) {
    auto it = frames.find(f);
    const uint32_t got = static_cast<uint32_t>(it->second.size());
    const bool complete = got == ppf;
    closed.push_back({f, 0, got, complete});
    complete ? ++st.frames_complete : ++st.frames_incomplete;
    if (!complete) st.packets_missing += ppf - got;
    frames.erase(it);
  }
  void place(uint64_t seq) {
    const uint64_t f = seq / ppf;
    if (!started) {
      started = true;
      base = f >= open - 1 ? f - (open - 1) : 0;
      first = f;
    }
    first = std::min(first, f);
    if (f < base) {
      ++st.late;
      return;
    }
    for (; f >= base + open; ++base) {
      if (frames.count(base))
        close_front(base);
      else if (base > first)
        ++st.frames_skipped;
    }
    if (!frames[f].insert(static_cast<uint32_t>(seq % ppf)).second) {
      ++st.duplicate;
      return;
    }
    ++st.placed;
    for (; frames.count(base) && frames[base].size() == ppf; ++base) close_front(base);
  }
  void close_all() {
    while (!frames.empty()) {
      base = frames.begin()->first + 1;
      close_front(frames.begin()->first);
    }
  }
};

::testing::AssertionResult same_frames(const std::vector<ClosedFrame>& got, const std::vector<ClosedFrame>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " frames closed, the model closed " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].index != want[i].index || got[i].received != want[i].received || got[i].complete != want[i].complete)
      return ::testing::AssertionFailure() << "closed frame #" << i << ": frame " << got[i].index << " with "
                                           << got[i].received << " packets (complete " << got[i].complete
                                           << "), the model: frame " << want[i].index << " with " << want[i].received
                                           << " (complete " << want[i].complete << ")";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_stats(const TrackerStats& a, const TrackerStats& b) {
  const auto row = [](const TrackerStats& s) {
    return std::vector<uint64_t>{s.placed,           s.duplicate,         s.late,           s.no_buffer,     s.frames_complete,
                                 s.frames_incomplete, s.frames_skipped, s.frames_dropped, s.packets_missing};
  };
  if (row(a) == row(b)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "placed, duplicate, late, no_buffer, frames complete, incomplete, skipped, "
                                          "dropped, packets missing: tracker "
                                       << ::testing::PrintToString(row(a)) << ", model "
                                       << ::testing::PrintToString(row(b));
}

// Random displacement smaller than the window, random loss and duplicates: the tracker
// closes the same frames, in the same order, with the same packet counts and statistics as
// the reference model, every placed packet lands in the slot of its own frame, and the same
// frames are still open at the end (then closed by close_all).
TEST(FrameTracker, RandomOrderMatchesAReferenceModel) {
  std::mt19937_64 rng(7);
  uint64_t late_seen = 0, incomplete_seen = 0, hot_placed = 0;
  for (int round = 0; round < 40; ++round) {
    const bool hot = round % 4 >= 2;  // the pipeline's way: place_hot() first, place() when it declines
    const uint32_t ppf = 1 + rng() % 70;
    const uint32_t open = 2 + round % 3;
    FrameTracker t(cfg(ppf, open, 2 * open));
    ReferenceTracker model{ppf, open};
    const uint64_t n = ppf * 40;
    std::vector<uint64_t> seqs;
    uint64_t dups = 0;
    for (uint64_t i = 0; i < n; ++i) {
      if (rng() % 50 == 0) continue;               // lost
      seqs.push_back(i);
      if (rng() % 40 == 0) {                        // duplicated
        seqs.push_back(i);
        ++dups;
      }
    }
    // Shuffle inside aligned blocks of open - 1 frames: displacement stays inside the window.
    // Odd rounds also move a few packets two windows back (late) and as far ahead (they push
    // the window on).
    const uint64_t block = uint64_t{open - 1} * ppf;
    for (size_t i = 0, j = 0; i < seqs.size(); i = j) {
      while (j < seqs.size() && seqs[j] / block == seqs[i] / block) ++j;
      std::shuffle(seqs.begin() + i, seqs.begin() + j, rng);
    }
    if (round % 2) {
      for (size_t i = 3 * size_t{open} * ppf; i < seqs.size(); i += 5 * size_t{open} * ppf)
        std::swap(seqs[i], seqs[i - 2 * size_t{open} * ppf]);
    }
    std::map<uint32_t, std::vector<uint64_t>> by_buffer;  // buffer -> seqs placed there (current frame)
    std::vector<ClosedFrame> got;
    const auto pop_all = [&] {
      ClosedFrame f;
      while (t.pop_closed(&f)) {
        for (uint64_t q : by_buffer[f.buffer]) EXPECT_EQ(q / ppf, f.index);
        EXPECT_EQ(by_buffer[f.buffer].size(), f.received);
        got.push_back(f);
        by_buffer[f.buffer].clear();
        t.release_buffer(f.buffer);
      }
    };
    for (uint64_t seq : seqs) {
      uint32_t s = 0;
      const bool placed_hot = hot && t.place_hot(seq, &s);
      hot_placed += placed_hot;
      if (placed_hot || t.place(seq, 0, &s) == Placement::placed) {
        EXPECT_EQ(s % ppf, seq % ppf);
        by_buffer[s / ppf].push_back(seq);
      }
      model.place(seq);
      pop_all();
    }
    ASSERT_TRUE(same_frames(got, model.closed)) << "round " << round << ", " << ppf << " packets per frame";
    ASSERT_TRUE(same_stats(t.stats(), model.st)) << "round " << round;
    EXPECT_EQ(t.open_frames(), model.frames.size()) << "round " << round;
    EXPECT_EQ(accounted(t.stats()), seqs.size());
    // Without the moved packets, a copy that comes after its frame closed is late and no
    // original ever is.
    if (round % 2 == 0) {
      EXPECT_EQ(t.stats().late + t.stats().duplicate, dups) << "round " << round;
    }
    t.close_all();
    model.close_all();
    pop_all();
    EXPECT_TRUE(same_frames(got, model.closed)) << "round " << round << " after close_all";
    EXPECT_TRUE(same_stats(t.stats(), model.st)) << "round " << round << " after close_all";
    EXPECT_EQ(t.open_frames(), 0u);
    late_seen += model.st.late;
    incomplete_seen += model.st.frames_incomplete;
  }
  // The rounds exercised what the model is for: late packets and incomplete frames.
  EXPECT_GT(late_seen, 0u);
  EXPECT_GT(incomplete_seen, 0u);
  EXPECT_GT(hot_placed, 1000u);
}

TEST(FrameTracker, RefusesImpossibleConfigs) {
  EXPECT_THROW(FrameTracker(cfg(0)), Error);
  EXPECT_THROW(FrameTracker(cfg(4, 4, 2)), Error);
  TrackerConfig c = cfg(4);
  c.seq_bits = 12;
  EXPECT_THROW(FrameTracker{c}, Error);
}

}  // namespace
}  // namespace netdaq::gpu

// packet_bytes / load_uint: the CPU reads sequence numbers across the header-data split.
#include "gpu/host/packet_fields.h"

namespace netdaq::gpu {
namespace {

TEST(PacketFields, FindsBytesInEitherSegmentButNotAcrossThem) {
  std::byte hdr[8], pay[16];
  for (int i = 0; i < 8; ++i) hdr[i] = std::byte(i);
  for (int i = 0; i < 16; ++i) pay[i] = std::byte(100 + i);
  Packet p;
  auto& f = detail::fields(p);
  f.nseg = 2;
  f.data[0] = hdr;
  f.len[0] = 8;
  f.data[1] = pay;
  f.len[1] = 16;
  EXPECT_EQ(packet_bytes(p, 0, 8), hdr);
  EXPECT_EQ(packet_bytes(p, 8, 4), pay);
  EXPECT_EQ(packet_bytes(p, 20, 4), pay + 12);
  EXPECT_EQ(packet_bytes(p, 6, 4), nullptr);   // straddles
  EXPECT_EQ(packet_bytes(p, 22, 4), nullptr);  // beyond the end
  EXPECT_EQ(load_uint(hdr + 1, 2, ByteOrder::big), 0x0102u);
  EXPECT_EQ(load_uint(hdr + 1, 2, ByteOrder::little), 0x0201u);
  EXPECT_EQ(load_uint(hdr, 8, ByteOrder::little), 0x0706050403020100ull);
  EXPECT_EQ(load_uint(hdr + 4, 1, ByteOrder::big), 4u);
}

}  // namespace
}  // namespace netdaq::gpu
