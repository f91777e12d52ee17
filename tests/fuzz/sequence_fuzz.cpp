// libFuzzer target: the GPU data plane's frame bookkeeping on the CPU (src/gpu/host/
// frame_tracker.h, FrameTracker), which turns the sequence numbers in received packets (from
// the sender, untrusted) into frame buffer slots.
//
// The first 5 input bytes make a TrackerConfig (packets_per_frame 0..170, max_open_frames 0..8,
// frame_buffers up to max_open_frames + 8, seq_bits 8/16/32/64 or an invalid 12, sequence or
// arrival order, timeout); an impossible one must throw netdaq::Error (the input ends there).
// The rest is a stream of actions, one byte each (some take more):
//   00..7f  place(previous sequence + byte - 32)      (in order, reordered, duplicated)
//   80..8f  place(previous + (n + 1) windows)         (skips frames; a window: max_open_frames frames)
//   90..97  place(previous - (n + 1) windows, >= 0)   (late)
//   98..9f  place(the next 8 bytes, little-endian)    (any value: wraps of narrow counters)
//   a0..bf  time passes (n x timeout / 8), expire(now)
//   c0..df  pop_closed until none is left: the application takes each frame's buffer
//           (odd: and releases every buffer it holds)
//   e0..ff  release_buffer of the n-th held buffer (none held: of a buffer number past
//           frame_buffers, which must change nothing)
// At the end: close_all, pop_closed until none is left, release everything.
//
// Checked after every action, in every mode:
//   - placed + duplicate + late + no_buffer == packets fed;
//   - free_buffers <= frame_buffers, free_buffers + buffers the application holds <=
//     frame_buffers, open_frames <= max_open_frames;
//   - a placed packet's ring slot lies in a frame buffer the application does not hold, in a
//     slot not yet filled since that buffer was given to a frame;
//   - pop_closed: frames in increasing frame order, each buffer at most once until released,
//     received == popcount of the presence bitmap (exactly the slots placed into that buffer,
//     no bit past packets_per_frame) <= packets_per_frame, complete == (received ==
//     packets_per_frame);
// at the end: every frame closed with a buffer was popped exactly once (frames_complete +
// frames_incomplete frames popped), packets_missing is what the popped incomplete frames lack,
// every placed packet is in a popped frame, no frame is open, and all buffers are free again.
// With 64-bit sequence numbers in sequence order (frame = sequence / packets_per_frame, slot =
// sequence % packets_per_frame), a model of each frame also checks: a placed packet goes to
// slot sequence % packets_per_frame of its frame's one buffer; a frame's first packet is placed
// when a buffer was free and no_buffer when none was, and the frame keeps that; a duplicate is
// a slot already placed; a popped frame is the frame its packets were placed for, and takes no
// packet afterwards; at the end frames_complete + frames_incomplete + frames_dropped == the
// frames that got a packet that was not late, and frames_dropped == those without a buffer.
// Any violation prints what failed and aborts, which libFuzzer reports as a crash; any
// exception other than the constructor's netdaq::Error escapes and aborts as well.
//
// KNOWN BUG, not fixed in src yet (found by this fuzzer): with 64-bit sequence numbers,
// FrameTracker's frame arithmetic wraps for sequence numbers in the last frames below 2^64
// (one packet with such a sequence number will do: untrusted input):
//   - place's fast path, seq - hot_start_ < packets_per_frame: when the hot frame is the
//     partial last frame (hot_start_ + packets_per_frame > 2^64), a small sequence number that
//     belongs to frame 0 (long closed: late) is placed into a slot of that frame instead
//     (packets_per_frame 11: sequence 2^64 - 1, then 0 lands in slot 5);
//   - packets_per_frame 1: base + max_open_frames and first_frame + 1 wrap in place,
//     advance_to, expire and close_all: the window wraps around to frame 0, frames are closed
//     out of frame order, frames_skipped grows by about 2^64, close_all misses the open frames.
// Until it is fixed the harness does not feed sequence numbers in the last 2 x max_open_frames
// + 1 frames below 2^64; NETDAQ_FUZZ_KNOWN_BUGS=1 in the environment feeds them: then the
// seeds sequence_corpus/known_bug_*.bin fail again (and pass once src is fixed).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu/host/frame_tracker.h"
#include "netdaq/status.h"

namespace {

using netdaq::gpu::ClosedFrame;
using netdaq::gpu::FrameTracker;
using netdaq::gpu::Placement;
using netdaq::gpu::TrackerConfig;

// What the tracker was told and what it answered, as far as the harness can know it.
struct Model {
  struct Frame {
    bool has_buffer = false;
    uint32_t buffer = 0;
    bool popped = false;
  };

  TrackerConfig cfg;
  bool modelled = false;             // 64-bit sequence numbers, sequence order: frames known
  uint64_t fed = 0;                  // packets given to place()
  std::vector<uint64_t> bits;        // per buffer: slots placed since it went to a frame
  std::vector<uint32_t> counts;      // per buffer: how many
  std::vector<uint32_t> held;        // buffers popped and not released
  std::vector<bool> is_held;
  bool any_popped = false;
  uint64_t last_popped = 0;          // index of the last popped frame
  uint64_t popped = 0, popped_received = 0, popped_missing = 0;
  std::map<uint64_t, Frame> frames;  // modelled: every frame that got a packet not late
  size_t step = 0;                   // action number, for messages
  uint64_t last_seq = 0;

  uint32_t words() const { return (cfg.packets_per_frame + 63) / 64; }
  bool bit(uint32_t buffer, uint32_t slot) const { return (bits[size_t{buffer} * words() + slot / 64] >> (slot % 64)) & 1; }
};

bool g_known_bugs = false;  // NETDAQ_FUZZ_KNOWN_BUGS=1: no workaround for the known bug above

[[noreturn]] void fail(const char* what, const Model& m, int line) {
  std::fprintf(stderr,
               "sequence_fuzz: %s (action %zu, last sequence %llu; config: packets_per_frame %u, "
               "max_open_frames %u, frame_buffers %u, seq_bits %u, %s order, timeout %llu ns; "
               "sequence_fuzz.cpp:%d)\n",
               what, m.step, static_cast<unsigned long long>(m.last_seq), m.cfg.packets_per_frame,
               m.cfg.max_open_frames, m.cfg.frame_buffers, unsigned{m.cfg.seq_bits},
               m.cfg.arrival_order ? "arrival" : "sequence", static_cast<unsigned long long>(m.cfg.timeout_ns), line);
  std::abort();
}
#define CHECK(cond, m)                     \
  do {                                     \
    if (!(cond)) fail(#cond, m, __LINE__); \
  } while (0)

void check_counts(const FrameTracker& t, const Model& m) {
  const auto& s = t.stats();
  CHECK(s.placed + s.duplicate + s.late + s.no_buffer == m.fed, m);
  CHECK(t.free_buffers() <= m.cfg.frame_buffers, m);
  CHECK(t.free_buffers() + m.held.size() <= m.cfg.frame_buffers, m);
  CHECK(t.open_frames() <= m.cfg.max_open_frames, m);
  CHECK(m.popped <= s.frames_complete + s.frames_incomplete, m);
}

void place(FrameTracker& t, Model& m, uint64_t raw, uint64_t now) {
  const uint32_t ppf = m.cfg.packets_per_frame;
  if (!g_known_bugs && m.cfg.seq_bits == 64 && !m.cfg.arrival_order &&
      raw / ppf >= UINT64_MAX / ppf - 2 * uint64_t{m.cfg.max_open_frames})
    return;  // the known bug: frame arithmetic wraps at 2^64
  const uint32_t free_before = t.free_buffers();
  uint32_t ring = FrameTracker::kNoBuffer;
  m.last_seq = raw;
  const Placement p = t.place(raw, now, &ring);
  ++m.fed;
  CHECK(p == Placement::placed || p == Placement::duplicate || p == Placement::late || p == Placement::no_buffer, m);

  uint32_t buffer = 0, slot = 0;
  if (p == Placement::placed) {
    CHECK(ring < m.cfg.frame_buffers * ppf, m);  // in a frame buffer
    buffer = ring / ppf;
    slot = ring % ppf;
    CHECK(!m.is_held[buffer], m);  // not one the application holds
    CHECK(!m.bit(buffer, slot), m);  // a slot not filled yet
    m.bits[size_t{buffer} * m.words() + slot / 64] |= uint64_t{1} << (slot % 64);
    ++m.counts[buffer];
  }
  if (!m.modelled || p == Placement::late) return;

  const uint64_t frame = raw / ppf;
  const auto it = m.frames.find(frame);
  if (it == m.frames.end()) {
    // The frame's first packet: it opens the frame, with a buffer exactly when one was free.
    if (p == Placement::duplicate) fail("a frame's first packet is a duplicate", m, __LINE__);
    if (p == Placement::no_buffer && free_before != 0) fail("a frame opened without a buffer while one was free", m, __LINE__);
    if (p == Placement::placed && free_before == 0) fail("a frame opened with a buffer while none was free", m, __LINE__);
    if (p == Placement::placed) CHECK(t.free_buffers() + 1 == free_before, m);
    Model::Frame f;
    f.has_buffer = p == Placement::placed;
    f.buffer = buffer;
    m.frames.emplace(frame, f);
  } else {
    const Model::Frame& f = it->second;
    if (f.popped) fail("a packet of a frame already popped is not late", m, __LINE__);
    if (f.has_buffer == (p == Placement::no_buffer)) fail("a frame's buffer changed while it was open", m, __LINE__);
    if (p == Placement::placed) CHECK(buffer == f.buffer, m);
    if (p == Placement::duplicate) CHECK(m.bit(f.buffer, static_cast<uint32_t>(raw % ppf)), m);
  }
  if (p == Placement::placed) CHECK(slot == raw % ppf, m);
}

void pop_all(FrameTracker& t, Model& m) {
  const uint32_t ppf = m.cfg.packets_per_frame;
  ClosedFrame c;
  while (t.pop_closed(&c)) {
    CHECK(c.buffer < m.cfg.frame_buffers, m);
    CHECK(!m.is_held[c.buffer], m);  // popped twice without a release
    CHECK(!m.any_popped || c.index > m.last_popped, m);  // frame order, each frame once
    CHECK(c.received <= ppf, m);
    CHECK(c.complete == (c.received == ppf), m);
    CHECK(c.received == m.counts[c.buffer], m);
    // The presence bitmap: exactly the slots placed into this buffer.
    const uint64_t* bits = t.presence(c.buffer);
    CHECK(t.words_per_frame() == m.words(), m);
    uint32_t ones = 0;
    for (uint32_t w = 0; w < m.words(); ++w) {
      ones += static_cast<uint32_t>(std::popcount(bits[w]));
      CHECK(bits[w] == m.bits[size_t{c.buffer} * m.words() + w], m);
    }
    CHECK(ones == c.received, m);
    if (m.modelled) {
      const auto it = m.frames.find(c.index);
      if (it == m.frames.end()) fail("popped a frame that never got a packet", m, __LINE__);
      CHECK(it->second.has_buffer && it->second.buffer == c.buffer && !it->second.popped, m);
      it->second.popped = true;
    }
    m.any_popped = true;
    m.last_popped = c.index;
    ++m.popped;
    m.popped_received += c.received;
    if (!c.complete) m.popped_missing += ppf - c.received;
    std::fill_n(&m.bits[size_t{c.buffer} * m.words()], m.words(), 0);
    m.counts[c.buffer] = 0;
    m.held.push_back(c.buffer);
    m.is_held[c.buffer] = true;
  }
}

void release(FrameTracker& t, Model& m, size_t k) {
  const uint32_t b = m.held[k];
  m.held.erase(m.held.begin() + static_cast<ptrdiff_t>(k));
  m.is_held[b] = false;
  const uint32_t before = t.free_buffers();
  t.release_buffer(b);
  CHECK(t.free_buffers() == before + 1, m);
}

void release_all(FrameTracker& t, Model& m) {
  while (!m.held.empty()) release(t, m, m.held.size() - 1);
}

// Little-endian integer at `off`, zero past the end.
uint64_t le64(const uint8_t* data, size_t size, size_t off) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && off + i < size; ++i) v |= uint64_t{data[off + i]} << (8 * i);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* known = std::getenv("NETDAQ_FUZZ_KNOWN_BUGS");
  g_known_bugs = known && std::string(known) == "1";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  Model m;
  TrackerConfig& c = m.cfg;
  c.packets_per_frame = data[0] < 200 ? data[0] % 20 : 60 + (data[0] - 200) * 2u;  // 0 (invalid) .. 170
  c.max_open_frames = data[1] % 9;                                                 // 0 (invalid) .. 8
  c.frame_buffers = static_cast<uint32_t>(std::max(0, static_cast<int>(c.max_open_frames) + data[2] % 10 - 1));
  static constexpr uint8_t kBits[] = {8, 16, 32, 64};
  c.seq_bits = (data[3] & 0xf8) == 0xf8 ? 12 : kBits[data[3] & 3];  // 12: invalid
  c.arrival_order = (data[3] & 4) != 0;
  c.timeout_ns = uint64_t{data[4]} * 1000;

  // Impossible configs (and only those) throw netdaq::Error.
  const bool valid = c.packets_per_frame > 0 && c.max_open_frames > 0 && c.frame_buffers >= c.max_open_frames &&
                     c.seq_bits != 12;
  std::unique_ptr<FrameTracker> tracker;
  try {
    tracker = std::make_unique<FrameTracker>(c);
  } catch (const netdaq::Error& e) {
    if (valid) fail(e.what(), m, __LINE__);
    return 0;
  }
  if (!valid) fail("an impossible config was accepted", m, __LINE__);
  FrameTracker& t = *tracker;
  const uint32_t ppf = c.packets_per_frame;
  m.modelled = c.seq_bits == 64 && !c.arrival_order;
  m.bits.assign(size_t{c.frame_buffers} * m.words(), 0);
  m.counts.assign(c.frame_buffers, 0);
  m.is_held.assign(c.frame_buffers, false);
  CHECK(t.free_buffers() == c.frame_buffers && t.open_frames() == 0, m);

  const uint64_t window = uint64_t{ppf} * c.max_open_frames;
  uint64_t now = 1'000'000'000;
  uint64_t seq = 0;
  for (size_t i = 5; i < size; ++m.step) {
    const uint8_t b = data[i++];
    if (b < 0x80) {
      seq += static_cast<uint64_t>(int64_t{b} - 32);
      place(t, m, seq, now);
    } else if (b < 0x90) {
      seq += (b - 0x80 + 1u) * window;
      place(t, m, seq, now);
    } else if (b < 0x98) {
      const uint64_t back = (b - 0x90 + 1u) * window;
      seq = seq > back ? seq - back : 0;
      place(t, m, seq, now);
    } else if (b < 0xa0) {
      seq = le64(data, size, i);
      i += 8;
      place(t, m, seq, now);
    } else if (b < 0xc0) {
      now += (b & 0x1fu) * (c.timeout_ns / 8 + 1);
      t.expire(now);
    } else if (b < 0xe0) {
      pop_all(t, m);
      if (b & 1) release_all(t, m);
    } else if (!m.held.empty()) {
      release(t, m, (b & 0x1fu) % m.held.size());
    } else {
      const uint32_t before = t.free_buffers();
      t.release_buffer(c.frame_buffers + (b & 0x1fu));  // not a buffer: ignored
      CHECK(t.free_buffers() == before, m);
    }
    check_counts(t, m);
  }

  // End of stream: every open frame closes, the application takes and returns them all.
  t.close_all();
  pop_all(t, m);
  check_counts(t, m);
  const auto& s = t.stats();
  CHECK(t.open_frames() == 0, m);
  CHECK(!t.has_closed(), m);
  CHECK(m.popped == s.frames_complete + s.frames_incomplete, m);
  CHECK(m.popped_missing == s.packets_missing, m);
  CHECK(m.popped_received == s.placed, m);  // every placed packet is in a popped frame
  CHECK(t.free_buffers() + m.held.size() == c.frame_buffers, m);
  if (m.modelled) {
    uint64_t without = 0;
    for (const auto& [index, f] : m.frames) {
      if (f.has_buffer && !f.popped) fail("a frame with a buffer was never popped", m, __LINE__);
      without += !f.has_buffer;
    }
    CHECK(s.frames_complete + s.frames_incomplete + s.frames_dropped == m.frames.size(), m);
    CHECK(s.frames_dropped == without, m);
  }
  release_all(t, m);
  CHECK(t.free_buffers() == c.frame_buffers, m);
  return 0;
}
